"""oracleproto: reproducible benchmarking of LLM native forecasting.

The public API is re-exported here and listed in ``__all__`` (tested); other code and
users depend on these names.
"""

from __future__ import annotations

from oracleproto.agent import SampleResult, run_sample
from oracleproto.dataset.models import PromptTemplates, Question
from oracleproto.errors import (
    AuthError,
    CallFailedError,
    ConfigError,
    DatasetError,
    ErrorKind,
    OracleprotoError,
)
from oracleproto.parser import Belief, clip_probability, parse_answer, parse_belief
from oracleproto.settings import Settings, load_settings

__version__ = "0.1.0.dev0"

__all__ = [
    "AuthError",
    "Belief",
    "CallFailedError",
    "ConfigError",
    "DatasetError",
    "ErrorKind",
    "OracleprotoError",
    "PromptTemplates",
    "Question",
    "SampleResult",
    "Settings",
    "__version__",
    "clip_probability",
    "load_settings",
    "parse_answer",
    "parse_belief",
    "run_sample",
]
