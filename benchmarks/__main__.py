"""``make bench``: the target table by default; ``python -m benchmarks NAME…`` runs single reports."""

from __future__ import annotations

import importlib
import sys

#: The default: every performance target as one table of ratios (exit 1 when one is missed), then
#: the 6-shard panel against the same experiment as one run (exit 1 when a value differs).
DEFAULT = ("targets", "panel_shards")
#: Further modules under ``benchmarks/`` exposing ``main()``, run only when named.
BENCHMARKS: list[str] = [
    "targets",
    "transport",
    "store_writes",
    "store_transfer",
    "analysis",
    "run_efficiency",
    "record_overhead",
    "live",
    "viewer",
    "panel_shards",
]


def main() -> int:
    """Run the named benchmarks (default: the target table); non-zero when a target is missed."""
    selected = sys.argv[1:] or list(DEFAULT)
    status = 0
    for name in selected:
        if name not in BENCHMARKS:
            print(f"unknown benchmark {name!r}; choose from {', '.join(BENCHMARKS)}")
            return 2
        print(f"== {name}", flush=True)
        result = importlib.import_module(f"benchmarks.{name}").main()
        status = max(status, result if isinstance(result, int) else 0)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
