"""Provider channels: OpenAI-compatible LLM client, time-masked Tavily search, leak detector."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oracleproto._lazy import export_dir, load_export

if TYPE_CHECKING:
    from oracleproto.providers.classify import classify_error, classify_status
    from oracleproto.providers.detector import LeakDetector, Verdict, detector_prompt_hash, parse_verdict
    from oracleproto.providers.filtered import FilteredSearch
    from oracleproto.providers.keypool import TavilyKeyPool
    from oracleproto.providers.llm import OpenAIChatClient
    from oracleproto.providers.search import TavilySearch
    from oracleproto.providers.tools import WEB_SEARCH_SCHEMA

# Each public name and the module that defines it, imported on first use (PEP 562).
_EXPORTS = {
    "classify_error": "oracleproto.providers.classify",
    "classify_status": "oracleproto.providers.classify",
    "LeakDetector": "oracleproto.providers.detector",
    "Verdict": "oracleproto.providers.detector",
    "detector_prompt_hash": "oracleproto.providers.detector",
    "parse_verdict": "oracleproto.providers.detector",
    "FilteredSearch": "oracleproto.providers.filtered",
    "TavilyKeyPool": "oracleproto.providers.keypool",
    "OpenAIChatClient": "oracleproto.providers.llm",
    "TavilySearch": "oracleproto.providers.search",
    "WEB_SEARCH_SCHEMA": "oracleproto.providers.tools",
}

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


def __getattr__(name: str) -> Any:
    return load_export(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return export_dir(globals(), _EXPORTS)
