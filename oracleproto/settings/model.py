"""Settings, grouped in sections, read from the environment and ``.env``.

Environment variable names are the paper's (``LLM_BASE_URL``, ``MODELS``,
``TAVILY_API_KEY``, …) so an existing ``.env`` keeps working; every field says which
variable sets it. Sections are plain pydantic models built by :func:`load_settings`;
code receives the section it needs, never a global.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
)
from pydantic_settings import NoDecode

from oracleproto.errors import ConfigError
from oracleproto.settings.checks import check_key, error_line, keys_in_urls, redact_snapshot, url_problem
from oracleproto.settings.display_names import display_name_problems
from oracleproto.settings.grid import reconcile_grid
from oracleproto.settings.section import CONFIG_VALUES, SettingsSection
from oracleproto.settings.values import (
    FloatList,
    SecretList,
    StrList,
    StrMap,
    check_env_file,
    empty_is_none,
    split_list,
    split_mapping,
)

CacheMode = Literal["replay", "record", "refresh"]
Convention = Literal["paper", "reference-v4"]
#: Answer parser Ψ: the paper's Algorithm 2, or ⊥ for several letters on a single-answer question.
AnswerParser = Literal["algorithm2", "strict"]

ONLINE_SUFFIX = ":online"


def _env(*names: str) -> Any:
    return AliasChoices(*names)


class LLMSettings(SettingsSection):
    """The main-LLM channel (paper Table 10 and App. B.4)."""

    CONFIG_SECTION: ClassVar[str] = "llm"

    base_url: str | None = Field(None, validation_alias=_env("LLM_BASE_URL"))
    """OpenAI-compatible base URL; ``/chat/completions`` is appended. ``LLM_BASE_URL``."""
    api_key: SecretStr | None = Field(None, validation_alias=_env("LLM_API_KEY"))
    """Bearer key for the main LLM. ``LLM_API_KEY``."""
    models: StrList = Field(default_factory=list, validation_alias=_env("MODELS"))
    """Real model slugs under test, comma-separated. ``MODELS``."""
    training_cutoffs: StrMap = Field(default_factory=dict, validation_alias=_env("MODEL_TRAINING_CUTOFFS"))
    """Per real slug training cutoff, ``slug=YYYY-MM[-DD],…`` or JSON. ``MODEL_TRAINING_CUTOFFS``."""
    temperature: float = Field(0.7, ge=0, le=2, validation_alias=_env("LLM_TEMPERATURE"))
    """Sampling temperature (paper: 0.7). ``LLM_TEMPERATURE``."""
    top_p: float = Field(1.0, gt=0, le=1, validation_alias=_env("LLM_TOP_P"))
    """Nucleus sampling (paper: 1.0). ``LLM_TOP_P``."""
    max_tokens: int = Field(12_000, gt=0, validation_alias=_env("LLM_MAX_TOKENS"))
    """Completion token cap (paper: 12,000). ``LLM_MAX_TOKENS``."""
    timeout_s: float = Field(240.0, gt=0, validation_alias=_env("LLM_TIMEOUT_S"))
    """Single-call timeout in seconds (paper: 240). ``LLM_TIMEOUT_S``."""
    reasoning_model_patterns: StrList = Field(
        default_factory=lambda: ["o1", "o3", "o4", "r1", "qwq"],
        validation_alias=_env("LLM_REASONING_MODEL_PATTERNS"),
    )
    """Substrings marking reasoning slugs that omit temperature/top_p. ``LLM_REASONING_MODEL_PATTERNS``."""
    max_completion_tokens_models: StrList = Field(
        default_factory=list, validation_alias=_env("MODEL_MAX_TOKENS_PARAM")
    )
    """Slugs that take ``max_completion_tokens`` instead of ``max_tokens``. ``MODEL_MAX_TOKENS_PARAM``."""
    max_concurrency: int = Field(5, gt=0, validation_alias=_env("LLM_MAX_CONCURRENCY"))
    """Concurrent main-LLM calls (paper: 5). ``LLM_MAX_CONCURRENCY``."""
    retry_max: int = Field(5, ge=0, validation_alias=_env("LLM_RETRY_MAX"))
    """Retries per logical call (paper: 5). ``LLM_RETRY_MAX``."""
    backoff_network_s: FloatList = Field(
        default_factory=lambda: [2.0, 5.0, 15.0, 30.0, 60.0], validation_alias=_env("LLM_BACKOFF_NETWORK_S")
    )
    """Backoff sequence for network errors. ``LLM_BACKOFF_NETWORK_S``."""
    backoff_rate_limit_s: FloatList = Field(
        default_factory=lambda: [10.0, 30.0, 60.0, 120.0, 300.0],
        validation_alias=_env("LLM_BACKOFF_RATE_LIMIT_S"),
    )
    """Backoff sequence for HTTP 429 (``Retry-After`` wins when present). ``LLM_BACKOFF_RATE_LIMIT_S``."""
    backoff_server_5xx_s: FloatList = Field(
        default_factory=lambda: [5.0, 15.0, 30.0, 60.0, 120.0],
        validation_alias=_env("LLM_BACKOFF_SERVER_5XX_S"),
    )
    """Backoff sequence for HTTP 5xx. ``LLM_BACKOFF_SERVER_5XX_S``."""
    send_seed: bool = Field(False, validation_alias=_env("LLM_SEND_SEED"))
    """Send an OpenAI ``seed`` derived from the sample identity (off in the paper). ``LLM_SEND_SEED``."""

    _split = field_validator(
        "models",
        "reasoning_model_patterns",
        "max_completion_tokens_models",
        "backoff_network_s",
        "backoff_rate_limit_s",
        "backoff_server_5xx_s",
        mode="before",
    )(split_list)
    _split_map = field_validator("training_cutoffs", mode="before")(split_mapping)


class SearchSettings(SettingsSection):
    """The Tavily search channel (paper App. B.4, Table 11)."""

    CONFIG_SECTION: ClassVar[str] = "search"

    api_keys: SecretList = Field(default_factory=list, validation_alias=_env("TAVILY_API_KEY"))
    """One or more Tavily keys, comma-separated; dispatched least-used. ``TAVILY_API_KEY``."""
    base_url: str = Field("https://api.tavily.com", validation_alias=_env("TAVILY_BASE_URL"))
    """Tavily API base URL. ``TAVILY_BASE_URL``."""
    max_results: int = Field(5, gt=0, le=20, validation_alias=_env("TAVILY_MAX_RESULTS"))
    """Results per call R (paper: 5): ``GRID_R_LIST``'s first value. ``TAVILY_MAX_RESULTS``."""
    search_depth: Literal["basic", "advanced"] = Field("basic", validation_alias=_env("TAVILY_SEARCH_DEPTH"))
    """Tavily search depth (paper: basic). ``TAVILY_SEARCH_DEPTH``."""
    include_answer: bool = Field(False, validation_alias=_env("TAVILY_INCLUDE_ANSWER"))
    """Ask Tavily for its quick answer (paper: off). ``TAVILY_INCLUDE_ANSWER``."""
    include_raw_content: bool = Field(True, validation_alias=_env("TAVILY_INCLUDE_RAW_CONTENT"))
    """Ask for page raw content (paper: on). ``TAVILY_INCLUDE_RAW_CONTENT``."""
    date_filter: Literal["on", "off"] = Field("on", validation_alias=_env("SEARCH_DATE_FILTER"))
    """Send the cutoff as Tavily's ``end_date`` (paper: on). ``off`` records the no-date-filter
    scheme of the leakage comparison (App. B.6); the detector still judges against the cutoff.
    ``SEARCH_DATE_FILTER``."""
    result_max_chars: int = Field(8_000, gt=0, validation_alias=_env("SEARCH_RESULT_MAX_CHARS"))
    """Per-result text truncation, in characters (paper: 8,000); the model sees a cut page body
    followed by a truncation marker. ``SEARCH_RESULT_MAX_CHARS``."""
    max_concurrency: int = Field(5, gt=0, validation_alias=_env("SEARCH_MAX_CONCURRENCY"))
    """Concurrent Tavily calls (paper: 5). ``SEARCH_MAX_CONCURRENCY``."""
    retry_max: int = Field(3, ge=0, validation_alias=_env("SEARCH_RETRY_MAX"))
    """Retries for 5xx/network/non-JSON (paper: 3). ``SEARCH_RETRY_MAX``."""
    backoff_s: FloatList = Field(
        default_factory=lambda: [2.0, 5.0, 15.0], validation_alias=_env("SEARCH_BACKOFF_S")
    )
    """Backoff sequence for search retries. ``SEARCH_BACKOFF_S``."""
    key_cooldown_s: float = Field(60.0, ge=0, validation_alias=_env("TAVILY_KEY_COOLDOWN_S"))
    """Cooldown of a rate-limited key (paper: 60 s). ``TAVILY_KEY_COOLDOWN_S``."""
    timeout_s: float = Field(60.0, gt=0, validation_alias=_env("SEARCH_TIMEOUT_S"))
    """Single search-call timeout in seconds. ``SEARCH_TIMEOUT_S``."""

    _split = field_validator("api_keys", "backoff_s", mode="before")(split_list)


