"""oracleproto: reproducible benchmarking of LLM native forecasting.

The public API is re-exported here and listed in ``__all__`` (tested); other code and
users depend on these names.
"""

from __future__ import annotations

from oracleproto.dataset.admission import Admission, admissible
from oracleproto.dataset.loader import load_questions, load_templates
from oracleproto.dataset.models import PromptTemplates, Question
from oracleproto.errors import (
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
    "Admission",
    "AuthError",
    "CallFailedError",
    "ConfigError",
    "DatasetError",
    "ErrorKind",
    "OracleprotoError",
    "PromptTemplates",
    "Question",
    "Settings",
    "__version__",
    "admissible",
    "load_questions",
    "load_settings",
    "load_templates",
]
