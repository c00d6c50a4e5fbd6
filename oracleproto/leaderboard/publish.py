"""Put a built board's files in place all at once: written beside ``--out``, swapped in by rename.

Everything is rendered in memory first (``build.py``), so a bad run, a refused panel or a failing
viewer never touches the disk. Then the files go into a temporary sibling of ``--out`` and one
rename puts the folder in place (two when an earlier board is replaced: ``analysis/writer``'s
swap). A failure at any step removes the temporary folder and any parent folder this call
created: the reader finds the earlier board or nothing, never half of one.

``--out`` must be new, empty, or an earlier leaderboard's folder (it holds :data:`MARKER`): the
swap replaces the whole folder, so a folder of the user's own files is refused, not emptied.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Mapping
from pathlib import Path

from oracleproto.analysis.writer import remove_leftovers, swap_directory
from oracleproto.errors import AnalysisError
from oracleproto.primitives.oserrors import cannot_write

#: The file that marks a folder as a leaderboard's (``--out`` may replace only such a folder).
MARKER = ".oracleproto-leaderboard"
MARKER_TEXT = "written by `oracleproto leaderboard`; the next board written here replaces this folder\n"


def check_out(out: Path) -> None:
    """Refuse an ``--out`` that is a file, or a folder with files of something other than a board."""
    if out.exists() and not out.is_dir():
        raise AnalysisError(
            f"--out {out} is a file: give a folder for the page, the CSV and the viewer pages"
        )
    if out.is_dir() and not (out / MARKER).is_file() and any(out.iterdir()):
        raise AnalysisError(
            f"--out {out} is a folder that holds other files and no earlier leaderboard "
            f"(no {MARKER} in it): choose a new or empty folder, or an earlier board's to replace it"
        )


def _missing_parents(out: Path) -> list[Path]:
    """The ancestors of ``out`` that do not exist yet, deepest first (removed again on failure)."""
    missing = []
    for parent in out.parents:
        if parent.exists():
            break
        missing.append(parent)
    return missing


def publish(files: Mapping[str, str], out: Path) -> list[Path]:
    """Write ``files`` (name → text) as the folder ``out``; every path written, in ``files``' order."""
    out = Path(os.path.abspath(out))
    check_out(out)
    created = _missing_parents(out)
    tmp: Path | None = None
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        remove_leftovers(out)
        # Mode 0o777 for the kernel to apply the user's umask (mkdtemp's 0o700 would make a board
        # meant to be shared unreadable to the others who read the user's files).
        tmp = out.parent / f".{out.name}.tmp-{secrets.token_hex(6)}"
        tmp.mkdir(0o777)
        (tmp / MARKER).write_text(MARKER_TEXT, encoding="utf-8")
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8")
        swap_directory(tmp, out)
    except OSError as exc:
        _clean(tmp, created)
        raise AnalysisError(cannot_write(out, exc)) from None
    except BaseException:
        _clean(tmp, created)
        raise
    return [out / name for name in files]


def _clean(tmp: Path | None, created: list[Path]) -> None:
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)
    for folder in created:
        try:
            folder.rmdir()
        except OSError:
            break
