"""oracleproto: reproducible benchmarking of LLM native forecasting.

The public API is re-exported here and listed in ``__all__`` (tested); other code and
users depend on these names.
"""

from __future__ import annotations

from oracleproto.dataset.models import PromptTemplates, Question
from oracleproto.errors import (
    AuthError,
    CallFailedError,
    ConfigError,
    DatasetError,
    ErrorKind,
    OracleprotoError,
)
from oracleproto.providers import (
    FilteredSearch,
    LeakDetector,
    OpenAIChatClient,
    TavilyKeyPool,
    TavilySearch,
    classify_error,
    parse_verdict,
)
from oracleproto.settings import Settings, load_settings

__version__ = "0.1.0.dev0"

__all__ = [
    "AuthError",
    "CallFailedError",
    "ConfigError",
    "DatasetError",
    "ErrorKind",
    "FilteredSearch",
    "LeakDetector",
    "OpenAIChatClient",
    "OracleprotoError",
    "PromptTemplates",
    "Question",
    "Settings",
    "TavilyKeyPool",
    "TavilySearch",
    "__version__",
    "classify_error",
    "load_settings",
    "parse_verdict",
]
