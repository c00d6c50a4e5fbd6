"""Starting worker processes with ``spawn`` without running the caller's main script again."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def main_not_rerun() -> Iterator[None]:
    """While worker processes start, present a blank ``__main__`` to ``multiprocessing``.

    A spawned child re-runs the parent's main script (as ``__mp_main__``) before it takes work,
    so a caller's script without an ``if __name__ == "__main__"`` guard would run again in every
    worker (and fail there), and a guarded one would still import its whole program. The workers
    need nothing from it: the functions they run live in this package. (Another thread of this process looking
    up ``__main__`` in that instant would see the blank module; nothing in a replay does.)
    """
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main