class DetectorSettings(SettingsSection):
    """The leak detector H_aux (paper App. B.5, Tables 11 and 13)."""

    CONFIG_SECTION: ClassVar[str] = "detector"

    enabled: bool = Field(True, validation_alias=_env("ENABLE_SEARCH_LEAK_FILTER"))
    """Audit every search result before it reaches the model. ``ENABLE_SEARCH_LEAK_FILTER``."""
    model: str | None = Field(None, validation_alias=_env("LEAK_DETECTOR_MODEL"))
    """Detector model slug. ``LEAK_DETECTOR_MODEL``."""
    base_url: str | None = Field(None, validation_alias=_env("LEAK_DETECTOR_BASE_URL"))
    """Detector base URL; empty falls back to ``LLM_BASE_URL``. ``LEAK_DETECTOR_BASE_URL``."""
    api_key: SecretStr | None = Field(None, validation_alias=_env("LEAK_DETECTOR_API_KEY"))
    """Detector key; empty falls back to ``LLM_API_KEY``. ``LEAK_DETECTOR_API_KEY``."""
    temperature: float = Field(0.0, ge=0, le=2, validation_alias=_env("LEAK_DETECTOR_TEMPERATURE"))
    """Detector temperature (paper: 0). ``LEAK_DETECTOR_TEMPERATURE``."""
    max_tokens: int = Field(512, gt=0, validation_alias=_env("LEAK_DETECTOR_MAX_TOKENS"))
    """Detector completion cap (paper: 512). ``LEAK_DETECTOR_MAX_TOKENS``."""
    timeout_s: float = Field(60.0, gt=0, validation_alias=_env("LEAK_DETECTOR_TIMEOUT_S"))
    """Detector call timeout (paper: 60 s). ``LEAK_DETECTOR_TIMEOUT_S``."""
    max_concurrency: int = Field(5, gt=0, validation_alias=_env("LEAK_DETECTOR_MAX_CONCURRENCY"))
    """Concurrent detector calls (paper: 5). ``LEAK_DETECTOR_MAX_CONCURRENCY``."""
    retry_max: int = Field(3, ge=0, validation_alias=_env("LEAK_DETECTOR_RETRY_MAX"))
    """Detector retries (paper: 3). ``LEAK_DETECTOR_RETRY_MAX``."""
    backoff_s: FloatList = Field(
        default_factory=lambda: [2.0, 5.0, 15.0], validation_alias=_env("LEAK_DETECTOR_BACKOFF_S")
    )
    """Detector backoff sequence (paper: [2, 5, 15]). ``LEAK_DETECTOR_BACKOFF_S``."""
    fail_action: Literal["drop", "keep"] = Field("drop", validation_alias=_env("LEAK_DETECTOR_FAIL_ACTION"))
    """What a failed verdict does to its result (paper: drop, fail-closed). ``LEAK_DETECTOR_FAIL_ACTION``."""
    prompt_file: Path | None = Field(None, validation_alias=_env("LEAK_DETECTOR_PROMPT_FILE"))
    """Detector prompt template (UTF-8 text with ``{{field}}`` placeholders); empty: the built-in
    one. ``LEAK_DETECTOR_PROMPT_FILE``."""

    _split = field_validator("backoff_s", mode="before")(split_list)
    _no_path = field_validator("prompt_file", mode="before")(empty_is_none)


