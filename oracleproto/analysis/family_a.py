"""Family A (discrete-native) metrics and the validity level: pure functions of a trial table.

A metric that is undefined on its input returns ``None``, never 0 (App. B.7).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from oracleproto.analysis import exact
from oracleproto.analysis.conventions import Convention, composite_weights
from oracleproto.analysis.trials import (
    BUCKETS,
    MC_MULTI,
    MC_SINGLE,
    BoolArray,
    FloatArray,
    IntArray,
    TrialTable,
)

TVERSKY_ALPHA = 2.0
TVERSKY_BETA = 0.5
_EPS = 1e-12


def ratio(num: float, den: float) -> float | None:
    """``num / den``, or None when the denominator is empty."""
    return float(num) / float(den) if den > 0 else None


def masked_mean(values: npt.ArrayLike, mask: npt.ArrayLike) -> float | None:
    """Mean of ``values`` where ``mask`` (an exactly rounded sum over the count); None when empty."""
    return ratio(exact.total(np.where(mask, values, 0.0)), float(np.sum(mask)))


def weighted_mean(parts: Sequence[tuple[float, int]]) -> float | None:
    """Σ v·w / Σ w over (value, integer weight) pairs; None when the weights sum to 0."""
    weight = sum(w for _, w in parts)
    if not weight:
        return None
    if exact.numpy_reductions():
        return sum(v * w for v, w in parts) / weight
    # math.fsum: the builtin sum of floats rounds differently from Python 3.12 on.
    return math.fsum(v * w for v, w in parts) / weight


def fraction_mean(a: IntArray, d: IntArray, den: npt.ArrayLike) -> Fraction | None:
    """Exactly Σ a/d over Σ den (integer arrays, d ≥ 1); None when Σ den is 0."""
    weight = int(np.sum(den))
    return exact.fraction_sum(a, d) / weight if weight > 0 else None


def as_float(value: Fraction | None) -> float | None:
    """An exact value rounded once to a float (None stays None)."""
    return None if value is None else float(value)


# ---------------------------------------------------------------- accuracy


def per_question_exam(t: TrialTable) -> tuple[FloatArray, BoolArray]:
    """Per-question exam mean over counted trials, and whether it is defined (≥ 1 counted)."""
    cnt = t.counted.sum(axis=1)
    total = np.where(t.counted, t.exam, 0.0).sum(axis=1)
    return np.where(cnt > 0, total / np.maximum(cnt, 1), 0.0), np.asarray(cnt > 0)


def exam_parts(t: TrialTable) -> tuple[IntArray, IntArray, BoolArray]:
    """Per question, the exam mean as integers a/d (Σ tp of exact counted trials over m·count), and
    whether it is defined (≥ 1 counted trial)."""
    cnt = t.counted.sum(axis=1)
    ok = t.counted & t.parsed & (t.fp == 0)
    a = np.where(ok, t.tp, 0).sum(axis=1).astype(np.int64)
    d = (np.maximum(t.m, 1) * np.maximum(cnt, 1)).astype(np.int64)
    return a, d, np.asarray(cnt > 0)


def bucket_members(bucket: IntArray, name: str) -> BoolArray:
    """Questions of the bucket ``name`` (``mc`` pools MC-single and MC-multi)."""
    if name == "mc":
        return np.asarray((bucket == MC_SINGLE) | (bucket == MC_MULTI))
    return np.asarray(bucket == BUCKETS.index(name))


def bucket_exam_exact(t: TrialTable) -> dict[str, Fraction | None]:
    """Per-bucket exam means (the four buckets and the pooled ``mc``), exactly."""
    a, d, defined = exam_parts(t)
    out = {}
    for name in (*BUCKETS, "mc"):
        rows = defined & bucket_members(t.bucket, name)
        out[name] = fraction_mean(a[rows], d[rows], rows[rows])
    return out


def bucket_exam(t: TrialTable) -> dict[str, float | None]:
    """Per-bucket exam means (yes_no, binary, mc_single, mc_multi) plus the pooled ``mc`` bucket."""
    if not exact.numpy_reductions():
        return {name: as_float(v) for name, v in bucket_exam_exact(t).items()}
    value, defined = per_question_exam(t)
    out = {name: masked_mean(value, defined & (t.bucket == b)) for b, name in enumerate(BUCKETS)}
    out["mc"] = masked_mean(value, defined & ((t.bucket == MC_SINGLE) | (t.bucket == MC_MULTI)))
    return out


def composite_accuracy(buckets: Mapping[str, float | None], convention: Convention) -> float | None:
    """Eq. (composite-acc): weighted mean over buckets with a value, weights renormalised.

    Exactly, from the bucket means as given (each exactly rounded by :func:`bucket_exam`, so anyone
    can recompute it from the published ``exam_avg``) and the weights as the decimals they are
    written as, then rounded once; in floating point before exact reductions.
    """
    weights = composite_weights(convention)
    valid = {b: w for b, w in weights.items() if buckets.get(b) is not None}
    if not valid:
        return None
    if exact.numpy_reductions():
        return sum(w * float(buckets[b] or 0.0) for b, w in valid.items()) / sum(valid.values())
    total = sum((exact.decimal(w) * Fraction(buckets[b] or 0.0) for b, w in valid.items()), Fraction(0))
    return float(total / sum(exact.decimal(w) for w in valid.values()))


def per_question_pass(t: TrialTable, convention: Convention) -> tuple[FloatArray, FloatArray]:
    """Numerator and denominator per question whose ratio of sums is pass@1_avg."""
    if convention is Convention.PAPER:
        cnt = t.counted.sum(axis=1)
        hits = (t.correct & t.counted).sum(axis=1)
        return np.where(cnt > 0, hits / np.maximum(cnt, 1), 0.0), (cnt > 0).astype(np.float64)
    # reference-v4 pools resolvable trials: each question weighs by its resolvable count.
    res = t.parsed & t.eligible
    return (t.correct & res).sum(axis=1).astype(np.float64), res.sum(axis=1).astype(np.float64)


def pass_parts(t: TrialTable, convention: Convention) -> tuple[IntArray, IntArray, IntArray]:
    """:func:`per_question_pass` as integers: the numerator a/d and the denominator per question."""
    if convention is Convention.PAPER:
        cnt = t.counted.sum(axis=1)
        hits = (t.correct & t.counted).sum(axis=1)
        return hits.astype(np.int64), np.maximum(cnt, 1).astype(np.int64), (cnt > 0).astype(np.int64)
    res = t.parsed & t.eligible
    ones = np.ones(t.n_questions, dtype=np.int64)
    return (t.correct & res).sum(axis=1).astype(np.int64), ones, res.sum(axis=1).astype(np.int64)


def pass_exact(t: TrialTable, convention: Convention) -> Fraction | None:
    """pass@1_avg under ``convention``, exactly."""
    return fraction_mean(*pass_parts(t, convention))


def pass_at_1(t: TrialTable, convention: Convention) -> float | None:
    """pass@1_avg under ``convention`` (Eq. pass1, or pooled over resolvable trials)."""
    if not exact.numpy_reductions():
        return as_float(pass_exact(t, convention))
    num, den = per_question_pass(t, convention)
    return ratio(float(num.sum()), float(den.sum()))


def _question_trials(t: TrialTable, convention: Convention) -> BoolArray:
    return t.counted if convention is Convention.PAPER else np.asarray(t.parsed & t.eligible)


def pass_any(t: TrialTable, convention: Convention) -> float | None:
    """pass-any@n: share of questions with at least one correct trial."""
    trials = _question_trials(t, convention)
    has = trials.any(axis=1)
    return masked_mean((t.correct & trials).any(axis=1).astype(np.float64), has)


def pass_all(t: TrialTable, convention: Convention) -> float | None:
    """pass-all@n (paper: AND over counted trials; reference-v4: all n resolvable and correct)."""
    trials = _question_trials(t, convention)
    has = trials.any(axis=1)
    all_ok = ~(trials & ~t.correct).any(axis=1)
    if convention is Convention.REFERENCE_V4:
        all_ok &= trials.sum(axis=1) == t.n
    return masked_mean(all_ok.astype(np.float64), has)


def pass_at_least_majority(t: TrialTable) -> float | None:
    """reference-v4 "at least majority": #correct resolvable ≥ ceil(n/2), over questions resolvable."""
    trials = _question_trials(t, Convention.REFERENCE_V4)
    hits = (t.correct & trials).sum(axis=1)
    return masked_mean((hits >= math.ceil(t.n / 2)).astype(np.float64), trials.any(axis=1))


