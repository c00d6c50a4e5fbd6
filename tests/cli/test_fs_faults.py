"""File-system faults under the real kernel: full and read-only file systems, ``ulimit -f``,
unreadable files, a run being recorded, and an internal error (a bug) that must not print a traceback.

Full/read-only file systems are small tmpfs mounts (root in CI can mount them); where mounting is
not permitted the same commands run with the fault injected at the temp-file call instead.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# The suite's helper modules sit beside it (appended: never shadows another folder's conftest).
sys.path.append(str(Path(__file__).resolve().parent))
from bad_input_support import RUN_ID, copy_run, invoke, tree

from oracleproto.cli.exits import EXIT_INTERNAL
from oracleproto.dataset.demo import demo_db_path, demo_questions_path
from oracleproto.store import RunDir

ENTRY = "from oracleproto.cli.main import main; main()"


def _mount(path: Path, options: str) -> bool:
    path.mkdir()
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _fill(path: Path) -> None:
    with contextlib.suppress(OSError), (path / "filler").open("wb") as handle:
        while True:
            handle.write(b"\0" * 4096)
            handle.flush()


@contextlib.contextmanager
def faulty_dir(tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory on a full (``enospc``) or read-only (``erofs``) file system."""
    target = tmp_path / kind
    options = "size=64k" if kind == "enospc" else "ro,size=64k"
    mounted = _mount(target, options)
    if not mounted:
        _inject(target, errno.ENOSPC if kind == "enospc" else errno.EROFS, monkeypatch)
    elif kind == "enospc":
        _fill(target)
    try:
        yield target
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(target)], capture_output=True, timeout=30, check=False)


