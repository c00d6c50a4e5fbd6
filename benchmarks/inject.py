"""Regressions injected into a copy of the package, to show that a benchmark row can fail.

:func:`patched_copy` copies ``oracleproto/`` into a folder and applies text patches (each anchor
must occur exactly once, so a patch that no longer applies fails loudly instead of measuring the
clean code); :func:`children_use` makes every child process of ``benchmarks.sizes`` (the tool and
its floor alike) import that copy. The tests in ``tests/benchmarks`` use both.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from benchmarks import sizes

#: (file under ``oracleproto/``, anchor text, replacement text).
Patch = tuple[str, str, str]

#: A CPU burn of ``ms`` milliseconds, as one line of code (the CPU-time analogue of a sleep).
BURN = "__import__('benchmarks.inject', fromlist=['burn']).burn({ms})"


def burn(ms: float) -> None:
    """Spend ``ms`` milliseconds of this process's CPU (a busy loop, not a sleep)."""
    import time

    end = time.process_time() + ms / 1000
    while time.process_time() < end:
        pass


def patched_copy(dest: Path, patches: Sequence[Patch]) -> Path:
    """``oracleproto/`` copied under ``dest`` with ``patches`` applied; returns ``dest``."""
    source = sizes.REPO / "oracleproto"
    # The bytecode caches come along (copytree keeps each file's mtime, which the caches are checked
    # against): the children skip compiling the package again, and a patched file, written now,
    # no longer matches its cache and is compiled from its new text.
    shutil.copytree(source, dest / "oracleproto")
    for rel, anchor, replacement in patches:
        path = dest / "oracleproto" / rel
        text = path.read_text(encoding="utf-8")
        if text.count(anchor) != 1:
            raise AssertionError(f"{rel}: anchor found {text.count(anchor)} times, not once: {anchor!r}")
        path.write_text(text.replace(anchor, replacement), encoding="utf-8")
    return dest


@contextmanager
def children_use(copy_root: Path) -> Iterator[None]:
    """Child processes run from ``copy_root`` (its package first on the path; ``benchmarks`` after)."""
    saved = dict(sizes.CHILD)
    sizes.CHILD["cwd"] = copy_root
    sizes.CHILD["env"] = {"PYTHONPATH": f"{copy_root}:{sizes.REPO}"}
    try:
        yield
    finally:
        sizes.CHILD.clear()
        sizes.CHILD.update(saved)
