"""Family A and validity metrics, hand-computed on the synthetic two-model run (arithmetic inline)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from conftest import ALPHA, BETA

from oracleproto.analysis import family_a as fa
from oracleproto.analysis.conventions import Convention
from oracleproto.analysis.reader import read_run
from oracleproto.analysis.trials import TrialTable

P, R = Convention.PAPER, Convention.REFERENCE_V4


def tables(run: Path) -> dict[str, TrialTable]:
    return {m.slug: m.table for m in read_run(run).models}


def test_bucket_exam_and_composite(main_run: Path) -> None:
    t = tables(main_run)[ALPHA]
    buckets = fa.bucket_exam(t)
    # q1 [A,A,B] gold A → 2/3; q2 [B, FAIL, ERR] gold B → counted B=1, FAIL=0 → 1/2
    assert buckets["yes_no"] == pytest.approx((Fraction(2, 3) + Fraction(1, 2)) / 2)
    assert buckets["binary"] == pytest.approx(1.0)
    # q4 [C, D, CUT] gold C → 1/2; q5 [B, C, A] gold A → 1/3
    assert buckets["mc_single"] == pytest.approx((Fraction(1, 2) + Fraction(1, 3)) / 2)
    # q6 gold {A,C}: A → 1/2, AC → 1, AB (false positive) → 0; q7 gold {B,C,D}: BC 2/3, BCD 1, BC 2/3
    q6, q7 = Fraction(1, 2), (Fraction(2, 3) + 1 + Fraction(2, 3)) / 3
    assert buckets["mc_multi"] == pytest.approx((q6 + q7) / 2)
    mc = (Fraction(1, 2) + Fraction(1, 3) + q6 + q7) / 4
    assert buckets["mc"] == pytest.approx(mc)
    yes_no = (Fraction(2, 3) + Fraction(1, 2)) / 2
    assert fa.composite_accuracy(buckets, P) == pytest.approx(
        Fraction(15, 100) * yes_no + Fraction(15, 100) * 1 + Fraction(70, 100) * mc
    )
    mc_single, mc_multi = (Fraction(1, 2) + Fraction(1, 3)) / 2, (q6 + q7) / 2
    assert fa.composite_accuracy(buckets, R) == pytest.approx(
        Fraction(15, 100) * yes_no
        + Fraction(15, 100)
        + Fraction(28, 100) * mc_single
        + Fraction(42, 100) * mc_multi
    )


def test_empty_bucket_drops_out_and_weights_renormalise(main_run: Path) -> None:
    t = tables(main_run)[BETA]
    buckets = fa.bucket_exam(t)
    assert buckets["binary"] is None  # q3 is cutoff-excluded in every sample
    # yes/no: q1 [B,B,B] gold A → 0; q2 [B,B,A] gold B → 2/3 ⇒ 1/3. mc: q4 1, q5 2/3, q6 [ACE,AC,FAIL] → 1/3
    # q7 has only call errors and drops out.
    assert buckets["yes_no"] == pytest.approx(1 / 3)
    assert buckets["mc_multi"] == pytest.approx(1 / 3)
    assert fa.composite_accuracy(buckets, P) == pytest.approx((0.15 * (1 / 3) + 0.70 * (2 / 3)) / 0.85)
    assert fa.composite_accuracy(buckets, R) == pytest.approx(
        (0.15 * (1 / 3) + 0.28 * (5 / 6) + 0.42 * (1 / 3)) / (0.15 + 0.28 + 0.42)
    )
    assert fa.composite_accuracy({}, P) is None


def test_pass_family(main_run: Path) -> None:
    t = tables(main_run)[ALPHA]
    # paper: per-question mean of c over counted trials, then mean over 7 questions
    per_q = [
        Fraction(2, 3),
        Fraction(1, 2),
        Fraction(1),
        Fraction(1, 2),
        Fraction(1, 3),
        Fraction(1, 3),
        Fraction(1, 3),
    ]
    assert fa.pass_at_1(t, P) == pytest.approx(sum(per_q) / 7)
    # reference-v4: pooled over resolvable trials: correct 2+1+3+1+1+1+1 = 10 of 3+1+3+2+3+3+3 = 18
    assert fa.pass_at_1(t, R) == pytest.approx(10 / 18)
    assert fa.pass_any(t, P) == pytest.approx(1.0)
    assert fa.pass_all(t, P) == pytest.approx(1 / 7)  # only q3 is correct in every counted trial
    assert fa.pass_all(t, R) == pytest.approx(1 / 7)
    # at least majority (2 of 3 correct): q1, q3 → 2 of 7
    assert fa.pass_at_least_majority(t) == pytest.approx(2 / 7)


def test_pass_all_differs_between_conventions() -> None:
    # one question, n = 2: one correct trial and one call error
    import numpy as np

    from oracleproto.analysis.trials import TrialState

    t = TrialTable(
        question_ids=("q",),
        bucket=np.array([0]),
        question_type=("yes_no",),
        k=np.array([2]),
        gold=np.array([[True, False]]),
        state=np.array([[TrialState.PARSED, TrialState.CALL_ERROR]]),
        pred=np.array([[[True, False], [False, False]]]),
        **{f: np.zeros((1, 2), dtype=np.int64) for f in _INTS},
    )
    assert fa.pass_all(t, P) == 1.0  # AND over counted trials (the error left the denominator)
    assert fa.pass_all(t, R) == 0.0  # needs n resolvable trials


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


def test_cohen_kappa(main_run: Path) -> None:
    t = tables(main_run)[ALPHA]
    # paper: 19 counted trials, 10 correct; p_e = (3·½ + 2·½ + 3·½ + 2·¼ + 3·⅓ + 3·½ + 3·½)/19 = 8.5/19
    assert fa.cohen_kappa(t, P) == pytest.approx((10 / 19 - 8.5 / 19) / (1 - 8.5 / 19))
    # reference-v4: 18 resolvable trials, 10 correct; p_e = (8.5 − ½ for the parse failure)/18 = 8/18
    assert fa.cohen_kappa(t, R) == pytest.approx((10 / 18 - 8 / 18) / (1 - 8 / 18))


def test_fleiss_kappa(main_run: Path) -> None:
    t = tables(main_run)[ALPHA]
    # paper. k=2 stratum: q1 (A,A,B) P=(4+1−3)/6=⅓, q3 (B,B,B) P=1, P̄=⅔; votes A2 B4 → P_e=5/9 → κ=¼ (2 q)
    # k=4: q4 (C,D) P=0, P_e=½ → κ=−1 (1 q); k=3: q5 (B,C,A) P=0, P_e=⅓ → κ=−½ (1 q)
    # multi per letter over q6 [A|AC|AB], q7 [BC|BCD|BC]: A → 1, B → ¼, C → ¼, D → −⅕, E undefined
    multi = (1 + 0.25 + 0.25 - 0.2) / 4
    assert fa.fleiss_kappa(t, P) == pytest.approx((0.25 * 2 - 1 - 0.5 + multi * 2) / 6)
    # reference-v4: single pool (first letters, same strata) = (¼·2 − 1 − ½)/4 = −¼
    # multi: per question mean over labels of 1 (unanimous) or −1/(K−1) = −½
    # q6: A 1, B −½, C −½, D 1, E 1 → 0.4; q7: A 1, B 1, C 1, D −½ → 0.625
    single, multi_ref = -0.25, (0.4 + 0.625) / 2
    assert fa.fleiss_kappa(t, R) == pytest.approx((single * 5 + multi_ref * 2) / 7)


def test_hamming_majority_entropy_vci(main_run: Path) -> None:
    t = tables(main_run)[ALPHA]
    # q6 (k=5, gold AC): A 0.8, AC 1, AB 0.6; q7 (k=4, gold BCD): BC 0.75, BCD 1, BC 0.75
    assert fa.hamming_score(t) == pytest.approx((0.8 + 1 + 0.6 + 0.75 + 1 + 0.75) / 6)
    # kept (untied) questions: q1 A ✓, q2 B ✓, q3 B ✓, q7 BC ✗; q4, q5, q6 tied → dropped
    assert fa.majority_vote_accuracy(t) == pytest.approx(3 / 4)
    import math

    h = lambda p: -(p * math.log2(p) + (1 - p) * math.log2(1 - p))  # noqa: E731
    per_q = [h(2 / 3), 0, 0, 1, math.log2(3), (2 * h(1 / 3)) / 5, h(1 / 3) / 4]
    assert fa.mean_entropy(t, P) == pytest.approx(sum(per_q) / 7)
    # reference-v4 drops q2 (K_eff = 1)
    assert fa.mean_entropy(t, R) == pytest.approx((sum(per_q) - per_q[1]) / 6)
    vci = [2 / 3, 1, 1, 1 / 2, 1 / 3, 1 / 3, 2 / 3]
    assert fa.vci(t, P) == pytest.approx(sum(vci) / 7)
    assert fa.vci(t, R) == pytest.approx((sum(vci) - 1) / 6)


def test_reference_entropy_uses_first_letter() -> None:
    import numpy as np

    from oracleproto.analysis.trials import TrialState

    # single-answer question boxed {A,B} and {A}: paper sees two categories (1 bit), v4 sees A twice (0)
    t = TrialTable(
        question_ids=("q",),
        bucket=np.array([2]),
        question_type=("multiple_choice",),
        k=np.array([3]),
        gold=np.array([[True, False, False]]),
        state=np.full((1, 2), TrialState.PARSED),
        pred=np.array([[[True, True, False], [True, False, False]]]),
        **{f: np.zeros((1, 2), dtype=np.int64) for f in _INTS},
    )
    assert fa.mean_entropy(t, P) == pytest.approx(1.0)
    assert fa.mean_entropy(t, R) == pytest.approx(0.0)


def test_validity(main_run: Path) -> None:
    t = tables(main_run)[ALPHA]
    v = fa.validity(t, P)
    # 21 slots: 1 cutoff, 1 call error, 1 parse failure, 18 parsed
    assert v["evaluability_rate"] == pytest.approx(18 / 19)
    assert v["parse_failure_rate"] == pytest.approx(1 / 19)
    assert v["error_rate"] == pytest.approx(1 / 20)
    r = fa.validity(t, R)
    assert r["parse_failure_rate"] == pytest.approx(1 / 20)
    assert r["resolvable_rate"] == pytest.approx(18 / 20)
    assert r["avg_tool_calls"] == pytest.approx(19 / 20)  # the call error contributes its 0
    assert v["avg_tool_calls"] == pytest.approx(1.0)


def test_undefined_metrics_are_none(main_run: Path) -> None:
    t = tables(main_run)[BETA]
    only_single = TrialTable(**_single_only(t))  # type: ignore[arg-type]
    assert fa.hamming_score(only_single) is None
    assert fa.bucket_exam(only_single)["mc_multi"] is None


def _single_only(t: TrialTable) -> dict[str, object]:
    import numpy as np

    keep = np.flatnonzero(~t.multi)
    out: dict[str, object] = {}
    for name in TrialTable.__dataclass_fields__:
        value = getattr(t, name)
        if name in {"question_ids", "question_type"}:
            out[name] = tuple(value[i] for i in keep)
        elif name in ("belief_final", "belief_trace", "error_kind"):
            out[name] = tuple(value[i] for i in keep) if value else ()
        else:
            out[name] = value[keep]
    return out
