"""Per-question points-f1 metrics from a question's K trials, exactly (Fractions).

An incomplete question (a trial missing or ended by an infrastructure error) has no value for
any metric: only its points, its random baseline and why it is incomplete. Everything else is
defined on the K trials of a complete question, ⊥ and refusals scoring 0 and abstaining from the
vote (docs/design/metrics.md, "Conventions", for the choices where the contract is silent).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cached_property

from oracleproto.analysis.points_f1.contract import (
    POINTS_BY_INDEX,
    draw_probabilities,
    random_credit,
    trial_credit,
)
from oracleproto.analysis.points_f1.panel import Outcome, Question, Trial
from oracleproto.analysis.rational import sample_sd, total


@dataclass(frozen=True)
class QuestionScore:
    """Every per-question metric of one model on one question (None: undefined)."""

    question: Question
    points: int
    random_credit: Fraction
    #: Why the question is incomplete, one item per failing trial ("sample 2: network"); empty if complete.
    incomplete: tuple[str, ...] = ()
    credits: tuple[Fraction, ...] = ()
    exact: int = 0  # trials whose letter set equals the gold set
    pass_at_3: Fraction | None = None
    pass_all_at_3: Fraction | None = None
    majority_correct_at_3: Fraction | None = None
    vote: int | None = None  # the strict-majority letter set (bit mask), None without one
    vote_credit: Fraction = Fraction(0)
    pairwise_agreement: Fraction | None = None
    #: 0/1 flags (ints: exact like Fractions, and cheaper to sum).
    valid_repeat_panel: int | None = None
    all_same: int | None = None
    all_same_wrong: int | None = None
    credit_sd: float | None = None

    @property
    def complete(self) -> bool:
        """Every trial was scored (answer, ⊥ or refusal)."""
        return not self.incomplete

    @property
    def k(self) -> int:
        """Trials of the question."""
        return len(self.credits)

    @cached_property
    def mean_credit(self) -> Fraction:
        """Mean trial credit (complete questions only); cached: every score reads it."""
        return total(self.credits) / self.k

    @property
    def exact_at_1(self) -> Fraction:
        """Share of the trials that are exactly right."""
        return Fraction(self.exact, self.k)

    @property
    def best_credit(self) -> Fraction:
        """The best trial's credit (best-of-n: an oracle picks the trial)."""
        return max(self.credits)

    @property
    def worst_credit(self) -> Fraction:
        """The worst trial's credit."""
        return min(self.credits)

    @property
    def vote_exact(self) -> int:
        """1 when the vote is the gold set, else 0."""
        return int(self.vote == self.question.gold)

    @property
    def vote_coverage(self) -> int:
        """1 when some letter set holds a strict majority, else 0."""
        return int(self.vote is not None)


def strict_majority(answers: Sequence[int | None]) -> int | None:
    """The letter set given by more than half of ALL the trials (⊥ abstains but still counts in K)."""
    counts = Counter(a for a in answers if a is not None)
    winners = [answer for answer, votes in counts.items() if 2 * votes > len(answers)]
    return winners[0] if winners else None


def _incomplete(trials: Sequence[Trial]) -> tuple[str, ...]:
    reasons = []
    for j, trial in enumerate(trials):
        if trial.outcome is Outcome.MISSING:
            reasons.append(f"sample {j}: missing")
        elif trial.outcome is Outcome.INFRASTRUCTURE:
            reasons.append(f"sample {j}: {trial.error or 'call error'}")
    return tuple(reasons)


def score_question(question: Question, trials: Sequence[Trial]) -> QuestionScore:
    """Every metric of one question from its K trials."""
    points = POINTS_BY_INDEX[question.bucket]
    baseline = random_credit(question.options, question.gold.bit_count(), question.bucket)
    reasons = _incomplete(trials)
    if reasons or not trials:
        return QuestionScore(question, points, baseline, incomplete=reasons or ("no trial",))
    answers = [t.letters if t.outcome is Outcome.ANSWER else None for t in trials]
    credits = tuple(trial_credit(a, question.gold, question.bucket) for a in answers)
    k = len(answers)
    exact = sum(a == question.gold for a in answers)
    vote = strict_majority(answers)
    draws = draw_probabilities(k, exact)
    score = QuestionScore(
        question,
        points,
        baseline,
        credits=credits,
        exact=exact,
        pass_at_3=draws[0] if draws else None,
        pass_all_at_3=draws[1] if draws else None,
        majority_correct_at_3=draws[2] if draws else None,
        vote=vote,
        vote_credit=trial_credit(vote, question.gold, question.bucket),
        credit_sd=sample_sd(credits),
    )
    if k < 2:
        return score  # agreement needs two trials
    valid = all(a is not None for a in answers)
    same = valid and len(set(answers)) == 1
    agreement = None
    if valid:
        equal_pairs = sum(x == y for x, y in itertools.combinations(answers, 2))
        agreement = Fraction(equal_pairs, math.comb(k, 2))
    return replace(
        score,
        pairwise_agreement=agreement,
        valid_repeat_panel=int(valid),
        all_same=int(same),
        all_same_wrong=int(same and exact == 0),
    )
