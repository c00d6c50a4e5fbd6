"""Paths that come from files (manifests, bundles, cassettes) stay inside their folder.

Every relative path read from a file someone else may have written goes through
:func:`confined` before it is opened: run ids, ``model_files`` names, bundle member names,
cassette folders and files. A name with ``..``, an absolute path, a backslash or a NUL byte is
refused, and so is a name whose resolved target (symlinks followed) leaves the folder.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path, PurePosixPath

from oracleproto.errors import OracleprotoError


class UnsafePathError(OracleprotoError):
    """A path read from a file points outside the folder it must stay in."""


ErrorFactory = Callable[[str], OracleprotoError]


def check_relative(name: str, *, what: str, error: ErrorFactory = UnsafePathError) -> PurePosixPath:
    """``name`` as a relative POSIX path without ``..``; refused otherwise (no file-system access)."""
    path = PurePosixPath(name)
    if (
        not name
        or "\\" in name
        or "\x00" in name
        or path.is_absolute()
        or ".." in path.parts
        or not path.parts
        or path.parts == (".",)
    ):
        raise error(
            f"{what} {name!r} escapes its folder (absolute path, '..', backslash or empty name); "
            "refusing to follow it — the file naming it was edited or crafted"
        )
    return path


def confined(base: Path, name: str, *, what: str, error: ErrorFactory = UnsafePathError) -> Path:
    """``base / name``, refused when ``name`` is unsafe or resolves (symlinks followed) outside ``base``."""
    target = base / check_relative(name, what=what, error=error)
    return ensure_inside(base, target, what=what, error=error)


def ensure_inside(base: Path, target: Path, *, what: str, error: ErrorFactory = UnsafePathError) -> Path:
    """``target`` unchanged when it resolves inside ``base``; refused when a symlink leads out of it."""
    root = base.resolve()
    resolved = target.resolve()
    if resolved != root and not resolved.is_relative_to(root):
        raise error(
            f"{what} {target} leads outside {base} (to {resolved}, through a symlink); refusing to follow it"
        )
    return target


def first_missing_ancestor(path: Path) -> Path | None:
    """The outermost of ``path`` and its parents that does not exist yet (what a mkdir -p would create)."""
    missing = None
    for candidate in [path, *path.parents]:
        if candidate.exists():
            break
        missing = candidate
    return missing
