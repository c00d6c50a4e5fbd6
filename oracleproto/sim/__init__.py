"""Provider simulator: OpenAI-compatible chat and Tavily-compatible search on loopback."""
