"""oracleproto: reproducible benchmarking of LLM native forecasting.

The public API is re-exported here and listed in ``__all__`` (tested); other code and
users depend on these names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oracleproto._lazy import export_dir, load_export
from oracleproto._version import __version__
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

if TYPE_CHECKING:
    from oracleproto.agent import SampleResult, run_sample
    from oracleproto.analysis import AnalysisResult, Convention, analyze_run
    from oracleproto.dataset.admission import Admission, admissible
    from oracleproto.dataset.loader import load_questions, load_templates
    from oracleproto.dataset.models import PromptTemplates, Question
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
    from oracleproto.scoring.parser import Belief, clip_probability, parse_answer, parse_belief
    from oracleproto.settings.model import Settings, load_settings
    from oracleproto.sim import FaultConfig, SimConfig, Simulator
    from oracleproto.store import Manifest, ModelStore, RunDir, RunMeta, logical_dump
    from oracleproto.transport import RecordReplay, rebuild_index
    from oracleproto.verify import VerifyReport, export_bundle, import_bundle, verify_run

# Each public name and the module that defines it, imported on first use (PEP 562).
_EXPORTS = {
    "SampleResult": "oracleproto.agent",
    "run_sample": "oracleproto.agent",
    "AnalysisResult": "oracleproto.analysis",
    "Convention": "oracleproto.analysis",
    "analyze_run": "oracleproto.analysis",
    "Admission": "oracleproto.dataset.admission",
    "admissible": "oracleproto.dataset.admission",
    "load_questions": "oracleproto.dataset.loader",
    "load_templates": "oracleproto.dataset.loader",
    "PromptTemplates": "oracleproto.dataset.models",
    "Question": "oracleproto.dataset.models",
    "Belief": "oracleproto.scoring.parser",
    "clip_probability": "oracleproto.scoring.parser",
    "parse_answer": "oracleproto.scoring.parser",
    "parse_belief": "oracleproto.scoring.parser",
    "RuntimeProtocols": "oracleproto.prompts",
    "prompt_templates_hash": "oracleproto.prompts",
    "render_prompt": "oracleproto.prompts",
    "FilteredSearch": "oracleproto.providers",
    "LeakDetector": "oracleproto.providers",
    "OpenAIChatClient": "oracleproto.providers",
    "TavilyKeyPool": "oracleproto.providers",
    "TavilySearch": "oracleproto.providers",
    "classify_error": "oracleproto.providers",
    "parse_verdict": "oracleproto.providers",
    "Settings": "oracleproto.settings.model",
    "load_settings": "oracleproto.settings.model",
    "FaultConfig": "oracleproto.sim",
    "SimConfig": "oracleproto.sim",
    "Simulator": "oracleproto.sim",
    "Manifest": "oracleproto.store",
    "ModelStore": "oracleproto.store",
    "RunDir": "oracleproto.store",
    "RunMeta": "oracleproto.store",
    "logical_dump": "oracleproto.store",
    "RecordReplay": "oracleproto.transport",
    "rebuild_index": "oracleproto.transport",
    "VerifyReport": "oracleproto.verify",
    "export_bundle": "oracleproto.verify",
    "import_bundle": "oracleproto.verify",
    "verify_run": "oracleproto.verify",
}

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


def __getattr__(name: str) -> Any:
    return load_export(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return export_dir(globals(), _EXPORTS)