class ReactSettings(SettingsSection):
    """The ReAct loop (paper Algorithm 1, App. B.4, Table 12)."""

    CONFIG_SECTION: ClassVar[str] = "react"

    max_steps: int = Field(6, gt=0, le=1000, validation_alias=_env("REACT_MAX_STEPS"))
    """Message-round cap T (main experiment: 6; appendix table: 12). ``REACT_MAX_STEPS``."""
    max_search_calls: int = Field(4, ge=0, validation_alias=_env("REACT_MAX_SEARCH_CALLS"))
    """Search-call cap C (main: 4; appendix: 8): ``GRID_C_LIST``'s first value. ``REACT_MAX_SEARCH_CALLS``."""
    force_final_answer_lookahead: int = Field(
        2, ge=0, validation_alias=_env("REACT_FORCE_FINAL_ANSWER_LOOKAHEAD")
    )
    """Steps before T at which the soft warning fires. ``REACT_FORCE_FINAL_ANSWER_LOOKAHEAD``."""
    budget_exceeded_drop_tools: bool = Field(True, validation_alias=_env("REACT_BUDGET_EXCEEDED_DROP_TOOLS"))
    """Revoke tools once C searches are used. ``REACT_BUDGET_EXCEEDED_DROP_TOOLS``."""
    min_search_calls: int = Field(0, ge=0, validation_alias=_env("REACT_MIN_SEARCH_CALLS"))
    """Soft minimum number of searches before answering (paper: 0); above 0 a content-only reply
    with fewer searches is answered by a nudge, which only a harness profile with the ``earlier``
    injection policy sends. ``REACT_MIN_SEARCH_CALLS``."""
    max_nudges: int = Field(2, ge=0, validation_alias=_env("REACT_MAX_NUDGES"))
    """Most nudges per sample while fewer than ``REACT_MIN_SEARCH_CALLS`` searches were made (the
    earlier implementation's default: 2). ``REACT_MAX_NUDGES``."""
    final_answer_retry: bool = Field(False, validation_alias=_env("REACT_FINAL_ANSWER_RETRY"))
    """Bail-out retry when the final turn is empty (paper: off). ``REACT_FINAL_ANSWER_RETRY``."""
    reflection_protocol: bool = Field(True, validation_alias=_env("ENABLE_REFLECTION_PROTOCOL"))
    """Append the six-stage reflection scaffold (paper: on). ``ENABLE_REFLECTION_PROTOCOL``."""
    budget_footer: bool = Field(True, validation_alias=_env("ENABLE_BUDGET_FOOTER"))
    """Append the budget footer announcing T and C (paper: on). ``ENABLE_BUDGET_FOOTER``."""
    belief_protocol: bool = Field(False, validation_alias=_env("ENABLE_BELIEF_PROTOCOL"))
    """Request the ``<belief>`` block (paper: off). ``ENABLE_BELIEF_PROTOCOL``."""
    protocols_file: Path | None = Field(None, validation_alias=_env("PROTOCOLS_FILE"))
    """Runtime protocol texts, order, separator and suffix (``.json``/``.toml``); its blocks decide
    which protocols are on. Empty: the built-in texts, switched by ``ENABLE_*``. ``PROTOCOLS_FILE``."""
    _no_path = field_validator("protocols_file", mode="before")(empty_is_none)
    answer_parser: AnswerParser = Field("algorithm2", validation_alias=_env("ANSWER_PARSER"))
    """How Ψ reads several letters boxed for a single-answer question: ``algorithm2`` (paper App. A:
    that letter set, scored wrong) or ``strict`` (⊥, and the loop nudges for another turn).
    ``ANSWER_PARSER``."""


