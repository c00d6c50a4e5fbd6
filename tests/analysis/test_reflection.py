"""Reflection A/B: paired deltas between two runs that differ only in the reflection hash."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from builder import write_run
from test_family_bc import GAMMA, belief_spec

from oracleproto.analysis.reader import read_run
from oracleproto.analysis.reflection import reflection_ab
from oracleproto.errors import AnalysisError


def test_reflection_ab_against_itself_shifted(tmp_path: Path) -> None:
    spec_on = belief_spec()
    spec_on.reflection_hash = "aaaaaaaaaaaaaaaa"
    spec_off = belief_spec()
    spec_off.reflection_hash = None
    spec_off.run_id = "20260102-030405-beef"
    # the off run is identical except that gamma's q1 sample 0 believes A at 0.6 instead of 0.8
    q1 = list(spec_off.models[GAMMA]["q1"])
    from dataclasses import replace

    q1[0] = replace(q1[0], belief={"A": 0.6, "B": 0.4})
    spec_off.models[GAMMA]["q1"] = q1
    on = read_run(write_run(tmp_path, spec_on))
    off = read_run(write_run(tmp_path, spec_off))
    out = reflection_ab(on, off, samples=200, seed=1)[GAMMA]
    # BS q1 on = 0.2, off = ((0.6−1)² + 0.4²)/2 = 0.16 → mean (0.16 + 0.36)/2 = 0.26; q6 = 0.022 in both
    bi_on, bi_off = 100 * (1 - math.sqrt((0.2 + 0.022) / 2)), 100 * (1 - math.sqrt((0.26 + 0.022) / 2))
    assert out["delta_bi"]["value"] == pytest.approx(bi_on - bi_off)
    assert out["delta_bi"]["paired_questions"] == 2
    # traces are identical in both runs → Δσ = 0 with a degenerate interval
    assert out["delta_sigma"]["value"] == pytest.approx(0.0)
    assert out["delta_sigma"]["ci"] == pytest.approx((0.0, 0.0))


def test_reflection_ab_rejects_other_differences(tmp_path: Path) -> None:
    spec_on = belief_spec()
    spec_off = belief_spec()
    spec_off.run_id = "20260102-030405-beef"
    on = read_run(write_run(tmp_path, spec_on))
    off = read_run(write_run(tmp_path, spec_off))
    with pytest.raises(AnalysisError, match="both runs have the same reflection_protocol_hash"):
        reflection_ab(on, off)
    spec_b = belief_spec()
    spec_b.run_id = "20260102-030405-cafe"
    spec_b.reflection_hash = None
    spec_b.belief_hash = "0000000000000000"
    other = read_run(write_run(tmp_path, spec_b))
    with pytest.raises(AnalysisError, match="the runs differ in belief_protocol_hash"):
        reflection_ab(on, other)
