"""Settings that point a run at a running simulator (``oracleproto sim run``, tests, benchmarks).

Built with ``model_validate`` so nothing leaks in from the caller's environment or ``.env``:
a simulated run with the same arguments is the same run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from oracleproto.settings.model import (
    AnalysisSettings,
    DetectorSettings,
    LLMSettings,
    ReactSettings,
    RunSettings,
    SearchSettings,
    Settings,
)
from oracleproto.sim.personas import DETECTOR_SLUG, PERSONAS, REPLICA_MARK, REPLICAS, replica_slugs

#: Simulated models in the order ``--models N`` takes them, with their training cutoffs.
#: The last one's cutoff falls inside the demo dataset's range, so admission excludes some questions.
SIM_MODELS: tuple[tuple[str, str], ...] = (
    ("sim/careful", "2026-01"),
    ("sim/hasty", "2025-12-15"),
    ("sim/sloppy", "2026-03-20"),
    ("sim/greedy", "2026-02"),
    ("sim/oracle", "2025-11"),
    ("sim/random", "2026-02-10"),
)
#: Fake credentials the simulator accepts (it answers 401 only for keys it is told are revoked).
SIM_LLM_KEY = "sim-llm-key-0001"
SIM_TAVILY_KEY = "sim-tavily-key-0001"
#: A key of the detector's own (``LEAK_DETECTOR_API_KEY``), used only when a spec asks for one
#: (``sim run --revoke-detector-key``): otherwise the detector shares the LLM key, as before.
SIM_DETECTOR_KEY = "sim-detector-key-0001"
#: The simulated Tavily bills like Tavily's pay-as-you-go plan, so simulated runs (the demo among
#: them) price their searches in Table 3's "with tools" columns.
SIM_TAVILY_USD_PER_CREDIT = 0.008


class SimEndpoints(Protocol):
    """Where a simulator answers: an in-process ``Simulator`` or one served elsewhere."""

    @property
    def llm_base_url(self) -> str:
        """OpenAI-compatible base URL."""
        ...

    @property
    def search_base_url(self) -> str:
        """Tavily-compatible base URL."""
        ...


@dataclass(frozen=True)
class ServedSimulator:
    """A simulator served at ``base_url`` by another process (``sim serve``) or a test server."""

    base_url: str

    @property
    def llm_base_url(self) -> str:
        """OpenAI-compatible base URL."""
        return self.base_url + "/v1"

    @property
    def search_base_url(self) -> str:
        """Tavily-compatible base URL."""
        return self.base_url


@dataclass(frozen=True)
class SimRunSpec:
    """What ``sim run`` varies."""

    models: int = 3
    samples: int = 3
    runs_root: Path = Path("runs")
    detector: bool = True
    #: Scale applied to every backoff and cooldown so fault-injection runs do not wait minutes.
    backoff_scale: float = 0.001
    llm_key: str = SIM_LLM_KEY
    #: Persona names to run instead of the first ``models`` (e.g. ``("careful", "random")``).
    personas: tuple[str, ...] = ()
    #: One training cutoff for every model (``YYYY-MM[-DD]``) instead of the built-in ones.
    training_cutoff: str | None = None
    #: ``CIRCUIT_BREAKER_CALLS``; a deliberate 100 % network-fault run sets 0 to store every failure.
    circuit_breaker_calls: int = 8
    #: ``LEAK_DETECTOR_API_KEY`` (None: the detector uses the LLM key).
    detector_key: str | None = None


#: Most simulated models a run can have: every persona and its replicas (``sim/careful-r2`` …).
MAX_SIM_MODELS = REPLICAS * len(SIM_MODELS)


def sim_models(count: int) -> list[tuple[str, str]]:
    """The first ``count`` simulated models with their cutoffs.

    Past the six personas come their replicas, round by round (``sim/careful-r2``, ``sim/hasty-r2``,
    …, ``sim/random-r5``), each with its persona's cutoff: a 30-model panel the size of the paper's.
    """
    if not 1 <= count <= MAX_SIM_MODELS:
        raise ValueError(f"--models must be between 1 and {MAX_SIM_MODELS}, got {count}")
    cutoffs = {slug.removeprefix("sim/"): cutoff for slug, cutoff in SIM_MODELS}
    replicas = [(slug, cutoffs[slug[4:].rpartition(REPLICA_MARK)[0]]) for slug in replica_slugs()]
    return [*SIM_MODELS, *replicas][:count]


def spec_models(spec: SimRunSpec) -> list[tuple[str, str]]:
    """The (slug, training cutoff) pairs a spec runs."""
    if spec.personas:
        unknown = [p for p in spec.personas if p not in PERSONAS]
        if unknown:
            raise ValueError(f"unknown persona(s) {', '.join(unknown)}; known: {', '.join(PERSONAS)}")
        cutoffs = dict(SIM_MODELS)
        models = [(f"sim/{p}", cutoffs[f"sim/{p}"]) for p in spec.personas]
    else:
        models = sim_models(spec.models)
    if spec.training_cutoff is not None:
        models = [(slug, spec.training_cutoff) for slug, _ in models]
    return models


def simulated_settings(sim: SimEndpoints, spec: SimRunSpec) -> Settings:
    """Settings for recording against ``sim`` (live mode, seeded sampling)."""
    models = spec_models(spec)
    scale = spec.backoff_scale

    def scaled(values: list[float]) -> list[float]:
        return [v * scale for v in values]

    defaults_llm = LLMSettings.from_values({})
    defaults_search = SearchSettings.from_values({})
    defaults_detector = DetectorSettings.from_values({})
    llm = LLMSettings.from_values(
        {
            "base_url": sim.llm_base_url,
            "api_key": spec.llm_key,
            "models": [m for m, _ in models],
            "training_cutoffs": dict(models),
            "send_seed": True,
            "backoff_network_s": scaled(defaults_llm.backoff_network_s),
            "backoff_rate_limit_s": scaled(defaults_llm.backoff_rate_limit_s),
            "backoff_server_5xx_s": scaled(defaults_llm.backoff_server_5xx_s),
            "timeout_s": 10.0,
        }
    )
    search = SearchSettings.from_values(
        {
            "api_keys": [SIM_TAVILY_KEY],
            "base_url": sim.search_base_url,
            "backoff_s": scaled(defaults_search.backoff_s),
            "key_cooldown_s": defaults_search.key_cooldown_s * scale,
            "timeout_s": 10.0,
        }
    )
    detector = DetectorSettings.from_values(
        {
            "enabled": spec.detector,
            "model": DETECTOR_SLUG,
            **({"api_key": spec.detector_key} if spec.detector_key is not None else {}),
            "backoff_s": scaled(defaults_detector.backoff_s),
            "timeout_s": 10.0,
        }
    )
    run = RunSettings.from_values(
        {
            "sampling_n": spec.samples,
            "runs_root": spec.runs_root,
            "mode": "record",
            "circuit_breaker_calls": spec.circuit_breaker_calls,
        }
    )
    return Settings(
        llm=llm,
        search=search,
        detector=detector,
        react=ReactSettings.from_values({}),
        run=run,
        analysis=AnalysisSettings.from_values({"tavily_usd_per_credit": SIM_TAVILY_USD_PER_CREDIT}),
    )