class RunSettings(SettingsSection):
    """The run: dataset, sampling, grid, store and record/replay mode."""

    CONFIG_SECTION: ClassVar[str] = "run"

    source_db: Path | None = Field(None, validation_alias=_env("SOURCE_DB"))
    """Source SQLite DB; empty uses the bundled demo dataset. ``SOURCE_DB``."""
    harness_profile: Path | None = Field(None, validation_alias=_env("HARNESS_PROFILE"))
    """Harness profile (JSON, docs/harness-profile.md): every byte-level choice of the requests the
    model, the detector and Tavily receive; empty or ``builtin``: oracleproto's own.
    ``PROTOCOLS_FILE`` and ``LEAK_DETECTOR_PROMPT_FILE`` override its matching parts. ``HARNESS_PROFILE``."""
    source_table: str | None = Field(None, validation_alias=_env("SOURCE_TABLE"))
    """Questions table; empty picks the one table with the seven columns. ``SOURCE_TABLE``."""
    runs_root: Path = Field(Path("runs"), validation_alias=_env("RUNS_ROOT"))
    """Directory holding run directories. ``RUNS_ROOT``."""
    sampling_n: int = Field(3, gt=0, le=1000, validation_alias=_env("SAMPLING_N"))
    """Independent samples per question n (paper: 3). ``SAMPLING_N``."""
    delta_days: int = Field(1, ge=0, validation_alias=_env("PREDICTION_CUTOFF_DELTA_DAYS"))
    """δ in days: prediction cutoff χ = τ − δ (paper: 1). ``PREDICTION_CUTOFF_DELTA_DAYS``."""
    write_messages_trace: bool = Field(True, validation_alias=_env("WRITE_MESSAGES_TRACE"))
    """Persist the full message trace per sample. ``WRITE_MESSAGES_TRACE``."""
    question_types: StrList | None = Field(None, validation_alias=_env("QUESTION_TYPES"))
    """Only these question types (comma-separated); empty means all. ``QUESTION_TYPES``."""
    choice_types: StrList | None = Field(None, validation_alias=_env("CHOICE_TYPES"))
    """Only these choice types (comma-separated); empty means all. ``CHOICE_TYPES``."""
    grid_r_list: Annotated[list[int], NoDecode] = Field(
        default_factory=lambda: [5], validation_alias=_env("GRID_R_LIST")
    )
    """Tavily results-per-call values of the grid (unset: ``TAVILY_MAX_RESULTS``). ``GRID_R_LIST``."""
    grid_c_list: Annotated[list[int], NoDecode] = Field(
        default_factory=lambda: [4], validation_alias=_env("GRID_C_LIST")
    )
    """Search-call caps of the grid (unset: ``REACT_MAX_SEARCH_CALLS``). ``GRID_C_LIST``."""
    mode: CacheMode = Field("replay", validation_alias=_env("ORACLEPROTO_MODE"))
    """Record/replay mode; replay (offline) unless told otherwise. ``ORACLEPROTO_MODE``."""
    cache_dir: Path = Field(Path("cache"), validation_alias=_env("ORACLEPROTO_CACHE_DIR"))
    """Rebuildable diskcache index of the cassettes. ``ORACLEPROTO_CACHE_DIR``."""
    retry_after_max_s: float = Field(300.0, ge=0, validation_alias=_env("RETRY_AFTER_MAX_S"))
    """Longest wait (``Retry-After``, backoff, key cooldown) a call may take; a longer one stops the
    run resumably. ``RETRY_AFTER_MAX_S``."""
    question_limit: int | None = Field(None, gt=0, validation_alias=_env("QUESTION_LIMIT"))
    """Only the first N questions (in run order) that at least one model admits; empty means all
    (``run --limit N``). ``QUESTION_LIMIT``."""
    circuit_breaker_calls: int = Field(8, ge=0, validation_alias=_env("CIRCUIT_BREAKER_CALLS"))
    """Stop the run when the first N live calls of a channel in a session all fail with the same
    network or unknown error (0 = off). ``CIRCUIT_BREAKER_CALLS``."""

    _split = field_validator("question_types", "choice_types", "grid_r_list", "grid_c_list", mode="before")(
        split_list
    )
    _no_profile = field_validator("harness_profile", mode="before")(empty_is_none)

    @field_validator("question_limit", mode="before")
    @classmethod
    def _empty_limit_is_unset(cls, value: Any) -> Any:
        """An empty ``QUESTION_LIMIT=`` (as the ``.env`` templates write it) means no limit."""
        return None if isinstance(value, str) and not value.strip() else value


