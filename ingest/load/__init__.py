"""Stage 1: files into the raw schema (cases, TTS, questions, responses, HindsightBench releases),
checked by Great Expectations suites before dbt sees them."""
