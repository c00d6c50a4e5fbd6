"""The cassette-loader row: CPU of ``load_untrusted`` against libyaml's ``CSafeLoader``, in a child.

Both parsers read the same synthetic search store in a fresh process of their own (as a replay
parses its cassettes), alternated three times, the least CPU of each kept, with the cyclic garbage
collector on as in every real parse: the composer's node graph is what makes Python collect, a
cost of the composer itself. Not inside the calling process: a long-lived one (a test worker)
collects its own large heap during whichever parse runs, and pausing the collector to avoid that
would leave the composer's collections uncounted.

The child runs where ``benchmarks.sizes.CHILD`` says, so ``benchmarks.inject`` can point it at a
patched copy of the package (the row's injected regression: the composer back).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

from benchmarks import sizes


def loader_cpu(entries: int = 4_000) -> tuple[float, float, float]:
    """CPU seconds of the cassette loader and of ``CSafeLoader`` on a synthetic search store of
    ``entries`` entries (least of three alternated parses each, in a child process), and its MB."""
    from benchmarks.transport import synthetic_store  # here: benchmarks.transport imports this module

    with tempfile.TemporaryDirectory() as tmp:
        synthetic_store(Path(tmp), entries)
        path = Path(tmp) / "search.yaml"
        safe, plain = child_cpu(path)
        return safe, plain, path.stat().st_size / 1e6


def child_cpu(path: Path) -> tuple[float, float]:
    """:func:`measure_here` of the file at ``path``, in a child process run as ``sizes.CHILD`` says."""
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.loader", str(path)],
        cwd=cast(Path, sizes.CHILD["cwd"]),
        env={**os.environ, **cast(dict[str, str], sizes.CHILD["env"])},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the loader measurement exited {done.returncode}: {done.stderr[-2000:]}")
    safe, plain = (float(v) for v in done.stdout.split())
    return safe, plain


def _parse_cpu(parse: Callable[[], object]) -> float:
    """This thread's CPU seconds for one ``parse()``."""
    start = time.thread_time()
    parse()
    return time.thread_time() - start


def measure_here(data: bytes) -> tuple[float, float]:
    """Least CPU seconds of the cassette loader and of ``CSafeLoader`` over three alternated parses."""
    import yaml

    from oracleproto.transport.safe_yaml import load_untrusted

    plain_loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    plain: list[float] = []
    safe: list[float] = []
    for _ in range(3):  # alternated, best of three: the machine is shared
        plain.append(_parse_cpu(lambda: yaml.load(data, Loader=plain_loader)))
        safe.append(_parse_cpu(lambda: load_untrusted(data)))
    return min(safe), min(plain)


if __name__ == "__main__":
    safe_s, plain_s = measure_here(Path(sys.argv[1]).read_bytes())
    print(f"{safe_s!r} {plain_s!r}")
