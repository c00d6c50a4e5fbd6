"""manifest.json: typed round trip, exact serialisation, atomic writes, clear errors."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from oracleproto.errors import StoreError
from oracleproto.primitives.clock import SystemClock
from oracleproto.store import CassettesInfo, Filters, Grid, Hashes, Manifest, format_timestamp, model_file_map

RUN_ID = "20260301-120000-0a1f"


def legacy_manifest_dict() -> dict[str, Any]:
    """A manifest as the earlier implementation wrote it: no additions, null finished_at."""
    models = ["vendor-a/model-1::r5::c4", "vendor-d/Model 4 (preview)::r5::c4"]
    return {
        "analysis_schema": "v4",
        "belief_protocol_hash": None,
        "filters": {
            "choice_types": None,
            "question_count": 2,
            "question_ids": ["q-yes", "q-multi"],
            "question_types": ["multiple_choice", "yes_no"],
        },
        "finished_at": None,
        "grid": {
            "c_list": [4],
            "default_c": 4,
            "default_r": 5,
            "n_cells": 1,
            "r_list": [5],
            "real_models": ["vendor-a/model-1", "vendor-d/Model 4 (preview)"],
        },
        "hashes": {"metadata": "b" * 64, "prompt_templates": "c" * 64, "source_db": "a" * 64},
        "model_files": model_file_map(models),
        "model_training_cutoffs": {
            "vendor-a/model-1": "2025-06-01",
            "vendor-d/Model 4 (preview)": "2025-01-31",
        },
        "models": models,
        "reflection_protocol_hash": "0123456789abcdef",
        "run_id": RUN_ID,
        "sampling_n": 3,
        "schema_version": 5,
        "started_at": "2026-03-01T12:00:00.123456+00:00",
    }


def ours(started_at: str) -> Manifest:
    base = legacy_manifest_dict()
    base.update(
        started_at=started_at,
        finished_at=started_at,
        cassettes={"dir": "cassettes", "root_digest": "d" * 64, "mode": "record"},
        oracleproto_version="0.1.0.dev0",
        filters=Filters(question_types=None, choice_types=["single"], question_count=1, question_ids=["q-é"]),
    )
    return Manifest.model_validate(base)


def test_legacy_manifest_loads_and_round_trips_byte_identically(tmp_path: Path) -> None:
    text = json.dumps(legacy_manifest_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    path = tmp_path / "manifest.json"
    path.write_text(text, encoding="utf-8")
    manifest = Manifest.load(path)
    assert manifest.cassettes is None and manifest.oracleproto_version is None
    assert manifest.grid == Grid(
        r_list=[5],
        c_list=[4],
        default_r=5,
        default_c=4,
        real_models=["vendor-a/model-1", "vendor-d/Model 4 (preview)"],
        n_cells=1,
    )
    assert manifest.hashes == Hashes(source_db="a" * 64, metadata="b" * 64, prompt_templates="c" * 64)
    manifest.write(path)
    assert path.read_text(encoding="utf-8") == text


def test_unknown_keys_survive_a_round_trip() -> None:
    data = legacy_manifest_dict() | {"attestation": {"root": "e" * 64}}
    manifest = Manifest.model_validate(data)
    assert json.loads(manifest.to_json())["attestation"] == {"root": "e" * 64}


def test_manifest_round_trip_and_golden(tmp_path: Path, snapshot: SnapshotAssertion) -> None:
    started = format_timestamp(SystemClock().now())
    manifest = ours(started)
    path = tmp_path / "manifest.json"
    manifest.write(path)
    text = path.read_text(encoding="utf-8")
    assert Manifest.load(path) == manifest
    assert '"q-é"' in text, "non-ASCII is kept"
    assert list(json.loads(text)) == sorted(json.loads(text)), "keys are sorted"
    assert text.startswith('{\n  "analysis_schema"'), "indent 2"
    assert manifest.cassettes == CassettesInfo(dir="cassettes", root_digest="d" * 64, mode="record")
    masked = re.sub(r'"\d{4}-\d\d-\d\dT[\d:.]+\+00:00"', '"<timestamp>"', text)
    assert masked.count("<timestamp>") == 2
    assert masked == snapshot


def test_atomic_write_keeps_old_file_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "manifest.json"
    first = Manifest.model_validate(legacy_manifest_dict())
    first.write(path)
    before = path.read_bytes()

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="No space left"):
        ours("2026-03-02T00:00:00.000000+00:00").write(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json"], "no temp file left behind"


def test_atomic_write_leaves_no_file_when_first_write_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_replace(src: object, dst: object) -> None:
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="Permission denied"):
        Manifest.model_validate(legacy_manifest_dict()).write(tmp_path / "manifest.json")
    assert list(tmp_path.iterdir()) == []


def test_missing_manifest_is_explained(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"manifest.json: manifest not found; is this a run directory"):
        Manifest.load(tmp_path / "manifest.json")


def test_truncated_manifest_is_explained(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_text(Manifest.model_validate(legacy_manifest_dict()).to_json()[:100], encoding="utf-8")
    with pytest.raises(
        StoreError, match=r"manifest.json: not valid JSON \(.* at line \d+, column \d+\); restore"
    ):
        Manifest.load(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"run_id": "run-1"}, r"run_id: Value error, invalid run id 'run-1'"),
        ({"sampling_n": None}, r"sampling_n: Input should be a valid integer"),
        ({"hashes": {"source_db": "a"}}, r"hashes.metadata: Field required"),
        ({"started_at": "soon"}, r"started_at: Value error, invalid timestamp 'soon'"),
        ({"model_training_cutoffs": {"m": "June"}}, r"cutoff of 'm' is not an ISO date"),
        ({"cassettes": {"dir": "/abs/cassettes", "mode": "record"}}, r"cassettes.dir: .*relative path"),
        ({"grid": {"r_list": [5]}}, r"grid.c_list: Field required"),
        (
            {"schema_version": 6},
            r"schema_version: Value error, schema version 6 is not one this oracleproto reads",
        ),
    ],
)
def test_invalid_manifest_names_the_key(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(legacy_manifest_dict() | change), encoding="utf-8")
    with pytest.raises(StoreError, match=rf"{re.escape(str(path))}: not a valid run manifest .*{message}"):
        Manifest.load(path)


def test_non_object_manifest(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(StoreError, match="expected a JSON object at the top level, got list"):
        Manifest.load(path)
