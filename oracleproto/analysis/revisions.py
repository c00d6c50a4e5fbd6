"""The analysis revision a summary records per convention, and what older revisions computed.

``verify`` re-scores a run published by an older revision with that revision's definitions, so
only the definitions that changed since are switchable here (docs/design/reviewing.md, "Analysis revision").
"""

from __future__ import annotations

from oracleproto._version import ANALYSIS_REVISIONS
from oracleproto.analysis.conventions import Convention

#: From this revision on, ``reference-v4`` follows the earlier implementation's consistency rules:
#: no majority-vote gain at n = 1 and equal-count entropy buckets.
EARLIER_CONSISTENCY_RULES = 3
#: From this revision on (both conventions), reported sums, means, ratios, quantiles and logarithms
#: are exact or exactly rounded (``analysis/exact.py``); before it numpy and BLAS computed them.
EXACT_REDUCTIONS = 4
#: From this revision on (both conventions), the analysis carries the pairwise tests and the rank
#: stability of its headline metric (``comparisons.py``: ``summary.json`` ``comparisons`` and the
#: ``table_pairs`` files); a run published before it is re-scored without them, keeping its bytes.
HEADLINE_COMPARISONS = 5
#: From this revision on, ``reference-v4`` CSVs give every number 4 decimals, as the earlier
#: implementation's do (Table 3's costs had the Markdown table's 2 and 3).
FOUR_DECIMAL_CSV = 6
#: The decimals of a ``reference-v4`` CSV number (scoring-conventions.md).
CSV_DECIMALS = 4


def summary_revision(convention: Convention | str) -> int:
    """The revision this code records for (and writes the bytes of) a summary under ``convention``."""
    return ANALYSIS_REVISIONS[Convention(convention).value]


def earlier_consistency_rules(convention: Convention, revision: int) -> bool:
    """Whether an analysis at ``revision`` under ``convention`` uses the earlier consistency rules."""
    return convention is Convention.REFERENCE_V4 and revision >= EARLIER_CONSISTENCY_RULES


def exact_reductions(revision: int) -> bool:
    """Whether an analysis at ``revision`` computes its reported numbers exactly (``exact.py``)."""
    return revision >= EXACT_REDUCTIONS


def headline_comparisons_of(revision: int) -> bool:
    """Whether an analysis at ``revision`` reports pairwise tests and ranks of its headline metric."""
    return revision >= HEADLINE_COMPARISONS


def four_decimal_csv(convention: Convention, revision: int | None) -> bool:
    """Whether CSVs at ``revision`` (None: this code's) under ``convention`` give numbers 4 decimals."""
    current = summary_revision(convention) if revision is None else revision
    return convention is Convention.REFERENCE_V4 and current >= FOUR_DECIMAL_CSV
