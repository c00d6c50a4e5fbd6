"""Experiment identity: when two runs' models may stand on one leaderboard.

Models of several runs are compared on one population and one set of resamples only when the runs
measured the same thing: the same questions (dataset file, metadata and templates, the selected
ids and filters), the same n, the same harness (its revision, profile and protocol texts) and the
same settings that decide what a model receives and how its answer is scored — every setting
``setting_roles`` marks ``identity`` for a resume (temperature, search and detector settings, step
budgets, answer parser, δ, …). Left out, because they describe a model configuration or a report,
not the experiment: the models, their training cutoffs and grid cells (each is a row of the
board), the endpoints the models were served from, the analysis section (the leaderboard scores
every run under points-f1 itself) and whether message traces were stored (nothing scored reads
them). Runs of the earlier implementation have no sections in their snapshot: what they do not
record is not compared (as on resume).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from oracleproto.analysis.reader import RunData
from oracleproto.runner.resume_guard import settings_changes, show
from oracleproto.runner.setting_roles import ROLES, env_name

#: Resume-identity settings that are not part of the experiment (see the module docstring).
NOT_EXPERIMENT = frozenset(
    {env_name(section, name) for section, fields in ROLES.items() for name, role in fields.items()
     if role == "endpoint" or section == "analysis"}
    | {env_name("run", "write_messages_trace")}
)  # fmt: skip

#: Manifest keys of the experiment: how the difference is named → path in the manifest.
MANIFEST_KEYS: dict[str, tuple[str, ...]] = {
    "SOURCE_DB (sha256 of the dataset file)": ("hashes", "source_db"),
    "dataset metadata (sha256 of features_json)": ("hashes", "metadata"),
    "dataset prompt templates (sha256)": ("hashes", "prompt_templates"),
    "SAMPLING_N": ("sampling_n",),
    "QUESTION_TYPES": ("filters", "question_types"),
    "CHOICE_TYPES": ("filters", "choice_types"),
    "reflection protocol (sha256-16)": ("reflection_protocol_hash",),
    "belief protocol (sha256-16)": ("belief_protocol_hash",),
    "harness revision": ("harness_revision",),
}


@dataclass(frozen=True)
class Difference:
    """One experiment setting two runs differ in."""

    name: str
    first: str
    other: str

    def __str__(self) -> str:
        return f"{self.name}: {self.first} vs {self.other}"


def _at(document: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = document
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def snapshot_of(run: RunData) -> dict[str, Any]:
    """The run's recorded settings (its first model's ``config_snapshot``; empty when unreadable)."""
    raw = run.models[0].run_meta.get("config_snapshot")
    try:
        snapshot = json.loads(raw) if isinstance(raw, str) else None
    except json.JSONDecodeError:
        return {}
    return snapshot if isinstance(snapshot, dict) else {}


def _question_ids(run: RunData) -> list[str]:
    listed = _at(run.manifest, ("filters", "question_ids"))
    if isinstance(listed, list):
        return sorted(str(q) for q in listed)
    return sorted({q for m in run.models for q in m.table.question_ids})


#: Read from the dataset file: under one ``SOURCE_DB`` hash, a differing hash is only the form it
#: was taken in (a legacy dataset's stand-in keys, stored by runs recorded before the keys as
#: written were), not another experiment.
_FROM_THE_FILE = "dataset prompt templates (sha256)"


def differences(first: RunData, other: RunData) -> list[Difference]:
    """Every experiment setting ``other`` differs from ``first`` in (empty: one experiment)."""
    source = ("hashes", "source_db")
    same_file = _at(first.manifest, source) is not None and _at(first.manifest, source) == _at(
        other.manifest, source
    )
    found = [
        Difference(name, show(_at(first.manifest, path)), show(_at(other.manifest, path)))
        for name, path in MANIFEST_KEYS.items()
        if _at(first.manifest, path) != _at(other.manifest, path)
        and not (same_file and name == _FROM_THE_FILE)
    ]
    ids_first, ids_other = _question_ids(first), _question_ids(other)
    if ids_first != ids_other:
        found.append(
            Difference(
                "questions selected (SOURCE_DB / SOURCE_TABLE / QUESTION_LIMIT)",
                f"{len(ids_first)} questions",
                f"{len(ids_other)} questions" + (" (other ids)" if len(ids_first) == len(ids_other) else ""),
            )
        )
    for change in settings_changes(snapshot_of(first), snapshot_of(other)):
        if change.name not in NOT_EXPERIMENT:
            found.append(Difference(change.name, change.old, change.new))
    return found
