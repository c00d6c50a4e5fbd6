"""The points-f1 scoring contract's fixed parts: points, trial credit, random baseline, bootstrap.

These are facts of the upstream project's public leaderboard (issue 29 §1), not choices of ours:
changing any of them makes the numbers incomparable with that board. Credits are exact
:class:`~fractions.Fraction` values so every aggregate is exact until it is reported.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

from oracleproto.analysis.trials import BUCKETS, MC_MULTI

NAME = "points-f1"
#: Points per question by bucket (``trials.BUCKETS`` order: yes/no, binary, MC-single, MC-multi).
POINTS: dict[str, int] = {"yes_no": 1, "binary": 1, "mc_single": 2, "mc_multi": 3}
POINTS_BY_INDEX: tuple[int, ...] = tuple(POINTS[b] for b in BUCKETS)
#: Bootstrap of the contract: iterations and seed of its resamples.
ITERATIONS = 2000
SEED = 20261001
#: Three drawn trials: pass@3, pass-all@3 and majority@3 (without replacement from the K trials).
DRAWN = 3

#: The contract, as recorded with every output (summary.json ``points_f1.contract``).
CONTRACT: dict[str, object] = {
    "name": NAME,
    "points": POINTS,
    "single_credit": "exact set equality",
    "multi_credit": "2TP/(2TP+FP+FN)",
    "score": "100 * sum(points * mean_trial_credit) / sum(points)",
    "parse_failure_invalid_content_policy": "credit 0, kept in the denominator",
    "missing_or_infrastructure_error": "question incomplete: no official score for the model",
    "training_cutoff": "question leaves the population",
    "population": "intersection of the questions every model was admitted to",
    "vote": "strict majority (> K/2) of whole answer sets; unparsed trials abstain",
    "bootstrap": "paired question clusters, stratified by bucket, shared by every model",
    "bootstrap_iterations": ITERATIONS,
    "bootstrap_seed": SEED,
    "ci": "linear-interpolated 2.5 / 97.5 percentiles",
}


def trial_credit(pred: int | None, gold: int, bucket: int) -> Fraction:
    """Credit of one trial from letter bit masks; ``pred`` None is a trial scored 0 (⊥, refusal).

    Single-answer buckets: exact set equality. MC-multi: F1 = 2·TP / (2·TP + FP + FN), which is
    2|P∩G| / (|P| + |G|) (gold is never empty, so the denominator is never 0).
    """
    if pred is None:
        return Fraction(0)
    if bucket != MC_MULTI:
        return Fraction(int(pred == gold))
    return Fraction(2 * (pred & gold).bit_count(), pred.bit_count() + gold.bit_count())


@cache  # a few distinct (k, m) per run, asked for every question of every model
def random_credit(options: int, gold_size: int, bucket: int) -> Fraction:
    """Expected credit of a random answer, exactly.

    Single-answer buckets: one option chosen uniformly, 1/k. MC-multi: each option chosen by an
    independent fair coin, so each of the 2^k subsets has probability 2^-k; summed by subset
    size: C(m, tp)·C(k − m, fp) subsets have tp gold and fp other letters, credit
    2·tp / (m + tp + fp). The empty subset (tp = fp = 0) earns 0, like an unparsed answer.
    """
    if bucket != MC_MULTI:
        return Fraction(1, options)
    total = Fraction(0)
    for tp in range(gold_size + 1):
        for fp in range(options - gold_size + 1):
            subsets = math.comb(gold_size, tp) * math.comb(options - gold_size, fp)
            total += subsets * Fraction(2 * tp, gold_size + tp + fp)
    return total / (1 << options)


def draw_probabilities(k: int, correct: int) -> tuple[Fraction, Fraction, Fraction] | None:
    """pass@3, pass-all@3, majority@3 for ``correct`` exact trials of ``k`` (None when k < 3).

    Three of the k trials drawn without replacement (hypergeometric): pass@3 = 1 − C(k−c,3)/C(k,3),
    pass-all@3 = C(c,3)/C(k,3), majority@3 = P(at least 2 of the 3 exact). With fewer than three
    trials no three can be drawn, so the three are undefined rather than extrapolated.
    """
    if k < DRAWN:
        return None
    draws = math.comb(k, DRAWN)
    pass_any = 1 - Fraction(math.comb(k - correct, DRAWN), draws)
    pass_all = Fraction(math.comb(correct, DRAWN), draws)
    majority = Fraction(
        sum(math.comb(correct, hits) * math.comb(k - correct, DRAWN - hits) for hits in (2, 3)), draws
    )
    return pass_any, pass_all, majority
