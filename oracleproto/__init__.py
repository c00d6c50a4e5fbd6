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
    StoreError,
)
from oracleproto.settings import Settings, load_settings
from oracleproto.store import Manifest, ModelStore, RunDir, RunMeta, logical_dump

__version__ = "0.1.0.dev0"

__all__ = [
    "AuthError",
    "CallFailedError",
    "ConfigError",
    "DatasetError",
    "ErrorKind",
    "Manifest",
    "ModelStore",
    "OracleprotoError",
    "PromptTemplates",
    "Question",
    "RunDir",
    "RunMeta",
    "Settings",
    "StoreError",
    "__version__",
    "load_settings",
    "logical_dump",
]