class AnalysisSettings(SettingsSection):
    """The analysis pass (paper §4.2, App. B.1, B.9)."""

    CONFIG_SECTION: ClassVar[str] = "analysis"

    convention: Convention = Field("paper", validation_alias=_env("ANALYSIS_CONVENTION"))
    """Scoring convention: ``paper`` or ``reference-v4``. ``ANALYSIS_CONVENTION``."""
    bootstrap_samples: int = Field(1000, ge=0, validation_alias=_env("ANALYSIS_BOOTSTRAP_N"))
    """Question-cluster bootstrap resamples for CIs. ``ANALYSIS_BOOTSTRAP_N``."""
    seed: int = Field(20260430, validation_alias=_env("ANALYSIS_SEED"))
    """Seed of the bootstrap. ``ANALYSIS_SEED``."""
    prices_file: Path | None = Field(None, validation_alias=_env("PRICES_FILE"))
    """Price table (USD per million input/output tokens per slug). ``PRICES_FILE``."""
    tavily_usd_per_credit: float | None = Field(
        None, ge=0, allow_inf_nan=False, validation_alias=_env("TAVILY_USD_PER_CREDIT")
    )
    """USD per Tavily credit (1 per basic search, 2 per advanced) for the cost with tools; unset
    leaves search unpriced. ``TAVILY_USD_PER_CREDIT``."""

    @field_validator("tavily_usd_per_credit", mode="before")
    @classmethod
    def _empty_price_is_unset(cls, value: Any) -> Any:
        """An empty ``TAVILY_USD_PER_CREDIT=`` line (as in ``.env.example``) leaves the price unset."""
        return None if isinstance(value, str) and not value.strip() else value

    display_names: StrMap = Field(default_factory=dict, validation_alias=_env("MODEL_DISPLAY_NAMES"))
    """Real slug → name the tables show (``{"vendor/model": "Model 1"}`` or ``vendor/model=Model 1,…``);
    recorded with the run, which names its models by it. ``MODEL_DISPLAY_NAMES``."""

    _split_names = field_validator("display_names", mode="before")(split_mapping)

    @field_validator("display_names", mode="after")
    @classmethod
    def _check_names(cls, value: dict[str, str]) -> dict[str, str]:
        problems = display_name_problems(value)
        if problems:
            raise ValueError("; ".join(problems))
        return value


