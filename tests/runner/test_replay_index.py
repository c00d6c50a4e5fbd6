"""A large run's replay is served from its ``cache/`` index: built on the first replay, used after."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import pytest

from oracleproto.transport import replay_index
from oracleproto.transport.index import CacheIndex, fingerprint
from oracleproto.transport.replay_index import REPLAY_INDEX_DIR, replay_index_dir
from tests.runner.conftest import replay_offline


def test_second_replay_uses_the_index_and_still_matches(
    tmp_path: Path, record_sim: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = record_sim(tmp_path / "rec", models=1, samples=1, analysis=False)
    original = summary.run.root
    monkeypatch.setattr(replay_index, "REPLAY_INDEX_MIN_BYTES", 0)  # the demo-sized run counts as large
    cache_root = tmp_path / "cache"
    reports = []
    for i in range(2):
        reports.append(replay_offline(original, tmp_path / f"out{i}", cache_root=cache_root))
    assert all(r.ok for r in reports), [c for r in reports for c in r.checks if not c.ok]
    [built] = list((cache_root / REPLAY_INDEX_DIR).iterdir())
    assert built == replay_index_dir(cache_root, fingerprint(original / "cassettes"))
    index = CacheIndex(built)
    assert index.is_fresh(fingerprint(original / "cassettes")) and index.summary() is not None
    index.close()
    # Both replays report the same savings, the second from the index summary alone.
    first, second = (r.summary.cassettes for r in reports)
    assert first is not None and second is not None and first.channels == second.channels


def test_small_runs_replay_without_an_index(tmp_path: Path, record_sim: Any) -> None:
    summary = record_sim(tmp_path / "rec", models=1, samples=1, analysis=False)
    report = replay_offline(summary.run.root, tmp_path / "out", cache_root=tmp_path / "cache")
    assert report.ok and not (tmp_path / "cache").exists()


def test_a_replay_builds_its_index_in_worker_processes_and_still_matches(
    tmp_path: Path, record_sim: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The build runs inside the replay's event loop; two processes share the files out.
    summary = record_sim(tmp_path / "rec", models=2, samples=1, analysis=False)
    monkeypatch.setattr(replay_index, "REPLAY_INDEX_MIN_BYTES", 0)
    monkeypatch.setattr(replay_index, "build_workers", lambda files, requested=None: 2)
    report = replay_offline(summary.run.root, tmp_path / "out", cache_root=tmp_path / "cache")
    assert report.ok, [c for c in report.checks if not c.ok]
    assert multiprocessing.active_children() == []
    [built] = list((tmp_path / "cache" / REPLAY_INDEX_DIR).iterdir())
    index = CacheIndex(built)
    assert index.is_fresh(fingerprint(summary.run.root / "cassettes")) and index.summary() is not None
    index.close()
