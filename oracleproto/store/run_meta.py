"""The ``run_meta`` row of a per-model DB: the run's identity and its hash chain (run-layout.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from oracleproto.errors import StoreError
from oracleproto.primitives.hashing import canonical_json
from oracleproto.primitives.json_input import load_json
from oracleproto.store.codec import SqlValue
from oracleproto.store.naming import format_timestamp, parse_timestamp
from oracleproto.store.schema import RUN_META_COLUMNS

#: run_meta fields that identify a run: resuming with any of them changed would mix two runs.
IDENTITY_FIELDS = (
    "run_id",
    "model",
    "sampling_n",
    "source_db_hash",
    "metadata_hash",
    "prompt_templates_hash",
    "training_cutoff",
    "reflection_protocol_hash",
    "belief_protocol_hash",
)


@dataclass(frozen=True)
class RunMeta:
    """The single ``run_meta`` row of a per-model DB (run-layout.md)."""

    run_id: str
    model: str
    sampling_n: int
    config_snapshot: dict[str, Any]
    filters_snapshot: dict[str, Any]
    source_db_hash: str
    metadata_hash: str
    prompt_templates_hash: str
    training_cutoff: date | None
    started_at: datetime
    finished_at: datetime | None = None
    reflection_protocol_text: str | None = None
    reflection_protocol_hash: str | None = None
    belief_protocol_text: str | None = None
    belief_protocol_hash: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_row(self) -> dict[str, SqlValue]:
        """Column → SQL value; JSON snapshots as canonical JSON, times in the layout format."""
        return {
            "run_id": self.run_id,
            "model": self.model,
            "sampling_n": self.sampling_n,
            "config_snapshot": canonical_json(self.config_snapshot),
            "filters_snapshot": canonical_json(self.filters_snapshot),
            "source_db_hash": self.source_db_hash,
            "metadata_hash": self.metadata_hash,
            "prompt_templates_hash": self.prompt_templates_hash,
            "training_cutoff": None if self.training_cutoff is None else self.training_cutoff.isoformat(),
            "started_at": format_timestamp(self.started_at),
            "finished_at": None if self.finished_at is None else format_timestamp(self.finished_at),
            "reflection_protocol_text": self.reflection_protocol_text,
            "reflection_protocol_hash": self.reflection_protocol_hash,
            "belief_protocol_text": self.belief_protocol_text,
            "belief_protocol_hash": self.belief_protocol_hash,
        }

    @classmethod
    def from_row(cls, row: Mapping[str, SqlValue], where: str) -> RunMeta:
        """Decode a stored row (older DBs may lack columns; they read as NULL)."""

        def text(name: str) -> str | None:
            value = row.get(name)
            return None if value is None else str(value)

        def snapshot(name: str) -> dict[str, Any]:
            raw = text(name)
            if raw is None:
                return {}
            try:
                value = load_json(raw)
            except json.JSONDecodeError as exc:
                raise StoreError(f"{where}: run_meta.{name} is not valid JSON") from exc
            if not isinstance(value, dict):
                raise StoreError(f"{where}: run_meta.{name} is not a JSON object")
            return value

        started = text("started_at")
        finished = text("finished_at")
        cutoff = text("training_cutoff")
        try:
            cutoff_date = None if cutoff is None else date.fromisoformat(cutoff[:10])
        except ValueError as exc:
            raise StoreError(f"{where}: run_meta.training_cutoff {cutoff!r} is not an ISO date") from exc
        if started is None or row.get("run_id") is None or row.get("model") is None:
            raise StoreError(f"{where}: run_meta lacks run_id, model or started_at; the run is incomplete")
        known = {name for name, _ in RUN_META_COLUMNS}
        return cls(
            run_id=str(row["run_id"]),
            model=str(row["model"]),
            sampling_n=int(row.get("sampling_n") or 0),
            config_snapshot=snapshot("config_snapshot"),
            filters_snapshot=snapshot("filters_snapshot"),
            source_db_hash=text("source_db_hash") or "",
            metadata_hash=text("metadata_hash") or "",
            prompt_templates_hash=text("prompt_templates_hash") or "",
            training_cutoff=cutoff_date,
            started_at=parse_timestamp(started),
            finished_at=None if finished is None else parse_timestamp(finished),
            reflection_protocol_text=text("reflection_protocol_text"),
            reflection_protocol_hash=text("reflection_protocol_hash"),
            belief_protocol_text=text("belief_protocol_text"),
            belief_protocol_hash=text("belief_protocol_hash"),
            extra={k: v for k, v in row.items() if k not in known},
        )