# ------------------------------------------------------------- consistency


def chance_rate(t: TrialTable) -> FloatArray:
    """(Q,) Cohen baseline p_{e,q}: 1/k single-answer, 0.5 multi-answer."""
    return np.where(t.multi, 0.5, 1.0 / t.k)


def cohen_kappa(t: TrialTable, convention: Convention) -> float | None:
    """Cohen κ = (p_o − p_e)/(1 − p_e), trial-weighted, with the type-conditional baseline."""
    trials = _question_trials(t, convention)
    n_trials = float(trials.sum())
    if n_trials == 0:
        return None
    p_o = float((t.correct & trials).sum()) / n_trials
    p_e = exact.total(trials * chance_rate(t)[:, None]) / n_trials
    return None if abs(1.0 - p_e) < _EPS else (p_o - p_e) / (1.0 - p_e)


def vote_counts(codes: IntArray, voters: BoolArray) -> IntArray:
    """(Q, n) how many voters of the question share each trial's category (0 for non-voters)."""
    same = (codes[:, :, None] == codes[:, None, :]) & voters[:, None, :]
    return np.where(voters, same.sum(axis=2), 0)


def _fleiss_categorical(codes: IntArray, voters: BoolArray) -> tuple[float | None, int]:
    """Textbook Fleiss κ with per-item rater counts; returns (κ or None, contributing items)."""
    n_i = voters.sum(axis=1)
    items = n_i >= 2
    if not items.any():
        return None, 0
    counts = vote_counts(codes, voters)
    p_i = (counts.sum(axis=1) - n_i)[items] / (n_i * (n_i - 1))[items]
    _, tally = np.unique(codes[items][voters[items]], return_counts=True)
    p_e = exact.total((tally / tally.sum()) ** 2)
    p_bar = exact.mean(p_i)
    if abs(1.0 - p_e) < _EPS:
        return None, int(items.sum())
    return (p_bar - p_e) / (1.0 - p_e), int(items.sum())