class Settings(BaseModel):
    """All sections. Build with :func:`load_settings`; pass sections where needed."""

    model_config = ConfigDict(frozen=True)

    llm: LLMSettings
    search: SearchSettings
    detector: DetectorSettings
    react: ReactSettings
    run: RunSettings
    analysis: AnalysisSettings

    def validate_static(self) -> None:
        """Startup checks that hold in every mode (paper Table 10, first row)."""
        problems: list[str] = []
        for slug in self.llm.models:
            if slug.endswith(ONLINE_SUFFIX):
                problems.append(
                    f"MODELS: {slug!r} ends in ':online' (provider-side browsing); "
                    "remove the suffix — search goes only through the time-masked tool"
                )
            if "::" in slug:
                problems.append(f"MODELS: {slug!r} contains '::', reserved for grid cells")
        if self.detector.model and self.detector.model.endswith(ONLINE_SUFFIX):
            problems.append(
                f"LEAK_DETECTOR_MODEL: {self.detector.model!r} ends in ':online'; remove the suffix"
            )
        if problems:
            raise ConfigError("invalid settings:\n" + "\n".join(f"  - {p}" for p in problems))

    def validate_for_live(self) -> None:
        """Checks needed before any live call (record/refresh): keys present and real."""
        self.validate_static()
        problems: list[str] = []
        if not self.llm.base_url:
            problems.append("LLM_BASE_URL is empty; set the OpenAI-compatible base URL")
        urls = [("LLM_BASE_URL", self.llm.base_url), ("TAVILY_BASE_URL", self.search.base_url)]
        if self.detector.enabled:
            urls.append(("LEAK_DETECTOR_BASE_URL", self.detector.base_url))  # empty: the LLM's
        problems.extend(p for name, url in urls if url and (p := url_problem(name, url)) is not None)
        if not self.llm.models:
            problems.append("MODELS is empty; list the model slugs to evaluate")
        check_key(problems, "LLM_API_KEY", self.llm.api_key)
        if not self.search.api_keys:
            problems.append("TAVILY_API_KEY is empty; set one or more Tavily keys")
        for i, key in enumerate(self.search.api_keys):
            check_key(problems, f"TAVILY_API_KEY[{i}]", key)
        if self.detector.enabled:
            if not self.detector.model:
                problems.append(
                    "LEAK_DETECTOR_MODEL is empty while ENABLE_SEARCH_LEAK_FILTER=true; "
                    "set a detector slug or disable the filter"
                )
            if self.detector.api_key is not None:
                check_key(problems, "LEAK_DETECTOR_API_KEY", self.detector.api_key)
        keys = {
            "LLM_API_KEY": self.llm.api_key,
            "LEAK_DETECTOR_API_KEY": self.detector.api_key,
            **{f"TAVILY_API_KEY[{i}]": key for i, key in enumerate(self.search.api_keys)},
        }
        base_urls = {
            "LLM_BASE_URL": self.llm.base_url,
            "TAVILY_BASE_URL": self.search.base_url,
            "LEAK_DETECTOR_BASE_URL": self.detector.base_url,
        }
        problems.extend(keys_in_urls(keys, base_urls))
        if problems:
            raise ConfigError("cannot record live:\n" + "\n".join(f"  - {p}" for p in problems))

    def snapshot(self) -> dict[str, Any]:
        """The config snapshot: every API key reduced to first 4 chars + sha256-12."""
        snapshot: dict[str, Any] = redact_snapshot(self.model_dump(mode="python"))
        return snapshot


