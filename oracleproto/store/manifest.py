"""``manifest.json``: the run's reproducibility envelope (run-layout.md), typed and written atomically.

Keys of the existing layout are required with their meaning unchanged; our additions
(``cassettes``, ``oracleproto_version``, ``refresh``, ``sample_entries_root``) are optional so
manifests written by the earlier implementation load, and they are omitted on write when unset
so such a manifest round-trips byte-identically but for the final newline, which that code does
not write (``verify/earlier.py`` accepts both). Unknown keys (added by later versions) are kept.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from oracleproto.errors import StoreError
from oracleproto.primitives.fileio import atomic_write_text
from oracleproto.primitives.json_input import load_json
from oracleproto.store.naming import parse_timestamp, validate_run_id

SCHEMA_VERSION = 5
ANALYSIS_SCHEMA = "v4"
MANIFEST_NAME = "manifest.json"
#: Our additions to the layout: omitted on write when ``None``.
_OPTIONAL_ADDITIONS = (
    "cassettes",
    "oracleproto_version",
    "refresh",
    "sample_entries_root",
    "harness_revision",
    "harness_profile",
    "experiment",
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Filters(_Strict):
    """The question filter the run applied."""

    question_types: list[str] | None = Field(description="Sorted question types kept, or null for all.")
    choice_types: list[str] | None = Field(description="Sorted choice types kept, or null for all.")
    question_count: int = Field(ge=0, description="Number of questions admitted by the filter.")
    question_ids: list[str] = Field(description="Question ids ordered by end_time, then id.")


class Hashes(_Strict):
    """The dataset side of the hash chain (sha256 hex)."""

    source_db: str = Field(description="sha256 of the source DB file bytes.")
    metadata: str = Field(description="sha256 of the canonicalised features_json.")
    prompt_templates: str = Field(description="sha256 of the sorted key=value template lines.")


class Grid(_Strict):
    """The (R, C) grid: every run is a grid, even a single cell."""

    r_list: list[int] = Field(description="Tavily results per call, one value per grid row.")
    c_list: list[int] = Field(description="Search-call caps, one value per grid column.")
    default_r: int = Field(description="R of the default cell.")
    default_c: int = Field(description="C of the default cell.")
    real_models: list[str] = Field(description="Real model slugs in plan order.")
    n_cells: int = Field(
        ge=1,
        description="Number of grid cells: virtual slugs {real}::r{R}::c{C}, one per model and (R, C) "
        "(the paper's grid cell), so len(models).",
    )


class CassettesInfo(_Strict):
    """Our addition: where the run's record/replay cassettes live and what they hash to."""

    dir: str = Field(description="Cassette folder, relative to the run directory.")
    root_digest: str | None = Field(default=None, description="Digest over every entry the run used.")
    mode: Literal["replay", "record", "refresh"] = Field(description="Record/replay mode of the run.")

    @field_validator("dir")
    @classmethod
    def _relative(cls, value: str) -> str:
        if Path(value).is_absolute() or ".." in Path(value).parts:
            raise ValueError("must be a relative path inside the run directory (no machine paths)")
        return value


class RefreshInfo(_Strict):
    """Our addition, on a run written by a refresh: what it re-recorded, and into which generation."""

    of: str = Field(description="Run id of the refreshed run.")
    generation: int = Field(ge=1, description="The cassette generation this refresh writes.")
    selection: list[str] = Field(description="Selector clauses re-recorded live; empty = everything.")

    @field_validator("of")
    @classmethod
    def _run_id(cls, value: str) -> str:
        try:
            return validate_run_id(value)
        except StoreError as exc:
            raise ValueError(str(exc)) from exc


class ExperimentInfo(_Strict):
    """Our addition, on a run recorded as one shard of an experiment (``run --shard``,
    ``--shard-models`` or ``--experiment``; docs/run-at-scale.md)."""

    id: str = Field(description="The experiment id every shard shares (`run --print-experiment-id`).")
    shard_index: int | None = Field(default=None, ge=0, description="I of --shard I/N (else null).")
    shard_count: int | None = Field(default=None, ge=1, description="N of --shard I/N (else null).")
    models: list[str] = Field(description="Every model configuration of the experiment, sorted.")


class HarnessProfileInfo(_Strict):
    """Our addition: the harness profile whose bytes the run sent (docs/harness-profile.md)."""

    name: str = Field(description="The profile's name (the built-in one: 'oracleproto').")
    fingerprint: str = Field(description="sha256-16 of the effective profile's canonical behaviour.")


