"""The points-f1 scoring convention (issue 29 §1): the upstream leaderboard's contract.

Points 1/1/2/3 per bucket, exact-set credit (F1 for MC-multi), a points-weighted score on the
questions every model was admitted to, the repeated-answer metrics, MC-multi selection
diagnostics and the paired, bucket-stratified bootstrap with pairwise tests and rank stability.
"""

from __future__ import annotations

from oracleproto.analysis.points_f1.compute import PointsF1Result, analyze_points_f1
from oracleproto.analysis.points_f1.contract import CONTRACT, ITERATIONS, NAME, POINTS, SEED
from oracleproto.analysis.points_f1.render import points_f1_block
from oracleproto.analysis.points_f1.write import SUBDIR, report_points_f1, write_points_f1

__all__ = [
    "CONTRACT",
    "ITERATIONS",
    "NAME",
    "POINTS",
    "SEED",
    "SUBDIR",
    "PointsF1Result",
    "analyze_points_f1",
    "points_f1_block",
    "report_points_f1",
    "write_points_f1",
]