def fleiss_kappa(t: TrialTable, convention: Convention) -> float | None:
    """Fleiss κ: single-answer strata by k, multi-answer per letter, per ``convention``."""
    if convention is Convention.REFERENCE_V4:
        return _fleiss_reference(t)
    single = ~t.multi
    parts: list[tuple[float, int]] = []
    for k in sorted(set(t.k[single].tolist())):
        rows = single & (t.k == k)
        value, n_items = _fleiss_categorical(t.set_code[rows], t.parsed[rows])
        if value is not None:
            parts.append((value, n_items))
    multi_rows = t.multi & (t.parsed.sum(axis=1) >= 2)
    letter_kappas: list[float] = []
    for letter in range(t.gold.shape[1]):
        rows = multi_rows & (t.k > letter)
        if rows.any():
            codes = t.pred[rows][:, :, letter].astype(np.int64)
            value, _ = _fleiss_categorical(codes, t.parsed[rows])
            if value is not None:
                letter_kappas.append(value)
    if letter_kappas:
        parts.append((exact.mean(letter_kappas), int(multi_rows.sum())))
    return weighted_mean(parts)


def _fleiss_reference(t: TrialTable) -> float | None:
    single = ~t.multi
    weighted: list[tuple[float, int]] = []
    for k in sorted(set(t.k[single].tolist())):
        rows = single & (t.k == k)
        codes, voters = t.first_letter_code[rows], t.parsed[rows]
        n_i = voters.sum(axis=1)
        items = n_i >= 2
        if not items.any():
            continue
        value, n_items = _fleiss_categorical(codes, voters)
        # The earlier code scores a stratum with p_e ≈ 1 (everyone votes one letter) as 1.0.
        weighted.append((1.0 if value is None else value, n_items))
    single_k = weighted_mean(weighted)
    rows = t.multi & (t.parsed.sum(axis=1) >= 2)
    multi_k: float | None = None
    if rows.any():
        pred, voters, valid = t.pred[rows], t.parsed[rows], t.label_valid[rows]
        n_eff = voters.sum(axis=1)
        yes = (pred & voters[:, :, None]).sum(axis=1)
        unanimous = (yes == 0) | (yes == n_eff[:, None])
        per_label = np.where(unanimous, 1.0, -1.0 / (n_eff[:, None] - 1))
        per_q = np.where(valid, per_label, 0.0).sum(axis=1) / valid.sum(axis=1)
        multi_k = exact.mean(per_q)
    pools = [(single_k, int(single.sum())), (multi_k, int(t.multi.sum()))]
    return weighted_mean([(float(v), w) for v, w in pools if v is not None and w > 0])


# -------------------------------------------------------------- skill (FSS)


