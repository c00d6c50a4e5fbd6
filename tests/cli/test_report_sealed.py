"""``report`` without ``--out`` never leaves a run that ``verify`` rejects (cli/report_target.py).

On a copy of the demo (sealed, paper): the paper report regenerates the sealed analysis byte for
byte; reference-v4 goes beside it into ``analysis/reference-v4/``; options that would change the
sealed files are refused with the command that writes them elsewhere; ``verify`` passes after each.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli

DEMO = Path(__file__).resolve().parents[2] / "cassettes" / "demo" / "20260101-000000-de00"


@pytest.fixture
def run(tmp_path: Path) -> Path:
    target = tmp_path / "runs" / DEMO.name
    shutil.copytree(DEMO, target)
    return target


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def _digests(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _verified(run: Path) -> str:
    code, out, err = _invoke("verify", str(run), "--quiet")
    assert code == 0, out + err
    last: str = out.splitlines()[-1]
    assert last.startswith("VERIFIED"), out
    return out


def test_reference_v4_goes_beside_and_the_run_still_verifies(run: Path) -> None:
    sealed = _digests(run / "analysis")
    code, out, err = _invoke("report", str(run), "--convention", "reference-v4")
    assert code == 0, err
    assert "went beside it, into analysis/reference-v4/" in err
    assert f"wrote 30 file(s) to {run / 'analysis' / 'reference-v4'}" in err
    assert "reference-v4" in out
    after = _digests(run / "analysis")
    assert {k: v for k, v in after.items() if not k.startswith("reference-v4/")} == sealed
    verified = _verified(run)
    assert "skip  analysis/reference-v4/" in verified
    # The run's own report rewrites analysis/ as verify expects and keeps the folder beside it.
    code, _, err = _invoke("report", str(run))
    assert code == 0, err
    assert _digests(run / "analysis") == after
    _verified(run)


def test_options_that_change_the_sealed_files_are_refused_with_the_command(run: Path) -> None:
    before = _digests(run)
    prices = run.parent / "p.json"
    prices.write_text("{}", encoding="utf-8")
    code, _, err = _invoke("report", str(run), "--bootstrap", "50", "--prices", str(prices))
    assert code == 2
    assert err.startswith("error: --bootstrap, --prices would make the run's analysis/ differ from what")
    command = f"oracleproto report {run} --prices {prices} --bootstrap 50 --out DIR"
    assert f"Write this report elsewhere: {command}" in err
    assert _digests(run) == before
    # The recorded values are not deviations: the run's own bootstrap, seed and credit price.
    code, _, err = _invoke("report", str(run), "--bootstrap", "1000", "--seed", "20260430")
    assert code == 0, err
    _verified(run)


def test_the_demo_by_name_and_points_f1_beside(run: Path) -> None:
    code, _, err = _invoke("report", "20260101", "--runs-root", str(run.parent), "--convention", "points-f1")
    assert code == 0, err
    _verified(run)


@pytest.mark.parametrize("convention", ["paper", "reference-v4", "points-f1"])
def test_report_demo_works_and_never_writes_into_the_published_demo(convention: str) -> None:
    before = _digests(DEMO)
    code, out, err = _invoke("report", "demo", "--convention", convention)
    assert code == 0, err
    assert "### " in out or "|" in out
    assert "demo is the published demo run, which is never written to" in err
    assert _digests(DEMO) == before
