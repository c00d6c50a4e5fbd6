"""reference-v4's earlier consistency rules (analysis revision 3), hand-computed, against paper's.

Entropy buckets: reference-v4 orders its questions (K_eff ≥ 2) by (entropy, question order) and
splits them into equal-count thirds, the first Q mod 3 buckets one larger; paper cuts its
questions (K_eff ≥ 1) by value at the tertile cut-points. Majority-vote gain: reference-v4 has
none at n = 1.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from builder import FAIL, QUESTIONS, RunSpec, ok, write_run

from oracleproto.analysis import family_a as fa
from oracleproto.analysis.conventions import Convention
from oracleproto.analysis.report import analyze_run
from oracleproto.analysis.revisions import summary_revision
from oracleproto.analysis.trials import TrialState, TrialTable
from oracleproto.analysis.writer import summary_json

P, R = Convention.PAPER, Convention.REFERENCE_V4
H_QUARTER = -(0.25 * math.log2(0.25) + 0.75 * math.log2(0.75))  # 0.811278…
_INTS = (
    "prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "tool_calls",
    "react_steps",
    "latency_ms",
    "search_calls",
    "detector_calls",
)
#: Nine yes/no questions (gold A), four trials each: "A"/"B" parsed, "-" a parse failure.
VOTES = (
    "AAAA",  # q1  H 0      4/4
    "BBBB",  # q2  H 0      0/4
    "AAAA",  # q3  H 0      4/4
    "BBBB",  # q4  H 0      0/4  (ties q1–q3; falls into reference-v4's mid by question order)
    "AAAB",  # q5  H 0.811  3/4
    "AAAB",  # q6  H 0.811  3/4
    "AAB-",  # q7  H 0.918  reference 2/3 resolvable, paper 2/4 counted
    "AABB",  # q8  H 1      2/4
    "A---",  # q9  K_eff 1: paper only (H 0, 1/4 counted)
)


def _table() -> TrialTable:
    q, n = len(VOTES), 4
    pred = np.zeros((q, n, 2), dtype=bool)
    state = np.full((q, n), TrialState.PARSED)
    for i, votes in enumerate(VOTES):
        for j, vote in enumerate(votes):
            if vote == "-":
                state[i, j] = TrialState.PARSE_FAIL
            else:
                pred[i, j, "AB".index(vote)] = True
    return TrialTable(
        question_ids=tuple(f"q{i + 1}" for i in range(q)),
        bucket=np.zeros(q, dtype=np.int64),
        question_type=("yes_no",) * q,
        k=np.full(q, 2),
        gold=np.tile([True, False], (q, 1)),
        state=state,
        pred=pred,
        **{f: np.zeros((q, n), dtype=np.int64) for f in _INTS},
    )


def test_reference_v4_splits_eight_questions_three_three_two_by_entropy_then_question_order() -> None:
    buckets = fa.entropy_accuracy_buckets(_table(), R)
    # low q1 q2 q3: (4 + 0 + 4) / 12; mid q4 q5 q6: (0 + 3 + 3) / 12; high q7 q8: (2 + 2) / (3 + 4)
    assert buckets["low"] == {"accuracy": pytest.approx(8 / 12), "questions": 3.0, "upper_entropy": 0.0}
    assert buckets["mid"] == {
        "accuracy": pytest.approx(6 / 12),
        "questions": 3.0,
        "upper_entropy": pytest.approx(H_QUARTER),
    }
    assert buckets["high"] == {"accuracy": pytest.approx(4 / 7), "questions": 2.0, "upper_entropy": 1.0}


def test_paper_cuts_by_value_at_the_tertile_cut_points() -> None:
    buckets = fa.entropy_accuracy_buckets(_table(), P)
    # Nine entropies 0×5, 0.811×2, 0.918, 1 → cut-points 0 and 0.811 (linear quantiles).
    # low q1 q2 q3 q4 q9: per-question means (1 + 0 + 1 + 0 + 1/4) / 5; mid q5 q6; high q7 q8
    assert buckets["low"] == {"accuracy": pytest.approx(2.25 / 5), "questions": 5.0, "upper_entropy": 0.0}
    assert buckets["mid"] == {
        "accuracy": pytest.approx(0.75),
        "questions": 2.0,
        "upper_entropy": pytest.approx(H_QUARTER),
    }
    assert buckets["high"] == {"accuracy": pytest.approx(0.5), "questions": 2.0, "upper_entropy": None}


def test_reference_v4_before_revision_3_cut_by_value_too() -> None:
    buckets = fa.entropy_accuracy_buckets(_table(), R, equal_count=False)
    # Its own population (K_eff ≥ 2, q9 out): 0×4, 0.811×2, 0.918, 1 → cut-points 0 and 0.811.
    # Accuracy is the per-question mean of resolvable trials: low (1 + 0 + 1 + 0) / 4.
    assert {name: b["questions"] for name, b in buckets.items()} == {"low": 4.0, "mid": 2.0, "high": 2.0}
    assert buckets["low"]["accuracy"] == pytest.approx(0.5)
    assert buckets["high"]["accuracy"] == pytest.approx((2 / 3 + 2 / 4) / 2)


@pytest.mark.parametrize(
    ("questions", "sizes"),
    [(2, (1.0, 1.0, 0.0)), (3, (1.0, 1.0, 1.0)), (4, (2.0, 1.0, 1.0)), (5, (2.0, 2.0, 1.0))],
)
def test_the_first_q_mod_3_buckets_get_the_extra_question(questions: int, sizes: tuple[float, ...]) -> None:
    table = _table()
    keep = list(range(questions))
    sub = TrialTable(
        question_ids=tuple(table.question_ids[i] for i in keep),
        bucket=table.bucket[keep],
        question_type=tuple(table.question_type[i] for i in keep),
        k=table.k[keep],
        gold=table.gold[keep],
        state=table.state[keep],
        pred=table.pred[keep],
        **{f: getattr(table, f)[keep] for f in _INTS},
    )
    buckets = fa.entropy_accuracy_buckets(sub, R)
    assert tuple(buckets[name]["questions"] for name in fa.ENTROPY_BUCKETS) == sizes
    # An empty bucket is missing, not zero.
    empty = [b for b in buckets.values() if not b["questions"]]
    assert all(b["accuracy"] is None and b["upper_entropy"] is None for b in empty)


def _n1_run(tmp_path: Path) -> Path:
    # q1 gold A answered A (right), q2 gold B answered A (wrong), q3 a parse failure.
    trials = {"q1": [ok("A")], "q2": [ok("A")], "q3": [FAIL]}
    return write_run(tmp_path, RunSpec(n=1, models={"solo/one::r5::c4": trials}, questions=QUESTIONS[:3]))


def test_majority_vote_gain_at_n_1(tmp_path: Path) -> None:
    run = _n1_run(tmp_path)
    paper = analyze_run(run, P, bootstrap_samples=0).models["solo/one::r5::c4"]
    reference = analyze_run(run, R, bootstrap_samples=0).models["solo/one::r5::c4"]
    older = analyze_run(run, R, bootstrap_samples=0, revision=2).models["solo/one::r5::c4"]
    # MV accuracy: q1 ✓, q2 ✗ (q3 has no vote) → 1/2 under both conventions.
    assert paper["majority_vote_accuracy"] == reference["majority_vote_accuracy"] == pytest.approx(0.5)
    # paper: pass@1 = (1 + 0 + 0) / 3, gain 1/2 − 1/3; reference-v4 has no vote at n = 1.
    assert paper["majority_vote_gain"] == pytest.approx(1 / 2 - 1 / 3)
    assert reference["majority_vote_gain"] is None
    # Revision 2 wrote MV − pooled pass@1 (1/2 − 1/2) there.
    assert older["majority_vote_gain"] == 0.0


def test_summary_records_the_revision_of_its_convention(tmp_path: Path) -> None:
    run = _n1_run(tmp_path)
    # Revision 5 (pairwise tests and ranks of composite accuracy) changed both conventions; revision 6
    # (four-decimal CSVs) only reference-v4.
    assert '"analysis_revision": 5,' in summary_json(analyze_run(run, P, bootstrap_samples=0))
    assert '"analysis_revision": 6,' in summary_json(analyze_run(run, R, bootstrap_samples=0))
    assert '"analysis_revision": 5,' in summary_json(analyze_run(run, R, bootstrap_samples=0, revision=5))
    assert '"analysis_revision": 4,' in summary_json(analyze_run(run, R, bootstrap_samples=0, revision=4))
    assert '"majority_vote_gain": null,' in summary_json(analyze_run(run, R, bootstrap_samples=0))
    assert '"analysis_revision": 3,' in summary_json(analyze_run(run, R, bootstrap_samples=0, revision=3))
    assert '"analysis_revision": 2,' in summary_json(analyze_run(run, R, bootstrap_samples=0, revision=2))
    assert (summary_revision(P), summary_revision(R)) == (5, 6)