def tversky(tp: IntArray, fp: IntArray, fn: IntArray) -> FloatArray:
    """Per-trial Tversky similarity with (α, β) = (2, 0.5); 0 when there is no true positive."""
    den = tp + TVERSKY_ALPHA * fp + TVERSKY_BETA * fn
    return np.where(tp > 0, tp / np.where(den > 0, den, 1.0), 0.0)


def tversky_chance(k: int, m: int) -> float:
    """Eq. (tversky-baseline): E[Tversky] when each of k labels is picked with probability 0.5."""
    total = 0.0
    for tp in range(1, m + 1):
        for fp in range(k - m + 1):
            weight = math.comb(m, tp) * math.comb(k - m, fp) * 0.5**k
            total += weight * tp / (tp + TVERSKY_ALPHA * fp + TVERSKY_BETA * (m - tp))
    return total


def question_chance(t: TrialTable) -> FloatArray:
    """(Q,) FSS chance baseline T_q^chance: 1/k single-answer, closed form multi-answer."""
    cache: dict[tuple[int, int], float] = {}
    out = np.empty(t.n_questions)
    for q in range(t.n_questions):
        k, m = int(t.k[q]), int(t.m[q])
        if t.multi[q]:
            out[q] = cache.setdefault((k, m), tversky_chance(k, m))
        else:
            out[q] = 1.0 / k
    return out


def fss(t: TrialTable) -> float | None:
    """Format Skill Score (Eq. fss): mean chance-corrected Tversky over questions with K_eff ≥ 1."""
    k_eff = t.parsed.sum(axis=1)
    t_bar = np.where(t.parsed, tversky(t.tp, t.fp, t.fn), 0.0).sum(axis=1) / np.maximum(k_eff, 1)
    chance = question_chance(t)
    ok = (k_eff > 0) & (chance < 1.0 - _EPS)
    skill = (t_bar - chance) / np.where(ok, 1.0 - chance, 1.0)
    return masked_mean(skill, ok)


def hamming_score(t: TrialTable) -> float | None:
    """Eq. (hamming-app) over parsed trials of multi-answer questions; None without any."""
    mismatch = ((t.pred ^ t.gold[:, None, :]) & t.label_valid[:, None, :]).sum(axis=2)
    score = 1.0 - mismatch / t.k[:, None]
    return masked_mean(score, t.parsed & t.multi[:, None])


# ------------------------------------------------------- votes and entropy


def majority_vote_accuracy(t: TrialTable) -> float | None:
    """Share of questions whose unique modal parsed set equals gold; tied questions dropped."""
    counts = vote_counts(t.set_code, t.parsed)
    top = counts.max(axis=1)
    n_top_categories = (counts == top[:, None]).sum(axis=1) // np.maximum(top, 1)
    keep = (top > 0) & (n_top_categories == 1)
    winner = np.take_along_axis(t.set_code, counts.argmax(axis=1)[:, None], axis=1)[:, 0]
    return masked_mean((winner == t.gold_code).astype(np.float64), keep)


