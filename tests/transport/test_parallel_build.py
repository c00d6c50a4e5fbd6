"""A replay index built by several processes is the sequential build's, row for row and byte for byte."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import textwrap
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import pytest

from oracleproto.errors import CassetteIntegrityError
from oracleproto.primitives.fileio import atomic_write
from oracleproto.transport import parallel_build, replay_index
from oracleproto.transport.fileio import dump_entries
from oracleproto.transport.index import CacheIndex, fingerprint
from oracleproto.transport.layout import all_cassette_files, generation_dir
from oracleproto.transport.parallel_build import build_workers, index_file
from oracleproto.transport.replay_index import is_ready, rebuild_for_replay
from oracleproto.transport.store import CassetteStore
from oracleproto.verify.demo import find_demo_run
from tests.transport.test_index_stream import _check_same_as_parsed, _entry, _multi_generation_set

ROOT = Path(__file__).resolve().parents[2]


def _rows(cache: Path) -> dict[str, Any]:
    """Every row of an index (entry lines as stored, fingerprint, summary)."""
    index = CacheIndex(cache)
    try:
        raw = index._cache  # the stored rows themselves are what is compared
        return {str(key): raw.get(key) for key in raw.iterkeys()}
    finally:
        index.close()


def _build(cassettes: Path, cache: Path, workers: int) -> dict[str, Any]:
    index = CacheIndex(cache)
    try:
        rebuild_for_replay(index, cassettes, fingerprint(cassettes), workers=workers)
    finally:
        index.close()
    return _rows(cache)


def _override_heavy_set(root: Path) -> None:
    """A refresh generation whose file is the largest, so it is indexed before the files it overrides."""
    _multi_generation_set(root)
    big = [
        _entry(f"a{i}", "llm", generation=3, text=f"a-{i} third " + "x" * 4000, cost=0.2) for i in range(8)
    ]
    big.append(_entry("b1", "llm", generation=3, text="b-1 third", cost=None))
    atomic_write(generation_dir(root, 3) / "llm/m_a.yaml", dump_entries(big))


@pytest.mark.parametrize(
    ("fixture", "workers"), [(_multi_generation_set, 2), (_override_heavy_set, 2), (_override_heavy_set, 3)]
)
def test_parallel_build_equals_the_sequential_one_over_generations(
    tmp_path: Path, fixture: Any, workers: int
) -> None:
    cassettes = tmp_path / "cassettes"
    fixture(cassettes)
    sequential = _build(cassettes, tmp_path / "seq", 1)
    assert _build(cassettes, tmp_path / "par", workers) == sequential
    _check_same_as_parsed(cassettes, tmp_path / "check", workers=workers)
    assert multiprocessing.active_children() == []


def test_parallel_build_equals_the_sequential_one_on_the_demo(tmp_path: Path) -> None:
    cassettes = find_demo_run() / "cassettes"
    assert _build(cassettes, tmp_path / "par", 2) == _build(cassettes, tmp_path / "seq", 1)


def test_keys_in_several_files_end_with_the_last_files_entry(tmp_path: Path) -> None:
    # Index the files in reverse load order (the worst order concurrent writers can produce),
    # then settle: every key holds what the parsed store serves.
    cassettes = tmp_path / "cassettes"
    _override_heavy_set(cassettes)
    files = all_cassette_files(cassettes)
    index = CacheIndex(tmp_path / "cache")
    try:
        facts = {i: index_file(index, files[i]) for i in reversed(range(len(files)))}
        stale = index.get("a1")
        assert stale is not None and stale.generation == 0
        replay_index._settle_shared_keys(index, files, [facts[i] for i in range(len(files))])
        parsed = CassetteStore(cassettes, writable=False)
        for entry in parsed.effective_entries():
            assert index.get(entry.key) == entry
    finally:
        index.close()


def _corrupt(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert old in data
    path.write_bytes(data.replace(old, new))


def test_a_corrupt_file_fails_the_parallel_build_as_the_sequential_one(tmp_path: Path) -> None:
    cassettes = tmp_path / "cassettes"
    _override_heavy_set(cassettes)
    files = all_cassette_files(cassettes)
    good = fingerprint(cassettes)
    cache = tmp_path / "cache"
    index = CacheIndex(cache)
    try:
        rebuild_for_replay(index, cassettes, good, workers=2)
        assert is_ready(index, good)
        # Two corrupt files: the first in load order is reported, whichever process met its own first.
        _corrupt(files[1], b"b-2", b"B-2")
        _corrupt(files[-1], b"a-3 third", b"A-3 third")
        bad = fingerprint(cassettes)
        messages = []
        for workers in (1, 2):
            with pytest.raises(CassetteIntegrityError) as raised:
                rebuild_for_replay(index, cassettes, bad, workers=workers)
            messages.append(str(raised.value))
            # No worker's traceback rides along; the index is trusted for neither set of bytes.
            assert type(raised.value.__cause__).__name__ != "_RemoteTraceback"
            assert not index.is_fresh(bad) and not index.is_fresh(good) and index.summary() is None
            assert multiprocessing.active_children() == []
        assert messages[0] == messages[1]
        assert "m_b.yaml, entry #2: entry b2 does not match its digest" in messages[0]
    finally:
        index.close()


def test_worker_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = []
    for i in range(3):
        path = tmp_path / f"f{i}.yaml"
        path.write_bytes(b"x" * 1000)
        files.append(path)
    assert build_workers(files, 4) == 3 and build_workers(files, 0) == 1 and build_workers(files[:1], 2) == 1
    assert build_workers(files) == 1  # a small set stays in this process
    monkeypatch.setattr(parallel_build, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3}, raising=False)
    assert build_workers(files) == parallel_build.MAX_BUILD_WORKERS == 2
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0}, raising=False)
    assert build_workers(files) == 1


def test_a_script_without_a_main_guard_builds_in_parallel(tmp_path: Path) -> None:
    # Spawned workers would re-run a caller's unguarded script; they are started with a blank main.
    cassettes = tmp_path / "cassettes"
    _override_heavy_set(cassettes)
    script = tmp_path / "build.py"
    script.write_text(
        textwrap.dedent(
            f"""
            from pathlib import Path
            from oracleproto.errors import CassetteIntegrityError
            from oracleproto.transport.index import CacheIndex, fingerprint
            from oracleproto.transport.replay_index import rebuild_for_replay
            print("script body ran")
            cassettes = Path({str(cassettes)!r})
            index = CacheIndex(Path({str(tmp_path / "cache")!r}))
            try:
                rebuild_for_replay(index, cassettes, fingerprint(cassettes), workers=2)
                print("built", index.summary()["root_digest"])
            except CassetteIntegrityError as exc:
                print("refused:", exc)
            index.close()
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, check=True)
    root = CassetteStore(cassettes, writable=False).root_digest()
    assert run.stdout == f"script body ran\nbuilt {root}\n" and run.stderr == ""
    _corrupt(all_cassette_files(cassettes)[0], b"a-4", b"A-4")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, check=True)
    assert run.stdout.count("script body ran") == 1 and "refused:" in run.stdout
    assert "m_a.yaml, entry #4: entry a4 does not match its digest" in run.stdout
    assert "Traceback" not in run.stdout + run.stderr


