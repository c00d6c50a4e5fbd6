"""oracleproto: reproducible benchmarking of LLM native forecasting.

The public API is re-exported here and listed in ``__all__`` (tested); other code and
users depend on these names.
"""

from __future__ import annotations

from oracleproto._version import __version__
from oracleproto.agent import SampleResult, run_sample
from oracleproto.analysis import AnalysisResult, Convention, analyze_run
from oracleproto.dataset.admission import Admission, admissible
from oracleproto.dataset.loader import load_questions, load_templates
from oracleproto.dataset.models import PromptTemplates, Question
from oracleproto.errors import (
    AnalysisError,
    AuthError,
    CallFailedError,
    CassetteIntegrityError,
    ConfigError,
    DatasetError,
    ErrorKind,
    OracleprotoError,
    ProviderUnavailableError,
    QuotaError,
    ReplayMissError,
    RunStoppedError,
    SampleContextError,
    StoreError,
)
from oracleproto.parser import Belief, clip_probability, parse_answer, parse_belief
from oracleproto.prompts import RuntimeProtocols, prompt_templates_hash, render_prompt
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
from oracleproto.sim import FaultConfig, SimConfig, Simulator
from oracleproto.store import Manifest, ModelStore, RunDir, RunMeta, logical_dump
from oracleproto.transport import RecordReplay, rebuild_index
from oracleproto.verify import VerifyReport, export_bundle, import_bundle, verify_run

__all__ = [
    "Admission",
    "AnalysisError",
    "AnalysisResult",
    "AuthError",
    "Belief",
    "CallFailedError",
    "CassetteIntegrityError",
    "ConfigError",
    "Convention",
    "DatasetError",
    "ErrorKind",
    "FaultConfig",
    "FilteredSearch",
    "LeakDetector",
    "Manifest",
    "ModelStore",
    "OpenAIChatClient",
    "OracleprotoError",
    "PromptTemplates",
    "ProviderUnavailableError",
    "Question",
    "QuotaError",
    "RecordReplay",
    "ReplayMissError",
    "RunDir",
    "RunMeta",
    "RunStoppedError",
    "RuntimeProtocols",
    "SampleContextError",
    "SampleResult",
    "Settings",
    "SimConfig",
    "Simulator",
    "StoreError",
    "TavilyKeyPool",
    "TavilySearch",
    "VerifyReport",
    "__version__",
    "admissible",
    "analyze_run",
    "classify_error",
    "clip_probability",
    "export_bundle",
    "import_bundle",
    "load_questions",
    "load_settings",
    "load_templates",
    "logical_dump",
    "parse_answer",
    "parse_belief",
    "parse_verdict",
    "prompt_templates_hash",
    "rebuild_index",
    "render_prompt",
    "run_sample",
    "verify_run",
]
