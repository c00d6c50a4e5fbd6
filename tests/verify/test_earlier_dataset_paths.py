"""The launch folder of an earlier-implementation run when its RUNS_ROOT climbs out with "..".

make mutation found this case untested: a recorded RUNS_ROOT holding ".." is not followed (the
folder it names depends on where the run was started), even when the run's own path, given
unresolved, ends with the same parts.
"""

from __future__ import annotations

from pathlib import Path

from oracleproto.verify.earlier_dataset import launch_folder


def test_a_runs_root_with_dotdot_is_not_followed() -> None:
    run = Path("/lab/../runs/20250911-080910-beef")
    assert launch_folder(run, {"RUNS_ROOT": "../runs"}) == Path("/lab/..")
    assert launch_folder(run, {"RUNS_ROOT": "./runs"}) == Path("/lab/..")
    assert launch_folder(Path("/lab/project/runs/r"), {"RUNS_ROOT": "."}) == Path("/lab/project")
