"""FSS: the closed-form chance baseline against brute-force enumeration, and hand-computed skill."""

from __future__ import annotations

import itertools
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from conftest import ALPHA

from oracleproto.analysis import family_a as fa
from oracleproto.analysis.reader import read_run


def brute_force(k: int, m: int) -> float:
    """E[Tversky] over all 2^k equally likely predicted subsets (gold = first m labels)."""
    gold = set(range(m))
    total = 0.0
    for bits in itertools.product((0, 1), repeat=k):
        pred = {i for i, b in enumerate(bits) if b}
        tp, fp, fn = len(pred & gold), len(pred - gold), len(gold - pred)
        total += tp / (tp + 2.0 * fp + 0.5 * fn) if tp else 0.0
    return total / 2**k


@pytest.mark.parametrize(("k", "m"), [(k, m) for k in range(2, 9) for m in range(1, k + 1)])
def test_closed_form_matches_enumeration(k: int, m: int) -> None:
    assert fa.tversky_chance(k, m) == pytest.approx(brute_force(k, m), rel=1e-12)


def test_closed_form_by_hand_k3_m2() -> None:
    # tp=1 (2 ways): fp0 → 1/(1+0.5)=2/3, fp1 → 1/(1+2+0.5)=2/7; tp=2: fp0 → 1, fp1 → 2/4
    expected = (2 * Fraction(2, 3) + 2 * Fraction(2, 7) + 1 + Fraction(1, 2)) / 8
    assert fa.tversky_chance(3, 2) == pytest.approx(float(expected))


def test_tversky_trial() -> None:
    got = fa.tversky(np.array([0, 1, 2]), np.array([1, 1, 0]), np.array([1, 1, 1]))
    assert got.tolist() == pytest.approx([0.0, 1 / 3.5, 2 / 2.5])


def test_fss_hand_computed(main_run: Path) -> None:
    t = next(m.table for m in read_run(main_run).models if m.slug == ALPHA)
    # s_q = (T̄ − c)/(1 − c). q1: T̄=2/3, c=½ → ⅓; q2: 1; q3: 1; q4: T̄=½, c=¼ → ⅓; q5: T̄=⅓, c=⅓ → 0
    # q6 (k5,m2): T̄=(2/3 + 1 + 2/7)/3; q7 (k4,m3): T̄=(0.8 + 1 + 0.8)/3
    c6, c7 = fa.tversky_chance(5, 2), fa.tversky_chance(4, 3)
    t6, t7 = (2 / 3 + 1 + 2 / 7) / 3, 2.6 / 3
    skills = [1 / 3, 1, 1, 1 / 3, 0, (t6 - c6) / (1 - c6), (t7 - c7) / (1 - c7)]
    assert fa.fss(t) == pytest.approx(sum(skills) / 7)
