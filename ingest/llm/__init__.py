"""Stage 2: asking models. Prompts are rendered from rows of the requests marts, providers
(OpenAI, Anthropic, OpenAI-compatible servers, replay, labelled simulators) answer, and the
runner appends every call and reply to raw tables exactly once."""
