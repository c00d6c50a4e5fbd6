"""``oracleproto cassettes ls RUN --sample MODEL QUESTION N``: the entries one sample used."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.verify.demo import find_demo_run


def ls(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["cassettes", "ls", *args])
    return result.exit_code, result.stdout, result.stderr


def react_steps(run: Path, db: str, question: str, sample: int) -> int:
    conn = sqlite3.connect(f"file:{run / 'db' / db}?mode=ro", uri=True)
    (steps,) = conn.execute(
        f"SELECT s{sample}_react_steps FROM run_results WHERE question_id = ?", (question,)
    ).fetchone()
    conn.close()
    return int(steps)


def test_one_sample_lists_its_llm_turns_then_what_it_searched_and_audited() -> None:
    run = find_demo_run()
    code, out, err = ls(str(run), "--sample", "sim/careful", "demo-03", "1")
    assert code == 0, err
    lines = out.splitlines()
    llm = [line for line in lines if "  llm  " in line]
    assert [line.rsplit(" ", 1)[1] for line in llm] == [f"t{k}" for k in range(len(llm))]
    assert len(llm) == react_steps(run, "sim__careful__r5__c4.db", "demo-03", 1)
    assert all("sim/careful::r5::c4 demo-03 s1" in line for line in llm)
    shared = lines[len(llm) :]
    assert shared and all(" search " in line or " detector " in line for line in shared)
    assert all("first asked by" in line for line in shared)


def test_unknown_models_and_samples_are_named() -> None:
    run = str(find_demo_run())
    code, _, err = ls(run, "--sample", "sim/nobody", "demo-03", "1")
    assert code != 0 and "model 'sim/nobody' names 0 of this run's models (sim/careful::r5::c4" in err
    code, _, err = ls(run, "--sample", "sim/careful", "demo-03", "7")
    assert code != 0 and "sim/careful::r5::c4 has no stored sample 7 of question 'demo-03'" in err
