"""The demo run's helpers (``verify/demo.py``): where it is found, fetched, extracted, sealed, recorded.

In-process and cheap: archives are packed from a one-file run folder, and ``record_demo`` runs
against the real simulator with the runner replaced by one that writes a small run folder, so
what it is asked (options, seed, clock) and what it does afterwards (seal, replace) are checked.
"""

from __future__ import annotations

import errno
import hashlib
import random
import sqlite3
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from oracleproto.analysis import postrun
from oracleproto.dataset.demo import demo_db_path
from oracleproto.demo_archive import DemoArchiveError, write_archive
from oracleproto.errors import StoreError
from oracleproto.primitives.clock import SystemClock
from oracleproto.runner import execute
from oracleproto.runner.options import RunOptions
from oracleproto.settings.model import AnalysisSettings, Settings
from oracleproto.sim import harness, server
from oracleproto.sim.harness import SimRunSpec
from oracleproto.sim.server import SimConfig
from oracleproto.store import RunDir
from oracleproto.verify import demo
from oracleproto.verify.attest import check_files, load_attestation
from oracleproto.verify.demo import (
    DEMO_RUN_ID,
    demo_cache_dir,
    fetch_demo,
    find_demo_run,
    make_publishable,
    record_demo,
    source_checkout,
)
from oracleproto.verify.findings import passed

DEMO = Path("cassettes") / "demo" / DEMO_RUN_ID


def tiny_run(parent: Path, name: str = DEMO_RUN_ID) -> Path:
    run = parent / name
    run.mkdir(parents=True)
    (run / "manifest.json").write_text('{"run_id": "tiny"}\n', encoding="utf-8")
    return run


def tiny_archive(tmp_path: Path, name: str = DEMO_RUN_ID) -> Path:
    return write_archive(tiny_run(tmp_path / "src", name), tmp_path / f"{name}.tar.xz")


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def no_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installation without the source checkout's demo and without a packaged archive."""
    monkeypatch.setattr(demo, "source_checkout", lambda: tmp_path / "no-checkout")
    monkeypatch.setattr(demo, "packaged_archive", lambda: None)


# --- finding the demo -----------------------------------------------------------------------------


def test_the_source_checkout_is_the_repository() -> None:
    root = source_checkout()
    assert Path(demo.__file__).resolve().relative_to(root) == Path("oracleproto", "verify", "demo.py")
    assert (root / "cassettes" / "demo").is_dir()


def test_the_checkouts_demo_comes_first(tmp_path: Path) -> None:
    tiny_run(tmp_path / "cassettes" / "demo")
    assert find_demo_run(cwd=tmp_path) == source_checkout() / DEMO


def test_the_demo_under_the_working_folder_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_checkout: None
) -> None:
    tiny_run(tmp_path / "here" / "cassettes" / "demo")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert find_demo_run(cwd=tmp_path / "here") == tmp_path / "here" / DEMO
    monkeypatch.chdir(tmp_path / "here")
    assert find_demo_run() == tmp_path / "here" / DEMO


def test_a_folder_without_a_manifest_is_not_the_demo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_checkout: None
) -> None:
    (tmp_path / DEMO).mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError) as info:
        find_demo_run()
    assert str(info.value) == (
        f"the demo run is not here (tried {tmp_path / 'no-checkout' / DEMO}, {tmp_path / DEMO}) and this "
        "installation ships no demo archive; run from a clone of the repository, install the wheel, or "
        "record it with `make demo-record`"
    )


def test_the_packaged_archive_is_extracted_into_a_cache_folder_named_by_its_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_checkout: None
) -> None:
    archive = tiny_archive(tmp_path)
    monkeypatch.setattr(demo, "packaged_archive", lambda: archive)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    run = find_demo_run(cwd=tmp_path)
    assert run == tmp_path / "cache" / "oracleproto" / "demo" / digest[:16] / DEMO_RUN_ID
    assert files(run) == {"manifest.json": b'{"run_id": "tiny"}\n'}


def test_the_cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert demo_cache_dir() == tmp_path / "xdg" / "oracleproto" / "demo"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    assert demo_cache_dir() == tmp_path / "home" / ".cache" / "oracleproto" / "demo"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert demo_cache_dir() == tmp_path / "home" / ".cache" / "oracleproto" / "demo"


# --- extracting the archive -----------------------------------------------------------------------


def test_an_archive_of_another_run_is_refused(tmp_path: Path) -> None:
    archive = tiny_archive(tmp_path, "20250101-000000-0000")
    with pytest.raises(StoreError) as info:
        demo._extract(archive, tmp_path / "out")
    assert str(info.value) == (
        f"{archive}: holds run 20250101-000000-0000, expected {DEMO_RUN_ID}; reinstall oracleproto"
    )


