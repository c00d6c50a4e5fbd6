"""Provider channels: OpenAI-compatible LLM client, time-masked Tavily search, leak detector."""

from __future__ import annotations

from oracleproto.providers.classify import classify_error, classify_status
from oracleproto.providers.detector import LeakDetector, Verdict, detector_prompt_hash, parse_verdict
from oracleproto.providers.filtered import FilteredSearch
from oracleproto.providers.keypool import TavilyKeyPool
from oracleproto.providers.llm import OpenAIChatClient
from oracleproto.providers.search import TavilySearch
from oracleproto.providers.tools import WEB_SEARCH_SCHEMA

__all__ = [
    "WEB_SEARCH_SCHEMA",
    "FilteredSearch",
    "LeakDetector",
    "OpenAIChatClient",
    "TavilyKeyPool",
    "TavilySearch",
    "Verdict",
    "classify_error",
    "classify_status",
    "detector_prompt_hash",
    "parse_verdict",
]
