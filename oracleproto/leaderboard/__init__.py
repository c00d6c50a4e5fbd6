"""``oracleproto leaderboard``: one self-contained offline HTML page and a CSV of one or more runs.

Scores every model of the given runs (one experiment, ``identity.py``) under the points-f1
convention (``analysis/points_f1``): the score with its interval, rank interval and P(rank 1),
cost per correct answer with the Pareto front, the per-bucket scores, the pairwise significance
matrix (Holm or Benjamini–Hochberg) and, with an attached leakage audit, the leak-widened intervals.
"""

from __future__ import annotations

from oracleproto.leaderboard.build import BoardOutput, build_leaderboard

__all__ = ["BoardOutput", "build_leaderboard"]
