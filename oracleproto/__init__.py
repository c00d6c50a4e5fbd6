"""oracleproto: reproducible benchmarking of LLM native forecasting.

The public API is re-exported here and listed in ``__all__`` (tested); other code and
users depend on these names.
"""

from __future__ import annotations

from oracleproto.analysis import AnalysisResult, Convention, analyze_run
from oracleproto.dataset.models import PromptTemplates, Question
from oracleproto.errors import (
    AnalysisError,
    AuthError,
    CallFailedError,
    ConfigError,
    DatasetError,
    ErrorKind,
    OracleprotoError,
)
from oracleproto.settings import Settings, load_settings

__version__ = "0.1.0.dev0"

__all__ = [
    "AnalysisError",
    "AnalysisResult",
    "AuthError",
    "CallFailedError",
    "ConfigError",
    "Convention",
    "DatasetError",
    "ErrorKind",
    "OracleprotoError",
    "PromptTemplates",
    "Question",
    "Settings",
    "__version__",
    "analyze_run",
    "load_settings",
]
