"""The identity of an experiment that several shards record together (docs/run-at-scale.md).

An experiment is a dataset, a set of model configurations and the settings, protocols and
harness profile they are all run with. Its id is computed from the run identity of the whole
experiment (every model, before a shard picks its part), without any network call, and reads
``exp1-<dataset>-<settings>-<protocols>-<profile>``: one sha256-12 per part, so a shard whose id
differs from the expected one can say *which* part differs. What only schedules a shard or locates
its files (API keys, concurrency, timeouts, retries, run and cache folders, display names) is
left out: every shard has its own keys and its own run directory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from oracleproto.errors import ConfigError
from oracleproto.primitives.hashing import canonical_json, sha256_hex
from oracleproto.prompts.layout import layout_data_fingerprint
from oracleproto.runner.identity import RunIdentity
from oracleproto.runner.resume_guard import compared_value
from oracleproto.runner.run_texts import DETECTOR_HASH_KEY, PROFILE_KEY, PROTOCOLS_KEY
from oracleproto.runner.setting_roles import compared_settings
from oracleproto.settings.model import Settings

#: The id's version prefix: a later change of what the parts hash starts ``exp2-``.
ID_PREFIX = "exp1"
#: The parts, in the id's order, and what each stands for (the refusal names them so).
PARTS: dict[str, str] = {
    "dataset": "the dataset (source DB, its metadata and prompt templates, the questions selected)",
    "settings": (
        "the settings (model configurations, training cutoffs, n, grid, endpoints and every setting a "
        "resume compares)"
    ),
    "protocols": "the protocol texts (reflection and belief blocks, PROTOCOLS_FILE, detector prompt)",
    "profile": "the harness profile (HARNESS_PROFILE / --profile)",
}
_DIGITS = 12
_ID = re.compile(rf"^{ID_PREFIX}(?:-[0-9a-f]{{{_DIGITS}}}){{{len(PARTS)}}}$")


@dataclass(frozen=True)
class ExperimentId:
    """An experiment's id, part by part."""

    digests: dict[str, str]

    @property
    def text(self) -> str:
        """``exp1-<dataset>-<settings>-<protocols>-<profile>``."""
        return "-".join([ID_PREFIX, *(self.digests[part] for part in PARTS)])

    def __str__(self) -> str:
        return self.text

    @classmethod
    def parse(cls, text: str) -> ExperimentId:
        """An id as printed by ``run --print-experiment-id``; ``ConfigError`` when it is not one."""
        cleaned = text.strip()
        if not _ID.match(cleaned):
            raise ConfigError(
                f"--experiment {text!r} is not an experiment id: expected {ID_PREFIX} and {len(PARTS)} "
                f"groups of {_DIGITS} hex digits ({ID_PREFIX}-<dataset>-<settings>-<protocols>-<profile>), "
                "as `oracleproto run --print-experiment-id` prints it"
            )
        return cls(dict(zip(PARTS, cleaned.split("-")[1:], strict=True)))

    def differing(self, other: ExperimentId) -> list[str]:
        """The parts whose digests differ, in the id's order."""
        return [part for part in PARTS if self.digests[part] != other.digests[part]]


def _digest(value: Any) -> str:
    return sha256_hex(canonical_json(value))[:_DIGITS]


def experiment_parts(identity: RunIdentity, settings: Settings) -> dict[str, Any]:
    """What each part of the id hashes, from the identity of the whole experiment (all its models)."""
    snapshot = identity.config_snapshot
    layout = snapshot.get(PROTOCOLS_KEY)
    profile = snapshot.get(PROFILE_KEY)
    base = profile.get("base_fingerprint") if isinstance(profile, dict) else None
    return {
        "dataset": {
            "source_db": identity.source_db_hash,
            "metadata": identity.metadata_hash,
            "prompt_templates": identity.prompt_templates_hash,
            "question_ids": identity.filters["question_ids"],
        },
        "settings": {
            "models": sorted(settings.llm.models),
            "training_cutoffs": {m: d.isoformat() for m, d in sorted(identity.training_cutoffs.items())},
            "sampling_n": settings.run.sampling_n,
            "grid": [list(settings.run.grid_r_list), list(settings.run.grid_c_list)],
            "values": {s.env_name: compared_value(snapshot, s) for s in compared_settings()},
        },
        "protocols": {
            "reflection": identity.reflection_protocol_hash,
            "belief": identity.belief_protocol_hash,
            "layout": layout_data_fingerprint(layout) if isinstance(layout, dict) else None,
            "detector_prompt": snapshot.get(DETECTOR_HASH_KEY),
        },
        "profile": base if isinstance(base, str) else identity.texts.fingerprint,
    }


def experiment_id(identity: RunIdentity, settings: Settings) -> ExperimentId:
    """The experiment's id; ``identity`` must be resolved with every model of the experiment."""
    parts = experiment_parts(identity, settings)
    return ExperimentId({part: _digest(parts[part]) for part in PARTS})


def refuse_mismatch(expected: ExperimentId, actual: ExperimentId) -> None:
    """Raise ``ConfigError`` naming each part in which this shard's experiment differs."""
    differing = expected.differing(actual)
    if not differing:
        return
    lines = "\n".join(
        f"  {part}: expected {expected.digests[part]}, this shard has {actual.digests[part]} — {PARTS[part]}"
        for part in differing
    )
    raise ConfigError(
        f"this shard belongs to experiment {actual}, not to --experiment {expected}; it differs in:\n"
        f"{lines}\n"
        "Nothing was written. Start every shard with the same dataset, experiment settings (config file "
        "or environment: API keys, concurrency and folders may differ) and harness profile; "
        "`oracleproto run --print-experiment-id` with this shard's options prints its parts"
    )
