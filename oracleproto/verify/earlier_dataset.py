"""The source DB of a run the earlier implementation wrote: the ``SOURCE_DB`` its snapshot records.

That implementation records its settings by variable name in every DB's ``config_snapshot``,
``SOURCE_DB`` among them (its default ``./forecast_eval_set.db``) exactly as configured, and
resolved it against the folder it was started from. A relative path is therefore looked up, in
order, under: the current folder (``verify`` run from where the run was started); the folder
the run was started from as the run's own location implies it (the run directory's parent less
the recorded ``RUNS_ROOT``, else the folder holding the runs folder, ``<here>/runs/<run id>``);
the run directory (a dataset archived inside it under the same relative path). A file counts
only when its sha256 is the recorded ``source_db`` hash; otherwise the check fails and names
the flag, the file name and the hash to pass instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path, PurePath
from typing import Any

from oracleproto.dataset.hashes import source_db_hash
from oracleproto.verify.findings import Check, failed, passed

SOURCE_DB_KEY = "SOURCE_DB"
RUNS_ROOT_KEY = "RUNS_ROOT"
WHAT = "dataset"


def _recorded(snapshot: Mapping[str, Any], key: str) -> str | None:
    value = snapshot.get(key)
    return value.strip() if isinstance(value, str) and value.strip() else None


def launch_folder(run_root: Path, snapshot: Mapping[str, Any]) -> Path:
    """The folder the run was most likely started from, as its location and ``RUNS_ROOT`` imply."""
    runs_root = run_root.parent
    recorded = _recorded(snapshot, RUNS_ROOT_KEY)
    if recorded is not None and not PurePath(recorded).is_absolute():
        parts = [p for p in PurePath(recorded).parts if p != "."]
        if parts and ".." not in parts and list(runs_root.parts[-len(parts) :]) == parts:
            return runs_root.parents[len(parts) - 1]
    return runs_root.parent


def search_paths(run_root: Path, snapshot: Mapping[str, Any], cwd: Path) -> list[Path]:
    """Where the recorded ``SOURCE_DB`` may be, in the documented order (empty when none is recorded)."""
    recorded = _recorded(snapshot, SOURCE_DB_KEY)
    if recorded is None:
        return []
    path = Path(recorded).expanduser()
    if path.is_absolute():
        return [path]
    bases = (cwd, launch_folder(run_root, snapshot), run_root)
    found: list[Path] = []
    for base in bases:
        candidate = Path(base / path)
        if candidate not in found:
            found.append(candidate)
    return found


def _flag(name: str | None, expected: str) -> str:
    what = f"the source DB {name!r}" if name else "the source DB the run was recorded on"
    return f"pass --dataset PATH with {what} (sha256 {expected})"


def locate_dataset(
    run_root: Path,
    snapshot: Mapping[str, Any],
    expected: str,
    *,
    extra: Sequence[Path] = (),
    cwd: Path | None = None,
) -> tuple[Path | None, Check]:
    """The dataset with sha256 ``expected`` (recorded ``SOURCE_DB`` first, then ``extra``) and the check.

    The check passes naming where the file was found, or fails saying which flag to pass.
    """
    root = run_root.resolve()
    paths = search_paths(root, snapshot, (cwd or Path.cwd()).resolve())
    recorded = _recorded(snapshot, SOURCE_DB_KEY)
    mismatched: list[tuple[Path, str]] = []
    for path in paths:
        if not path.is_file():
            continue
        actual = source_db_hash(path)
        if actual == expected:
            return path, passed(WHAT, f"{path}: SOURCE_DB {recorded!r} of run_meta.config_snapshot")
        mismatched.append((path, actual))
    for path in extra:
        if path.is_file() and source_db_hash(path) == expected:
            return path, passed(WHAT, f"{path}: carried with the run")
    name = PurePath(recorded).name if recorded is not None else None
    if recorded is None:
        reason = f"run_meta.config_snapshot records no {SOURCE_DB_KEY}"
    elif mismatched:
        reason = "; ".join(
            f"{SOURCE_DB_KEY} {recorded!r} of run_meta.config_snapshot is {path}, whose sha256 "
            f"{actual[:16]}… is not the recorded source_db hash"
            for path, actual in mismatched
        )
    else:
        reason = f"{SOURCE_DB_KEY} {recorded!r} of run_meta.config_snapshot is not a file under " + ", ".join(
            str(p.parent) for p in paths
        )
    return None, failed(WHAT, f"{reason}; {_flag(name, expected)}")
