"""oracleproto: reproducible benchmarking of LLM native forecasting.

The public API is re-exported here and listed in ``__all__`` (tested); other code and
users depend on these names.
"""

from __future__ import annotations

from oracleproto.dataset.models import PromptTemplates, Question
from oracleproto.errors import (
    AuthError,
    CallFailedError,
    CassetteIntegrityError,
    ConfigError,
    DatasetError,
    ErrorKind,
    OracleprotoError,
    ReplayMissError,
    SampleContextError,
)
from oracleproto.settings import Settings, load_settings
from oracleproto.transport import RecordReplay, rebuild_index

__version__ = "0.1.0.dev0"

__all__ = [
    "AuthError",
    "CallFailedError",
    "CassetteIntegrityError",
    "ConfigError",
    "DatasetError",
    "ErrorKind",
    "OracleprotoError",
    "PromptTemplates",
    "Question",
    "RecordReplay",
    "ReplayMissError",
    "SampleContextError",
    "Settings",
    "__version__",
    "load_settings",
    "rebuild_index",
]
