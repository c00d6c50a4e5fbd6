"""Recorded runs the benchmarks replay, recorded once against the simulator and kept for reruns.

A run is recorded by ``oracleproto sim run`` (zero latency), as a user records one, into
``build/bench-runs/<label>-<key>/`` (outside version control; ``BENCH_RUNS_DIR`` moves it). The key
names what the recording depends on — the dataset's bytes, models × samples, the package version
and the key schema — so a change of any of them records anew; ``BENCH_RERECORD=1`` forces it. The
record time is measured when the run is recorded and kept beside it (``record.json``), so a rerun
reports the figure the cached recording was made in. A recording stopped part-way (the 30 × 300 × 3
one takes minutes on a quiet machine, far longer on a loaded one) is resumed by the next run with
``--run-id``; its ``record.json`` then says ``resumed`` and the time is the last session's only.

The 30 × 300 × 3 run needs 300 questions: :func:`scaled_dataset` writes a DB in the real schema
(``forecast_eval_set_example`` and ``dataset_metadata`` with the eight template keys) whose rows
are the shared 80-question set's rows, each repeated with a fresh id and a marked variant of its
text, so prompts, searches and answers all differ from copy to copy. It is written under
``build/`` at run time and never committed (the shared data stay in ``../shared``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from dataclasses import asdict
from pathlib import Path

from benchmarks.sizes import CLI, REPO, SHARED_DB, Timed, run_child
from oracleproto import __version__
from oracleproto.transport.keys import KEY_SCHEMA_VERSION

#: Where recordings are kept between benchmark runs.
RUNS_DIR = Path(os.environ.get("BENCH_RUNS_DIR", str(REPO / "build" / "bench-runs")))
_TABLE = "forecast_eval_set_example"
_DONE = "record.json"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def scaled_dataset(questions: int, out: Path = RUNS_DIR / "data") -> Path:
    """A ``questions``-row DB in the shared set's schema, built from its rows (cached by content)."""
    if questions <= 80:
        return SHARED_DB
    target = out / f"oracleproto-{questions}-{_digest(SHARED_DB)[:12]}.db"
    if target.is_file():
        return target
    out.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    src = sqlite3.connect(f"file:{SHARED_DB}?mode=ro", uri=True)
    dst = sqlite3.connect(tmp)
    try:
        with dst:
            for (sql,) in src.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid"):
                dst.execute(sql)
            rows = src.execute(f"SELECT * FROM {_TABLE} ORDER BY id").fetchall()
            cols = [d[0] for d in src.execute(f"SELECT * FROM {_TABLE} LIMIT 1").description]
            event = cols.index("event")
            made = []
            for i in range(questions):
                row = list(rows[i % len(rows)])
                copy = i // len(rows)
                if copy:
                    row[0] = hashlib.sha256(f"{row[0]}:{copy}".encode()).hexdigest()[:24]
                    row[event] = f"{row[event]} (benchmark variant {copy})"
                made.append(row)
            dst.executemany(f"INSERT INTO {_TABLE} VALUES ({','.join('?' * len(cols))})", made)
            meta = src.execute("SELECT * FROM dataset_metadata").fetchall()
            for m in meta:
                dst.execute("INSERT INTO dataset_metadata VALUES (?,?,?,?,?,?)", (*m[:3], questions, *m[4:]))
    finally:
        src.close()
        dst.close()
    tmp.replace(target)
    return target


def _key(dataset: Path, models: int, samples: int) -> str:
    facts = {
        "dataset": _digest(dataset),
        "models": models,
        "samples": samples,
        "version": __version__,
        "key_schema": KEY_SCHEMA_VERSION,
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:12]


def recorded(models: int, questions: int, samples: int = 3) -> tuple[Path, Timed, bool]:
    """The run dir of models × questions × samples (recorded now if not kept), its record timing,
    and whether it was recorded in this call."""
    dataset = scaled_dataset(questions)
    folder = RUNS_DIR / f"{models}x{questions}x{samples}-{_key(dataset, models, samples)}"
    done = folder / _DONE
    if done.is_file() and not os.environ.get("BENCH_RERECORD"):
        facts = json.loads(done.read_text())
        return folder / facts["run"], Timed(**facts["timed"]), False
    root = folder / "runs"
    args = ["sim", "run", "--dataset", str(dataset), "--personas", str(models), "--samples", str(samples)]
    started = [p for p in root.iterdir() if p.is_dir()] if root.is_dir() else []
    if len(started) == 1 and not os.environ.get("BENCH_RERECORD"):
        # A recording stopped part-way (a session's end): resumed, as a user resumes one; the time
        # kept is then this session's only, and record.json says so.
        timed = run_child(
            [*CLI, *args, "--runs-root", str(root), "--no-progress", "--run-id", started[0].name]
        )
        resumed = True
    else:
        shutil.rmtree(folder, ignore_errors=True)
        timed = run_child([*CLI, *args, "--runs-root", str(root), "--no-progress"])
        resumed = False
    (run,) = [p for p in root.iterdir() if p.is_dir()]
    facts = {"run": str(run.relative_to(folder)), "timed": asdict(timed), "resumed": resumed}
    done.write_text(json.dumps(facts))
    return run, timed, True


def dataset_of(run: Path) -> Path:
    """The source DB a kept run was recorded from (its questions count is in its folder name)."""
    questions = int(run.parents[1].name.split("x")[1])
    return scaled_dataset(questions)


def was_resumed(run: Path) -> bool:
    """True when a kept run's recording was resumed (its record time is its last session's only)."""
    facts = json.loads((run.parents[1] / _DONE).read_text())
    return bool(facts.get("resumed"))
