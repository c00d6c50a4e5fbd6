"""Golden snapshots of every table (Tables 1–5, the pairs) and summary.json, both conventions, n = 1, 3, 5."""

from __future__ import annotations

from pathlib import Path

import pytest
from builder import CUT, ERR, FAIL, RunSpec, ok, write_run
from conftest import main_spec
from syrupy.assertion import SnapshotAssertion

from oracleproto.analysis.cost import load_prices
from oracleproto.analysis.pair_tables import PAIR_RENDERERS
from oracleproto.analysis.report import analyze_run
from oracleproto.analysis.setup_tables import SETUP_TABLES, render_setup
from oracleproto.analysis.tables import RENDERERS, TABLES
from oracleproto.analysis.writer import summary_json


def n1_spec() -> RunSpec:
    return RunSpec(
        n=1,
        run_id="20260102-030405-0001",
        models={
            "solo/one::r5::c4": {
                "q1": [ok("A")],
                "q2": [FAIL],
                "q3": [ok("A")],
                "q4": [ERR],
                "q5": [ok("A")],
                "q6": [ok("A,C,D")],
                "q7": [ok("C")],
            }
        },
    )


def n5_spec() -> RunSpec:
    return RunSpec(
        n=5,
        run_id="20260102-030405-0005",
        models={
            "five/model::r3::c2": {
                "q1": [ok("A"), ok("A"), ok("B"), ok("B"), ok("A")],
                "q2": [ok("B"), FAIL, ok("B"), ERR, CUT],
                "q3": [ok("B"), ok("A"), ok("B"), ok("A"), FAIL],
                "q4": [ok("C"), ok("C"), ok("C"), ok("C"), ok("C")],
                "q5": [CUT, CUT, CUT, CUT, CUT],
                "q6": [ok("A,C"), ok("A"), ok("C"), ok("A,C"), ok("A,C,E")],
                "q7": [ok("B,D"), ok("B,C,D"), ok("D"), ok("A,B,C,D"), ok("B,C")],
            },
            "five/other::r3::c2": {
                "q1": [ok("B")] * 5,
                "q2": [ok("B")] * 5,
                "q3": [ok("B")] * 5,
                "q4": [ok("A"), ok("B"), ok("C"), ok("D"), ok("C")],
                "q5": [ok("A")] * 5,
                "q6": [ok("A,C")] * 5,
                "q7": [ERR] * 5,
            },
        },
    )


SPECS = {"n3": main_spec, "n1": n1_spec, "n5": n5_spec}


@pytest.mark.parametrize("convention", ["paper", "reference-v4"])
@pytest.mark.parametrize("which", sorted(SPECS))
def test_golden_outputs(
    tmp_path: Path, prices_file: Path, snapshot: SnapshotAssertion, which: str, convention: str
) -> None:
    run = write_run(tmp_path, SPECS[which]())
    result = analyze_run(run, convention, prices=load_prices(prices_file), bootstrap_samples=200, seed=7)
    assert summary_json(result) == snapshot(name="summary.json")
    for suffix, render in sorted(RENDERERS.values()):
        for name in TABLES:
            assert render(result, name) == snapshot(name=f"{name}{suffix}")
    for fmt, (suffix, _) in sorted(RENDERERS.items()):
        for name in SETUP_TABLES:
            assert render_setup(result, name, fmt) == snapshot(name=f"{name}{suffix}")
    for suffix, render_pairs in sorted(PAIR_RENDERERS.values()):
        assert render_pairs(result) == snapshot(name=f"table_pairs{suffix}")