def test_a_damaged_archive_is_a_store_error_with_its_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def damaged(archive: Path, parent: Path) -> Path:
        raise DemoArchiveError(f"{archive}: member '../x' leaves the run folder")

    monkeypatch.setattr(demo, "extract_archive", damaged)
    with pytest.raises(StoreError) as info:
        demo._extract(tmp_path / "a.tar.xz", tmp_path / "out")
    assert str(info.value) == f"{tmp_path / 'a.tar.xz'}: member '../x' leaves the run folder"


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (PermissionError(errno.EACCES, "Permission denied"), "Permission denied"),
        (OSError("disk gone"), "disk gone"),
    ],
)
def test_a_cache_that_cannot_be_written_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: OSError, said: str
) -> None:
    def refuse(archive: Path, parent: Path) -> Path:
        raise error

    monkeypatch.setattr(demo, "extract_archive", refuse)
    with pytest.raises(StoreError) as info:
        demo._extract(tmp_path / "a.tar.xz", tmp_path / "cache")
    assert str(info.value) == (
        f"cannot extract the packaged demo run into {tmp_path / 'cache'} ({said}); set XDG_CACHE_HOME to a "
        "writable folder, or run `oracleproto demo fetch` here"
    )


# --- fetching the demo ----------------------------------------------------------------------------


def test_fetch_copies_the_checkouts_demo_into_a_new_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(demo, "packaged_archive", lambda: None)
    target = fetch_demo(tmp_path / "new")
    assert target == tmp_path / "new" / DEMO
    assert files(target) == files(source_checkout() / DEMO)


def test_fetch_refuses_an_existing_copy_unless_forced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(demo, "packaged_archive", lambda: None)
    stale = tiny_run(tmp_path / "cassettes" / "demo")
    (stale / "stale.txt").write_text("x", encoding="utf-8")
    with pytest.raises(StoreError) as info:
        fetch_demo(tmp_path)
    assert str(info.value) == (
        f"{stale} already exists; it is the demo run (`oracleproto replay demo` uses it), or pass --force to "
        "replace it"
    )
    assert fetch_demo(tmp_path, force=True) == stale
    assert files(stale) == files(source_checkout() / DEMO)


def test_fetch_extracts_the_packaged_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = tiny_archive(tmp_path)
    monkeypatch.setattr(demo, "packaged_archive", lambda: archive)
    target = fetch_demo(tmp_path / "dest")
    assert target == tmp_path / "dest" / DEMO
    assert files(target) == {"manifest.json": b'{"run_id": "tiny"}\n'}


def test_fetch_without_any_demo_is_refused(tmp_path: Path, no_checkout: None) -> None:
    with pytest.raises(StoreError) as info:
        fetch_demo(tmp_path)
    assert str(info.value) == "this installation ships no demo run; install the wheel or use a clone"
    assert not (tmp_path / "cassettes").exists()


# --- sealing a recorded run -----------------------------------------------------------------------


