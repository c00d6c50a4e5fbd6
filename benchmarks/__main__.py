"""Run every benchmark module registered in ``BENCHMARKS`` and print its report."""

from __future__ import annotations

import importlib
import sys

#: Modules under ``benchmarks/`` exposing ``main() -> None``.
BENCHMARKS: list[str] = ["transport", "store_writes", "analysis", "run_efficiency"]


def main() -> int:
    """Run the selected benchmarks (all when no names are given)."""
    selected = sys.argv[1:] or BENCHMARKS
    for name in selected:
        print(f"== {name}")
        importlib.import_module(f"benchmarks.{name}").main()
    if not selected:
        print("no benchmarks registered")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
