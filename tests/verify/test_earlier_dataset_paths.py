"""The launch folder of an earlier-implementation run when its RUNS_ROOT climbs out with "..".

make mutation found this case untested: a recorded RUNS_ROOT holding ".." is not followed (the
folder it names depends on where the run was started), even when the run's own path, given
unresolved, ends with the same parts.
"""

from __future__ import annotations

from pathlib import Path

from oracleproto.primitives.hashing import sha256_hex
from oracleproto.verify.earlier_dataset import launch_folder, locate_dataset


def test_a_runs_root_with_dotdot_is_not_followed() -> None:
    run = Path("/lab/../runs/20250911-080910-beef")
    assert launch_folder(run, {"RUNS_ROOT": "../runs"}) == Path("/lab/..")
    assert launch_folder(run, {"RUNS_ROOT": "./runs"}) == Path("/lab/..")
    assert launch_folder(Path("/lab/project/runs/r"), {"RUNS_ROOT": "."}) == Path("/lab/project")


def _layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A run at lab/runs/r started from lab/, and another current folder: three places to look."""
    run = tmp_path / "lab" / "runs" / "r"
    run.mkdir(parents=True)
    cwd = tmp_path / "here"
    cwd.mkdir()
    return run, cwd, tmp_path / "lab"


def test_every_mismatched_candidate_is_named_with_its_own_hash(tmp_path: Path) -> None:
    run, cwd, launch = _layout(tmp_path)
    (cwd / "d.db").write_bytes(b"one")
    (launch / "d.db").write_bytes(b"two")
    expected = sha256_hex(b"three")
    found, check = locate_dataset(run, {"SOURCE_DB": "d.db"}, expected, cwd=cwd)
    assert found is None and check.status == "FAIL"
    one, two = sha256_hex(b"one"), sha256_hex(b"two")
    assert check.detail == (
        f"SOURCE_DB 'd.db' of run_meta.config_snapshot is {cwd / 'd.db'}, whose sha256 {one[:16]}… is not "
        f"the recorded source_db hash; SOURCE_DB 'd.db' of run_meta.config_snapshot is {launch / 'd.db'}, "
        f"whose sha256 {two[:16]}… is not the recorded source_db hash; pass --dataset PATH with the "
        f"source DB 'd.db' (sha256 {expected})"
    )


def test_no_candidate_file_names_every_folder_looked_in(tmp_path: Path) -> None:
    run, cwd, launch = _layout(tmp_path)
    expected = sha256_hex(b"x")
    found, check = locate_dataset(run, {"SOURCE_DB": "d.db"}, expected, cwd=cwd)
    assert found is None
    assert check.detail == (
        f"SOURCE_DB 'd.db' of run_meta.config_snapshot is not a file under {cwd}, {launch}, {run}; "
        f"pass --dataset PATH with the source DB 'd.db' (sha256 {expected})"
    )


def test_a_carried_file_with_another_hash_is_not_taken(tmp_path: Path) -> None:
    run, cwd, _ = _layout(tmp_path)
    carried = tmp_path / "carried.db"
    carried.write_bytes(b"other")
    found, check = locate_dataset(run, {"SOURCE_DB": "d.db"}, sha256_hex(b"x"), extra=(carried,), cwd=cwd)
    assert found is None and check.status == "FAIL"
    carried.write_bytes(b"x")
    found, check = locate_dataset(run, {"SOURCE_DB": "d.db"}, sha256_hex(b"x"), extra=(carried,), cwd=cwd)
    assert found == carried and check.detail == f"{carried}: carried with the run"
