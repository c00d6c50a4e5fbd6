"""Record/replay transport: one content-addressed cache for llm, search and detector traffic."""
