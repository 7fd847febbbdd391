"""Stage 2: asking models. Prompts are rendered from rows of the requests marts, providers
(OpenAI, Anthropic, OpenAI-compatible servers, replay, labelled simulators) answer, and the
runner appends every call and reply exactly once: to the runs' store (ingest/collect) when a
command runs it, which the next build brings into the raw tables."""