class Manifest(BaseModel):
    """Typed ``manifest.json`` (schema_version 5, analysis_schema "v4") plus our additions."""

    model_config = ConfigDict(extra="allow", frozen=True)

    run_id: str = Field(description="UTC 'YYYYMMDD-HHMMSS-xxxx'.")
    schema_version: int = Field(default=SCHEMA_VERSION, description="Per-model DB schema version.")
    analysis_schema: str = Field(default=ANALYSIS_SCHEMA, description="Analysis output schema.")
    sampling_n: int = Field(ge=1, description="Samples per (question, model).")
    models: list[str] = Field(description="Virtual slugs in plan order.")
    model_files: dict[str, str] = Field(description="Virtual slug -> DB file name under db/.")
    model_training_cutoffs: dict[str, str | None] = Field(description="Real slug -> ISO date.")
    filters: Filters
    hashes: Hashes
    reflection_protocol_hash: str | None = Field(description="sha256-16 of the protocol, null when off.")
    belief_protocol_hash: str | None = Field(description="sha256-16 of the protocol, null when off.")
    grid: Grid
    started_at: str = Field(description="UTC timestamp the run (first) started.")
    finished_at: str | None = Field(description="UTC timestamp the run ended; null until then.")
    cassettes: CassettesInfo | None = Field(default=None, description="Our addition.")
    oracleproto_version: str | None = Field(default=None, description="Our addition.")
    refresh: RefreshInfo | None = Field(default=None, description="Our addition, on refreshed runs.")
    sample_entries_root: str | None = Field(
        default=None, description="Our addition: Merkle root over the entries each stored sample used."
    )
    harness_revision: int | None = Field(
        default=None, ge=1, description="Our addition: the harness revision that recorded it (absent: 1)."
    )
    harness_profile: HarnessProfileInfo | None = Field(
        default=None, description="Our addition: the harness profile (absent: recorded before profiles)."
    )
    experiment: ExperimentInfo | None = Field(
        default=None, description="Our addition: the experiment this run is a shard of (absent: none)."
    )

    @field_validator("run_id")
    @classmethod
    def _run_id(cls, value: str) -> str:
        try:
            return validate_run_id(value)
        except StoreError as exc:
            raise ValueError(str(exc)) from exc

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        if not 1 <= value <= SCHEMA_VERSION:
            raise ValueError(
                f"schema version {value} is not one this oracleproto reads (1..{SCHEMA_VERSION}); "
                "upgrade oracleproto"
            )
        return value

    @field_validator("started_at", "finished_at")
    @classmethod
    def _timestamp(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                parse_timestamp(value)
            except StoreError as exc:
                raise ValueError(str(exc)) from exc
        return value

    @field_validator("model_training_cutoffs")
    @classmethod
    def _cutoffs(cls, value: dict[str, str | None]) -> dict[str, str | None]:
        for slug, text in value.items():
            if text is not None:
                try:
                    date.fromisoformat(text)
                except ValueError as exc:
                    raise ValueError(f"cutoff of {slug!r} is not an ISO date: {text!r}") from exc
        return value

    @property
    def earlier_implementation(self) -> bool:
        """True for a run the earlier implementation wrote: none of our additions is in its manifest.

        Every manifest oracleproto writes carries ``cassettes`` and ``oracleproto_version`` from
        its first write, so their absence (with the other additions) marks the earlier layout.
        """
        return all(getattr(self, key) is None for key in _OPTIONAL_ADDITIONS)

    def to_json(self) -> str:
        """Indent 2, sorted keys, non-ASCII kept, trailing newline; unset additions omitted."""
        data: dict[str, Any] = self.model_dump(mode="json")
        for key in _OPTIONAL_ADDITIONS:
            if data.get(key) is None:
                data.pop(key, None)
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str, *, source: str = MANIFEST_NAME) -> Manifest:
        """Parse manifest text; errors name the file, the key and how to fix it."""
        try:
            data = load_json(text)
        except json.JSONDecodeError as exc:
            raise StoreError(
                f"{source}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
                "restore the file from a backup or start a new run"
            ) from exc
        if not isinstance(data, dict):
            raise StoreError(f"{source}: expected a JSON object at the top level, got {type(data).__name__}")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()
            )
            raise StoreError(
                f"{source}: not a valid run manifest (run-layout.md): {problems}; "
                "fix the listed keys or start a new run"
            ) from exc

    @classmethod
    def load(cls, path: Path) -> Manifest:
        """Read and validate ``path``; a missing or unreadable file is a :class:`StoreError`."""
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise StoreError(
                f"{path}: manifest not found; is this a run directory (RUNS_ROOT/<run id>/)? "
                "Pass an existing run directory or run id"
            ) from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise StoreError(f"{path}: cannot read the manifest ({exc})") from exc
        return cls.from_json(text, source=str(path))

    def write(self, path: Path) -> None:
        """Replace ``path`` atomically (primitives/fileio.py)."""
        atomic_write_text(path, self.to_json())