class _BrokenPool:
    """A process pool whose workers die (or never start): every file must come back to the caller."""

    def __init__(self, *, start: bool, **_: object) -> None:
        self.start = start

    def submit(self, *_: object) -> Future[None]:
        if not self.start:
            raise RuntimeError("cannot start a process here")
        fut: Future[None] = Future()
        fut.set_exception(BrokenProcessPool("a worker was killed"))
        return fut

    def shutdown(self, **_: object) -> None:
        pass


@pytest.mark.parametrize("start", [True, False])
def test_files_a_worker_cannot_index_are_indexed_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, start: bool
) -> None:
    cassettes = tmp_path / "cassettes"
    _override_heavy_set(cassettes)
    sequential = _build(cassettes, tmp_path / "seq", 1)
    monkeypatch.setattr(parallel_build, "ProcessPoolExecutor", lambda **kw: _BrokenPool(start=start, **kw))
    assert _build(cassettes, tmp_path / "par", 2) == sequential


def test_a_file_changed_between_its_two_reads_is_refused(tmp_path: Path) -> None:
    cassettes = tmp_path / "cassettes"
    _override_heavy_set(cassettes)
    files = all_cassette_files(cassettes)
    index = CacheIndex(tmp_path / "cache")
    try:
        facts = [index_file(index, path) for path in files]
        # The file settling reads again, rewritten with the same entries (a comment added).
        files[-1].write_bytes(files[-1].read_bytes() + b"# appended\n")
        with pytest.raises(
            CassetteIntegrityError, match=r"m_a\.yaml: changed while the replay index was built"
        ):
            replay_index._settle_shared_keys(index, files, facts)
    finally:
        index.close()
