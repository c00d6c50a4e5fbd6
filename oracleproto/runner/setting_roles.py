"""Which settings belong to a run's identity: the decision for every field of every section.

A setting is part of the identity when changing it changes a request, a stored value or a score;
resuming a run with such a setting changed would mix two configurations in one run (and the
recorded ``config_snapshot`` would describe only the first). Everything else — concurrency,
timeouts, retry counts and backoff sequences, keys, file locations — only changes how a run is
scheduled or where it is kept, and may change between sessions. ``tests/runner`` checks that every
field of every section has a role here, so a new setting cannot be added without this decision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import AliasChoices

from oracleproto.scoring.parser_mode import recorded_answer_parser
from oracleproto.settings.model import (
    AnalysisSettings,
    DetectorSettings,
    LLMSettings,
    ReactSettings,
    RunSettings,
    SearchSettings,
)

Role = Literal[
    # Compared from the stored config snapshot.
    "identity",
    # Identity, compared as the cassette keys see it: normalised host and path (loopback ports dropped).
    "endpoint",
    # Identity, compared through the manifest (models, cutoffs, n, filters, grid, dataset hashes).
    "manifest",
    # Only changes scheduling or resilience (concurrency, timeouts, retries, backoff, cooldown).
    "scheduling",
    # A credential: rotating it must not block a resume (the snapshot holds only a redaction).
    "secret",
    # Where files are, or this session's mode: not what the run computes.
    "location",
    # Overridden per grid cell by GRID_R_LIST / GRID_C_LIST, which the manifest compares.
    "grid",
    # Read by ``oracleproto report`` only, never by the run or its analysis pass.
    "report",
    # Only how outputs name things: recorded in the snapshot (the run's analysis pass, verify and
    # replay read the recorded value) but never compared, so a resume keeps the recorded one.
    "presentation",
]

SECTIONS: dict[str, type] = {
    "llm": LLMSettings,
    "search": SearchSettings,
    "detector": DetectorSettings,
    "react": ReactSettings,
    "run": RunSettings,
    "analysis": AnalysisSettings,
}

ROLES: dict[str, dict[str, Role]] = {
    "llm": {
        "base_url": "endpoint",
        "api_key": "secret",
        "models": "manifest",
        "training_cutoffs": "manifest",
        "temperature": "identity",
        "top_p": "identity",
        "max_tokens": "identity",
        "timeout_s": "scheduling",
        # Decide which request fields are sent (temperature/top_p omitted, max_completion_tokens).
        "reasoning_model_patterns": "identity",
        "max_completion_tokens_models": "identity",
        "max_concurrency": "scheduling",
        "retry_max": "scheduling",
        "backoff_network_s": "scheduling",
        "backoff_rate_limit_s": "scheduling",
        "backoff_server_5xx_s": "scheduling",
        "send_seed": "identity",
    },
    "search": {
        "api_keys": "secret",
        "base_url": "endpoint",
        "max_results": "grid",
        "search_depth": "identity",
        "include_answer": "identity",
        "include_raw_content": "identity",
        # Whether the cutoff reaches Tavily as end_date: changes every search request.
        "date_filter": "identity",
        "result_max_chars": "identity",
        "max_concurrency": "scheduling",
        "retry_max": "scheduling",
        "backoff_s": "scheduling",
        "key_cooldown_s": "scheduling",
        "timeout_s": "scheduling",
    },
    "detector": {
        "enabled": "identity",
        "model": "identity",
        "base_url": "endpoint",
        "api_key": "secret",
        "temperature": "identity",
        "max_tokens": "identity",
        "timeout_s": "scheduling",
        "max_concurrency": "scheduling",
        "retry_max": "scheduling",
        "backoff_s": "scheduling",
        "fail_action": "identity",
        # Where the template is; its text is identity through leak_detector_prompt_hash.
        "prompt_file": "location",
    },
    "react": {
        "max_steps": "identity",
        "max_search_calls": "grid",
        "force_final_answer_lookahead": "identity",
        "budget_exceeded_drop_tools": "identity",
        "min_search_calls": "identity",
        "max_nudges": "identity",
        "final_answer_retry": "identity",
        "reflection_protocol": "identity",
        "budget_footer": "identity",
        "belief_protocol": "identity",
        # Where the protocol texts are; their content is identity through the protocol hashes.
        "protocols_file": "location",
        # Decides whether a multi-letter answer ends the sample (algorithm2) or is nudged (strict).
        "answer_parser": "identity",
    },
    "run": {
        "source_db": "location",
        # Where the profile is; its content is identity through harness_profile's fingerprint.
        "harness_profile": "location",
        # Which questions it selects is compared through the manifest (ids, source DB hash).
        "source_table": "manifest",
        "runs_root": "location",
        "sampling_n": "manifest",
        "delta_days": "identity",
        "write_messages_trace": "identity",
        "question_types": "manifest",
        "choice_types": "manifest",
        # Selects questions like QUESTION_TYPES: compared through the manifest's question ids.
        "question_limit": "manifest",
        "grid_r_list": "manifest",
        "grid_c_list": "manifest",
        "mode": "location",
        "cache_dir": "location",
        # When a session gives up on a provider (kept out of the snapshot: see identity.py).
        "retry_after_max_s": "scheduling",
        "circuit_breaker_calls": "scheduling",
    },
    "analysis": {
        # The run's analysis pass writes analysis/ with these; a replay uses the recorded ones.
        "convention": "identity",
        "bootstrap_samples": "identity",
        "seed": "identity",
        "prices_file": "report",
        "display_names": "presentation",
        # Prices the search part of the cost with tools that the run's analysis pass writes.
        "tavily_usd_per_credit": "identity",
    },
}

#: Detector settings that only matter while the detector is on (skipped when either side is off).
DETECTOR_ONLY = frozenset({"model", "base_url", "temperature", "max_tokens", "fail_action"})
#: Paper-named top-level snapshot keys (App. B.5) that stand for a detector setting: the
#: earlier implementation's flat snapshot has these even where it lacks our sections.
TOP_LEVEL_ALIASES = {
    ("detector", "enabled"): "leak_detector_enabled",
    ("detector", "model"): "leak_detector_model",
}
#: Settings whose absence from a stored snapshot still tells which value produced the run (the
#: snapshot predates the setting): a reader of that value. Other absent settings are unknown.
IMPLIED_WHEN_ABSENT: dict[tuple[str, str], Callable[[Mapping[str, Any]], Any]] = {
    ("react", "answer_parser"): recorded_answer_parser,
    # Every run before SEARCH_DATE_FILTER sent the cutoff as end_date.
    ("search", "date_filter"): lambda _snapshot: "on",
}


@dataclass(frozen=True)
class Setting:
    """One settings field with its role and the environment variable users set it with."""

    section: str
    field: str
    role: Role
    env_name: str


def env_name(section: str, field: str) -> str:
    """The user-facing environment variable of ``section.field`` (e.g. ``LLM_TEMPERATURE``)."""
    info = SECTIONS[section].model_fields[field]  # type: ignore[attr-defined]
    alias = info.validation_alias
    if isinstance(alias, AliasChoices) and alias.choices and isinstance(alias.choices[0], str):
        return alias.choices[0]
    return f"{section}.{field}"


def compared_settings() -> list[Setting]:
    """Every setting compared from the config snapshot on resume, in section order."""
    return [
        Setting(section, field, role, env_name(section, field))
        for section, fields in ROLES.items()
        for field, role in fields.items()
        if role in ("identity", "endpoint")
    ]