_SECTION_CLASSES: tuple[type[SettingsSection], ...] = (
    LLMSettings,
    SearchSettings,
    DetectorSettings,
    ReactSettings,
    RunSettings,
    AnalysisSettings,
)


def _secret_names() -> frozenset[str]:
    """Field names and variable names (lower-cased) whose values are secrets."""
    names: set[str] = set()
    for cls in _SECTION_CLASSES:
        for name, info in cls.model_fields.items():
            if "SecretStr" not in str(info.annotation):
                continue
            names.add(name.lower())
            alias = info.validation_alias
            if isinstance(alias, AliasChoices):
                names.update(str(choice).lower() for choice in alias.choices)
    return frozenset(names)


def load_settings(
    env_file: str | os.PathLike[str] | None = ".env",
    config: Mapping[str, Mapping[str, Any]] | None = None,
) -> Settings:
    """Read every section from the environment, ``config`` (an experiment config file's values,
    ``run_config.load_config``) and ``env_file`` when it exists."""
    token = CONFIG_VALUES.set(config or {})
    try:
        return _load_settings(env_file)
    finally:
        CONFIG_VALUES.reset(token)


def _load_settings(env_file: str | os.PathLike[str] | None) -> Settings:
    check_env_file(env_file)
    kwargs: dict[str, Any] = {"_env_file": env_file}
    sections: dict[str, SettingsSection] = {}
    lines: list[str] = []
    # Every section is read so that one message lists every problem.
    for name, cls in zip(
        ("llm", "search", "detector", "react", "run", "analysis"), _SECTION_CLASSES, strict=True
    ):
        try:
            sections[name] = cls(**kwargs)
        except ValidationError as exc:
            lines.extend(error_line(err, _secret_names()) for err in exc.errors(include_url=False))
    if lines:
        raise ConfigError("invalid settings:\n" + "\n".join(lines))
    settings = Settings(**reconcile_grid(sections))
    settings.validate_static()
    return settings
