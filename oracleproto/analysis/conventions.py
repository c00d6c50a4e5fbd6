"""The two scoring conventions of scoring-conventions.md and their fixed parameters."""

from __future__ import annotations

from enum import StrEnum

from oracleproto.errors import AnalysisError


class Convention(StrEnum):
    """``paper`` follows the paper's text; ``reference-v4`` reproduces the earlier code."""

    PAPER = "paper"
    REFERENCE_V4 = "reference-v4"


#: The upstream leaderboard's contract (issue 29): a report of its own (``analysis/points_f1/``),
#: not a :class:`Convention` of the paper's analysis, so a run's analysis pass never uses it.
POINTS_F1 = "points-f1"
#: What ``oracleproto report --convention`` accepts.

#: Composite weights. ``paper`` pools MC-single and MC-multi into one ``mc`` bucket.
PAPER_WEIGHTS: dict[str, float] = {"yes_no": 0.15, "binary": 0.15, "mc": 0.70}
REFERENCE_WEIGHTS: dict[str, float] = {"yes_no": 0.15, "binary": 0.15, "mc_single": 0.28, "mc_multi": 0.42}


def parse_convention(value: str | Convention) -> Convention:
    """The convention named ``value``; a clear error for anything else."""
    try:
        return Convention(value)
    except ValueError:
        if value == POINTS_F1:
            raise AnalysisError(
                f"{POINTS_F1!r} is not a convention of the paper's analysis: it is a report of its own, "
                f"`oracleproto report RUN --convention {POINTS_F1}`"
            ) from None
        choices = ", ".join(c.value for c in Convention)
        raise AnalysisError(f"unknown scoring convention {value!r}: expected one of {choices}") from None


def composite_weights(convention: Convention) -> dict[str, float]:
    """Bucket weights of Eq. (composite-acc) under ``convention``."""
    return dict(PAPER_WEIGHTS if convention is Convention.PAPER else REFERENCE_WEIGHTS)