def _inject(target: Path, code: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fallback: temp files and folders created under ``target`` fail with ``code``."""
    real_mkstemp, real_mkdtemp = tempfile.mkstemp, tempfile.mkdtemp

    def guard(real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            folder = kwargs.get("dir")
            if folder is not None and Path(folder).resolve().is_relative_to(target.resolve()):
                raise OSError(code, os.strerror(code), str(folder))
            return real(*args, **kwargs)

        return call

    monkeypatch.setattr(tempfile, "mkstemp", guard(real_mkstemp))
    monkeypatch.setattr(tempfile, "mkdtemp", guard(real_mkdtemp))


WRITERS: dict[str, Callable[[Path], list[str]]] = {
    "dataset-build": lambda d: ["dataset", "build", str(demo_questions_path()), str(d / "o.db")],
    "report": lambda d: ["report", f"runs/{RUN_ID}", "--out", str(d / "an"), "--bootstrap", "0"],
    "bundle-export": lambda d: ["bundle", "export", f"runs/{RUN_ID}", str(d / "b.tar.gz")],
}
MEANING = {"enospc": "no space left on the device (ENOSPC)", "erofs": "read-only file system (EROFS)"}


@pytest.mark.parametrize("kind", ["enospc", "erofs"])
@pytest.mark.parametrize("command", sorted(WRITERS))
def test_a_full_or_read_only_file_system_is_a_message_and_leaves_nothing(
    command: str, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    copy_run(cwd)
    with faulty_dir(tmp_path, kind, monkeypatch) as target:
        before = tree(target)
        result = invoke(WRITERS[command](target), {"XDG_STATE_HOME": str(tmp_path / "state")})
        after = tree(target)
    assert "Traceback" not in result.output
    assert result.exit_code == 2, result.output
    # SQLite reports a full disk met mid-write as SQLITE_FULL, not as errno ENOSPC
    sqlite_full = command == "dataset-build" and "database or disk is full" in result.output
    assert MEANING[kind] in result.output or sqlite_full, result.output
    assert "cannot write" in result.output
    assert after == before, f"left behind: {sorted(after - before)}"


def _run_limited(args: list[str], cwd: Path, limit: int) -> subprocess.CompletedProcess[str]:
    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {**os.environ, "XDG_STATE_HOME": str(cwd / ".state")}
    return subprocess.run(
        [sys.executable, "-c", ENTRY, *args],
        cwd=cwd,
        env=env,
        preexec_fn=limit_file_size,  # the child limits only itself
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["dataset", "build", str(demo_questions_path()), "o.db"], "past the file-size limit (ulimit -f)"),
        (["render", "demo", "--json"], ""),  # writes only to a pipe: the limit does not apply
        (
            ["report", f"runs/{RUN_ID}", "--out", "an", "--bootstrap", "0"],
            "cannot write an: file too large (the file-size limit, `ulimit -f`, was reached) (EFBIG)",
        ),
    ],
    ids=["dataset-build", "render-to-pipe", "report"],
)
def test_ulimit_f_is_a_message_not_a_killed_process(args: list[str], message: str, tmp_path: Path) -> None:
    copy_run(tmp_path)
    before = tree(tmp_path)
    done = _run_limited(args, tmp_path, 16 * 1024)
    assert "Traceback" not in done.stderr
    if not message:
        assert done.returncode == 0, done.stderr
        return
    assert done.returncode == 2, (done.returncode, done.stderr)  # not -SIGXFSZ
    assert message in done.stderr
    assert tree(tmp_path) == before, sorted(tree(tmp_path) - before)


# Root reads a chmod-000 file anyway; without these capabilities (as a reviewer's own account) it cannot.
_WITHOUT_DAC = [
    "setpriv",
    "--bounding-set=-dac_override,-dac_read_search",
    "--inh-caps=-dac_override,-dac_read_search",
]


def test_an_unreadable_dataset_is_a_message(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    db.write_bytes(demo_db_path().read_bytes())
    db.chmod(0)
    prefix = _WITHOUT_DAC if os.geteuid() == 0 else []
    done = subprocess.run(
        [*prefix, sys.executable, "-c", ENTRY, "dataset", "validate", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    assert "permission denied; make the file readable" in done.stderr


@pytest.mark.parametrize(
    ("args", "then"),
    [
        (["verify", "{run}", "--quiet"], "verify the run"),
        (["cassettes", "gc", "{run}"], "collect its garbage"),
        (["report", "{run}", "--bootstrap", "0"], "report on it"),
        (["replay", "{run}", "--out", "{out}", "--no-progress"], "replay it"),
    ],
    ids=["verify", "gc", "report", "replay"],
)
def test_a_run_being_recorded_is_refused_naming_the_recording_process(
    args: list[str], then: str, tmp_path: Path
) -> None:
    run = RunDir.open(copy_run(tmp_path))
    before = tree(tmp_path)
    with run.writer_lock():
        result = invoke([a.format(run=run.root, out=tmp_path / "out") for a in args], {})
    assert result.exit_code == 2, result.output
    assert f"run {RUN_ID} is being recorded right now by another process (pid {os.getpid()}" in result.output
    assert f"wait for that process to finish, then {then}" in result.output
    assert "resume it" not in result.output
    assert tree(tmp_path) == before | {f"runs/{RUN_ID}/.lock"}


def test_an_internal_error_prints_one_line_and_logs_the_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object, **__: object) -> None:
        raise ZeroDivisionError("planted bug")

    monkeypatch.setattr("oracleproto.cli.dataset.validate_db", broken)
    monkeypatch.setattr("oracleproto.cli.failures.last_run_log", lambda: None)
    state = tmp_path / "state"
    result = invoke(["dataset", "validate", "demo"], {"XDG_STATE_HOME": str(state)})
    assert result.exit_code == EXIT_INTERNAL
    assert "Traceback" not in result.output
    (line,) = result.output.splitlines()
    assert line.startswith("internal error: ZeroDivisionError: planted bug — this is a bug in oracleproto")
    (crash,) = (state / "oracleproto").glob("crash-*.log")
    assert f"the traceback is in {crash}" in line
    text = crash.read_text(encoding="utf-8")
    assert text.startswith("Traceback (most recent call last):") and "planted bug" in text


def test_an_internal_error_during_a_run_goes_to_the_run_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "run.log"
    log.write_text('{"event": "run_started"}\n', encoding="utf-8")

    def broken(*_: object, **__: object) -> None:
        raise KeyError("planted")

    monkeypatch.setattr("oracleproto.cli.dataset.validate_db", broken)
    monkeypatch.setattr("oracleproto.cli.failures.last_run_log", lambda: log)
    result = invoke(["dataset", "validate", "demo"], {"XDG_STATE_HOME": str(tmp_path / "state")})
    assert result.exit_code == EXIT_INTERNAL
    assert f"the traceback is in {log}" in result.output
    assert "Traceback" not in result.output
    last = log.read_text(encoding="utf-8").splitlines()[-1]
    assert '"event": "internal_error"' in last and "KeyError" in last
    assert not (tmp_path / "state").exists()


@pytest.mark.parametrize("kind", ["enospc", "erofs"])
def test_a_run_on_a_full_or_read_only_disk_names_the_run_and_the_fix(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = "20260301-120000-0a1f"
    args = [
        "sim",
        "run",
        "--personas",
        "1",
        "--samples",
        "1",
        "--no-detector",
        "--no-progress",
        "--no-report",
    ]
    with faulty_dir(tmp_path, kind, monkeypatch) as target:
        if not os.path.ismount(target):  # no tmpfs: the fault is injected where the run dir is made

            def refuse(*_: object, **__: object) -> None:
                code = errno.ENOSPC if kind == "enospc" else errno.EROFS
                raise OSError(code, os.strerror(code), str(target / run_id))

            monkeypatch.setattr("oracleproto.runner.execute.RunDir.create", refuse)
        before = tree(target)
        result = invoke([*args, "--runs-root", str(target), "--run-id", run_id], {})
        left = tree(target) - before
    assert "Traceback" not in result.output
    assert result.exit_code == 2, result.output
    assert f"run {run_id}: " in result.output and MEANING[kind] in result.output
    if left:  # a full disk may leave the run directory it began: it is resumable, and the message says so
        assert kind == "enospc" and all(p.startswith(run_id) for p in left), left
        assert f"rerun with --run-id {run_id} to resume" in result.output
