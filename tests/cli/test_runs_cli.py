"""``oracleproto runs list|show``: every run under a runs root, its state, name, size; ``--json``.

The runs are copies of the demo run put in each state by hand (each under a new run id, so its
seal no longer holds): finished, resumable (no ``finished_at``), failed (a sample that ended in a
call error), damaged (an unreadable manifest), and named with ``label.json`` (as ``run --name/--tag``
writes it). The demo itself is sealed.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.store.label import RunLabel, read_label, write_label

DEMO = Path(__file__).resolve().parents[2] / "cassettes" / "demo" / "20260101-000000-de00"
FINISHED, RESUMABLE, FAILED, DAMAGED = (f"20260102-00000{i}-aaa{i}" for i in range(4))


def _copy(root: Path, run_id: str) -> Path:
    target = root / run_id
    shutil.copytree(DEMO, target)
    manifest = json.loads((target / "manifest.json").read_text(encoding="utf-8"))
    manifest["run_id"] = run_id
    (target / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    finished = _copy(runs, FINISHED)
    write_label(finished, RunLabel("baseline", ("paper", "v1")))
    resumable = _copy(runs, RESUMABLE)
    manifest = json.loads((resumable / "manifest.json").read_text(encoding="utf-8"))
    (resumable / "manifest.json").write_text(json.dumps({**manifest, "finished_at": None}), encoding="utf-8")
    failed = _copy(runs, FAILED)
    db = sorted((failed / "db").glob("*.db"))[0]
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("UPDATE run_results SET s1_error = 'network' WHERE rowid IN (1, 2)")
        conn.commit()
    (_copy(runs, DAMAGED) / "manifest.json").write_text("{not json", encoding="utf-8")
    (runs / "not-a-run").mkdir()
    return runs


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_list_json_gives_every_run_its_state(root: Path) -> None:
    code, out, err = _invoke("runs", "list", "--runs-root", str(root), "--json")
    assert code == 0, err
    document = json.loads(out)
    assert (document["schema"], document["kind"], document["runs_root"]) == (
        "oracleproto-cli/1",
        "runs-list",
        str(root),
    )
    runs = {r["run_id"]: r for r in document["runs"]}
    assert list(runs) == [FINISHED, RESUMABLE, FAILED, DAMAGED]  # oldest first; not-a-run is no run
    assert {k: r["state"] for k, r in runs.items()} == {
        FINISHED: "finished",
        RESUMABLE: "resumable",
        FAILED: "failed",
        DAMAGED: "damaged",
    }
    first = runs[FINISHED]
    assert (first["name"], first["tags"], first["verify"]) == ("baseline", ["paper", "v1"], "changed")
    assert first["models"] == ["sim/careful", "sim/hasty", "sim/sloppy"]
    assert (first["questions"], first["samples"], first["cells"], first["errored_samples"]) == (16, 3, 3, 0)
    assert first["bytes"] > 1_000_000
    assert runs[FAILED]["errored_samples"] == 2
    assert "2 sample(s) ended in a call error" in runs[FAILED]["detail"]
    assert "manifest" in runs[DAMAGED]["detail"]


def test_list_text_is_one_line_per_run(root: Path) -> None:
    code, out, err = _invoke("runs", "list", "--runs-root", str(root))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == [
        "RUN",
        "NAME",
        "STARTED",
        "(UTC)",
        "MODELS",
        "QUESTIONS×N",
        "STATE",
        "VERIFY",
        "SIZE",
    ]
    assert lines[1].startswith(
        f"{FINISHED}  baseline [paper, v1]  2026-11-24 04:25  sim/careful, sim/hasty +1"
    )
    assert lines[1].split()[-5:-2] == ["16×3", "finished", "changed"] and lines[1].endswith(" MB")
    assert [line.split()[0] for line in lines[1:]] == [FINISHED, RESUMABLE, FAILED, DAMAGED]
    assert "4 run(s) under" in err


def test_an_empty_or_missing_root_says_how_to_record_one(tmp_path: Path) -> None:
    code, out, _ = _invoke("runs", "list", "--runs-root", str(tmp_path / "none"))
    assert code == 0 and out.startswith(f"no runs under {tmp_path / 'none'}")
    code, out, _ = _invoke("runs", "list", "--runs-root", str(tmp_path / "none"), "--json")
    assert json.loads(out)["runs"] == []


def test_show_by_name_prefix_and_id(root: Path) -> None:
    for ref in ("baseline", "20260102-000000", FINISHED):
        code, out, err = _invoke("runs", "show", ref, "--runs-root", str(root))
        assert code == 0, err
        assert out.splitlines()[:5] == [
            f"run:       {FINISHED}",
            f"path:      {root / FINISHED}",
            "name:      baseline",
            "tags:      paper, v1",
            "state:     finished (every slot done)",
        ]
    code, out, err = _invoke("runs", "show", RESUMABLE, "--runs-root", str(root), "--json")
    assert code == 0, err
    assert json.loads(out)["state"] == "resumable" and json.loads(out)["kind"] == "runs-show"


def test_show_of_the_demo_says_it_is_sealed() -> None:
    code, out, err = _invoke("runs", "show", "demo")
    assert code == 0, err
    assert "verify:    sealed (attestation.json written when it verified; `oracleproto verify` checks" in out


def test_the_label_is_not_part_of_the_seal(tmp_path: Path) -> None:
    """A name given afterwards changes nothing verify checks, and never reaches a bundle."""
    run = tmp_path / DEMO.name
    shutil.copytree(DEMO, run)
    write_label(run, RunLabel("renamed", ("x",)))
    write_label(run, RunLabel(None, ("y",)))
    assert read_label(run) == RunLabel("renamed", ("x", "y"))
    code, out, err = _invoke("verify", str(run), "--quiet")
    assert code == 0, out + err
    assert out.splitlines()[-1].startswith(f"VERIFIED: {run} (renamed [x, y]) (63 passed")
    code, out, err = _invoke("runs", "show", "renamed", "--runs-root", str(tmp_path), "--json")
    assert code == 0, err
    assert json.loads(out)["verify"] == "sealed"


def test_runs_list_as_a_subprocess(root: Path) -> None:
    """The installed console script, as a user runs it (RUNS_ROOT from the environment)."""
    env = {**os.environ, "RUNS_ROOT": str(root)}
    script = Path(sys.executable).parent / "oracleproto"
    done = subprocess.run(
        [str(script), "runs", "list"], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert [line.split()[0] for line in done.stdout.splitlines()[1:]] == [
        FINISHED,
        RESUMABLE,
        FAILED,
        DAMAGED,
    ]
    assert "Traceback" not in done.stderr
