"""Provider channels: OpenAI-compatible LLM client, time-masked Tavily search, leak detector."""