def question_entropy(t: TrialTable, convention: Convention) -> FloatArray:
    """(Q,) predictive entropy H_q in bits (single: vote shares; multi: mean per-label binary)."""
    k_eff = t.parsed.sum(axis=1)
    safe = np.maximum(k_eff, 1)
    codes = t.set_code if convention is Convention.PAPER else t.first_letter_code
    shares = vote_counts(codes, t.parsed) / safe[:, None]
    single_h = -np.where(t.parsed, exact.log2(np.where(t.parsed, shares, 1.0)), 0.0).sum(axis=1) / safe
    incl = (t.pred & t.parsed[:, :, None]).sum(axis=1) / safe[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        binary = -(np.nan_to_num(incl * exact.log2(incl)) + np.nan_to_num((1 - incl) * exact.log2(1 - incl)))
    multi_h = np.where(t.label_valid, binary, 0.0).sum(axis=1) / t.k
    return np.asarray(np.where(t.multi, multi_h, single_h) + 0.0, dtype=np.float64)


def _spread_population(t: TrialTable, convention: Convention) -> BoolArray:
    k_eff = t.parsed.sum(axis=1)
    return np.asarray(k_eff >= (1 if convention is Convention.PAPER else 2))


def mean_entropy(t: TrialTable, convention: Convention) -> float | None:
    """Eq. (mean-entropy) over the convention's question population."""
    return masked_mean(question_entropy(t, convention), _spread_population(t, convention))


def question_vci(t: TrialTable) -> FloatArray:
    """(Q,) Eq. (vci): largest count of identical parsed sets over K_eff (0 when K_eff = 0)."""
    top = vote_counts(t.set_code, t.parsed).max(axis=1)
    return np.asarray(top / np.maximum(t.parsed.sum(axis=1), 1), dtype=np.float64)


def vci(t: TrialTable, convention: Convention) -> float | None:
    """Mean VCI over the convention's question population."""
    return masked_mean(question_vci(t), _spread_population(t, convention))


#: The cut-points of the paper's entropy buckets.
TERTILES = (Fraction(1, 3), Fraction(2, 3))
#: Entropy bucket names, lowest entropy first.
ENTROPY_BUCKETS = ("low", "mid", "high")
#: Entropies are compared at this many decimals when ordering questions, so values equal in exact
#: arithmetic but a rounding step apart tie and keep question order.
_ENTROPY_ORDER_DECIMALS = 12


def entropy_accuracy_buckets(
    t: TrialTable, convention: Convention, *, equal_count: bool | None = None
) -> dict[str, dict[str, float | None]]:
    """Three entropy buckets of the convention's question population, with pass@1 in each.

    ``equal_count`` (default: ``reference-v4``) splits the questions ordered by entropy into
    equal-count thirds, as the earlier implementation did; otherwise questions fall into buckets by
    value against the model's tertile cut-points (``paper``; ``reference-v4`` before analysis
    revision 3).
    """
    if equal_count is None:
        equal_count = convention is Convention.REFERENCE_V4
    population = _spread_population(t, convention)
    h = question_entropy(t, convention)
    num, den = per_question_pass(t, convention)
    if not population.any():
        return {name: {"accuracy": None, "questions": 0.0, "upper_entropy": None} for name in ENTROPY_BUCKETS}
    if equal_count:
        return _equal_count_buckets(population, h, num, den)
    acc = num / np.maximum(den, 1)
    cuts = exact.quantile(h[population], TERTILES)
    edges = [(-np.inf, cuts[0]), (cuts[0], cuts[1]), (cuts[1], np.inf)]
    out: dict[str, dict[str, float | None]] = {}
    for name, (lo, hi) in zip(ENTROPY_BUCKETS, edges, strict=True):
        rows = population & (h > lo) & (h <= hi) & (den > 0)
        out[name] = {
            "accuracy": masked_mean(acc, rows),
            "questions": float(rows.sum()),
            "upper_entropy": None if np.isinf(hi) else float(hi),
        }
    return out


def _equal_count_buckets(
    population: BoolArray, h: FloatArray, num: FloatArray, den: FloatArray
) -> dict[str, dict[str, float | None]]:
    # Stable order by (entropy, question order); numpy.array_split gives the first Q mod 3 buckets
    # one question more (Q = 7 → 3/2/2), the earlier code's "low gets the extra question".
    members = np.flatnonzero(population)
    order = members[np.argsort(np.round(h[members], _ENTROPY_ORDER_DECIMALS), kind="stable")]
    out: dict[str, dict[str, float | None]] = {}
    for name, rows in zip(ENTROPY_BUCKETS, np.array_split(order, len(ENTROPY_BUCKETS)), strict=True):
        out[name] = {
            # Pooled like reference-v4 pass@1: correct resolvable trials / resolvable trials.
            "accuracy": ratio(exact.total(num[rows]), exact.total(den[rows])),
            "questions": float(rows.size),
            "upper_entropy": float(h[rows].max()) if rows.size else None,
        }
    return out


# ----------------------------------------------------------------- validity


def validity(t: TrialTable, convention: Convention) -> dict[str, float | None]:
    """Evaluability, parse-failure, error (and reference-v4 resolvable) rates; mean tool calls."""
    counted, parsed, eligible = float(t.counted.sum()), float(t.parsed.sum()), float(t.eligible.sum())
    errors = float(t.call_error.sum())
    fails = float((t.state == 3).sum())
    if convention is Convention.PAPER:
        return {
            "evaluability_rate": ratio(parsed, counted),
            "parse_failure_rate": ratio(fails, counted),
            "error_rate": ratio(errors, eligible),
            "avg_tool_calls": masked_mean(t.tool_calls.astype(np.float64), t.counted),
        }
    return {
        "evaluability_rate": ratio(parsed, eligible),
        "parse_failure_rate": ratio(fails, eligible),
        "error_rate": ratio(errors, eligible),
        "resolvable_rate": ratio(parsed, eligible),
        "avg_tool_calls": masked_mean(t.tool_calls.astype(np.float64), t.eligible),
    }