def write_wal_db(path: Path) -> None:
    """A WAL-mode DB with free pages (rows deleted), as a recording leaves it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
        conn.executemany("INSERT INTO t (v) VALUES (?)", [("x" * 2000,) for _ in range(50)])
        conn.commit()
        conn.execute("DELETE FROM t WHERE id > 1")
        conn.commit()
    finally:
        conn.close()


def db_state(path: Path) -> tuple[int, int]:
    """(journal-mode bytes of the header: 1 rollback, 2 WAL; pages on the free list)."""
    header = path.read_bytes()[:100]
    conn = sqlite3.connect(path)
    try:
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    finally:
        conn.close()
    return header[18], int(free)


def test_make_publishable_drops_what_is_not_reproducible_and_seals(tmp_path: Path) -> None:
    run = tmp_path / DEMO_RUN_ID
    write_wal_db(run / "db" / "a.db")
    write_wal_db(run / "db" / "b.db")
    assert db_state(run / "db" / "a.db")[0] == 2 and db_state(run / "db" / "a.db")[1] > 0
    # Side files of no DB too (SQLite itself removes those of a DB it opens).
    junks = (
        "logs/run.log",
        "db/gone.db-wal",
        "db/gone.db-shm",
        "cassettes/x-wal",
        ".lock",
        "cassettes/.journal/1.jsonl",
    )
    for junk in junks:
        (run / junk).parent.mkdir(parents=True, exist_ok=True)
        (run / junk).write_text("junk", encoding="utf-8")
    (run / "cassettes" / "search.yaml").write_text("interactions: []\n", encoding="utf-8")
    (run / "manifest.json").write_text("{}\n", encoding="utf-8")
    make_publishable(run)
    assert sorted(files(run)) == [
        "attestation.json",
        "cassettes/search.yaml",
        "db/a.db",
        "db/b.db",
        "manifest.json",
    ]
    assert sorted(p.relative_to(run).as_posix() for p in run.rglob("*") if p.is_dir()) == ["cassettes", "db"]
    assert db_state(run / "db" / "a.db") == (1, 0)
    assert db_state(run / "db" / "b.db") == (1, 0)
    attestation, check = load_attestation(run / "attestation.json")
    assert check == passed("attestation.json", "4 files attested")
    assert attestation is not None
    assert check_files(run, attestation) == [passed("files ↔ attestation", "4 files byte-identical")]


def test_make_publishable_on_a_run_without_logs_or_journal(tmp_path: Path) -> None:
    run = tmp_path / DEMO_RUN_ID
    (run / "cassettes").mkdir(parents=True)
    (run / "manifest.json").write_text("{}\n", encoding="utf-8")
    make_publishable(run)
    assert sorted(files(run)) == ["attestation.json", "manifest.json"]


def test_the_demos_analysis_pass_writes_the_runs_analysis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(postrun, "write_run_analysis", lambda *args: calls.append(args))
    analysis = AnalysisSettings.from_values({"convention": "reference-v4"})
    settings: Any = SimpleNamespace(analysis=analysis)
    demo._analysis(RunDir(tmp_path, DEMO_RUN_ID), settings)
    assert calls == [(tmp_path, analysis)]


# --- recording ------------------------------------------------------------------------------------


class Recording:
    """What ``record_demo`` handed the simulator, the settings builder and the runner."""

    def __init__(self) -> None:
        self.configs: list[SimConfig] = []
        self.specs: list[tuple[Any, SimRunSpec, Settings]] = []
        self.runs: list[tuple[RunOptions, Any, Any]] = []
        self.simulators: list[Any] = []


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> Recording:
    seen = Recording()
    real_settings = harness.simulated_settings

    class Simulator(server.Simulator):
        def __init__(self, config: SimConfig, **kwargs: Any) -> None:
            seen.configs.append(config)
            seen.simulators.append(self)
            super().__init__(config, **kwargs)

    def simulated_settings(sim: Any, spec: SimRunSpec) -> Settings:
        settings = real_settings(sim, spec)
        seen.specs.append((sim, spec, settings))
        return settings

    async def execute_run(options: RunOptions, *, clock: Any, rand: Any) -> None:
        # A recorded run as the runner leaves it: logs, a WAL DB, a journal, a lock.
        seen.runs.append((options, clock, rand))
        assert options.run_id is not None
        run = options.runs_root / options.run_id
        write_wal_db(run / "db" / "m.db")
        for name in ("logs/r.log", ".lock", "cassettes/.journal/j.jsonl"):
            (run / name).parent.mkdir(parents=True, exist_ok=True)
            (run / name).write_text("x", encoding="utf-8")
        (run / "manifest.json").write_text("{}\n", encoding="utf-8")

    monkeypatch.setattr(server, "Simulator", Simulator)
    monkeypatch.setattr(harness, "simulated_settings", simulated_settings)
    monkeypatch.setattr(execute, "execute_run", execute_run)
    return seen


def test_record_demo_records_with_the_fixed_seed_and_replaces_the_published_demo(
    tmp_path: Path, recording: Recording
) -> None:
    old = tmp_path / "repo" / "cassettes" / "demo" / "20250101-000000-0000"
    old.mkdir(parents=True)
    messages: list[str] = []
    target = record_demo(tmp_path / "repo", progress=messages.append)
    assert target == tmp_path / "repo" / DEMO
    assert [p.name for p in (tmp_path / "repo" / "cassettes" / "demo").iterdir()] == [DEMO_RUN_ID]
    assert sorted(files(target)) == ["attestation.json", "db/m.db", "manifest.json"]
    assert messages == ["recording against the simulator", "sealing the run"]
    assert recording.configs == [SimConfig(seed=0)]
    ((sim, spec, base),) = recording.specs
    assert sim is recording.simulators[0]
    runs_root = spec.runs_root
    assert runs_root.name.startswith("oracleproto-demo-") and not runs_root.exists()
    assert spec == SimRunSpec(models=3, samples=3, runs_root=runs_root, detector=True)
    ((options, clock, rand),) = recording.runs
    settings = options.settings
    # The message trace is set on explicitly (not left to the default); nothing else changes.
    assert settings.run.write_messages_trace is True
    assert settings.run.model_fields_set == base.run.model_fields_set | {"write_messages_trace"}
    assert vars(settings).keys() == vars(base).keys() and vars(settings.run).keys() == vars(base.run).keys()
    assert settings.model_copy(update={"run": base.run}) == base
    assert options == RunOptions(
        settings=settings,
        source_db=demo_db_path(),
        runs_root=runs_root,
        mode="record",
        run_id=DEMO_RUN_ID,
        progress=True,
        after=demo._analysis,
    )
    assert isinstance(clock, SystemClock)
    expected = random.Random(0)
    assert [rand.random() for _ in range(3)] == [expected.random() for _ in range(3)]


def test_record_demo_can_run_without_the_progress_display(tmp_path: Path, recording: Recording) -> None:
    # And into a repository without a cassettes/ folder yet.
    target = record_demo(tmp_path / "repo", show_progress=False)
    assert target == tmp_path / "repo" / DEMO
    ((options, _, rand),) = recording.runs
    assert options.progress is False
    expected = random.Random(0)
    assert [rand.random() for _ in range(3)] == [expected.random() for _ in range(3)]
