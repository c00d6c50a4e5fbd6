"""Child processes timed as users run them: replay, ``verify`` and their floors.

Every measured command runs in its own child process, as a user runs it, and its wall time, CPU
time (user + sys of the whole process tree: ``wait4`` of the child counts every descendant it
waited for — a replay's index-building worker, ``verify``'s pool) and peak RSS are taken; the
floor (``benchmarks.floor``) runs the same way right next to it, so both see the same machine.
The runs themselves are recorded once and kept (``benchmarks.runs``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED_DB = REPO.parent / "shared" / "datasets" / "oracleproto-80.db"
CLI = [sys.executable, "-c", "from oracleproto.cli.main import main; main()"]


@dataclass(frozen=True)
class Timed:
    """One child process: wall seconds, peak resident memory (MiB) and CPU seconds (with its children)."""

    wall_s: float
    peak_mib: float
    cpu_s: float = 0.0


#: A bare interpreter (no site) that runs the command and reports its peak memory: ``ru_maxrss`` of a
#: child forked straight from this (large) process would count the pages it shared before exec.
#: A command may start processes of its own (a replay's worker, the index build's), and
#: ``ru_maxrss`` is the largest single process of the tree, not what the tree holds at once: the
#: wrapper also samples the sum of the tree's resident memory every 20 ms. The peak reported is the
#: larger of the two (the sum for several processes; for one, the kernel's exact maximum).
_WRAP = (
    "import os, sys, time\n"
    "pid = os.fork()\n"
    "if pid == 0:\n    os.execv(sys.argv[1], sys.argv[1:])\n"
    "page = os.sysconf('SC_PAGE_SIZE')\n"
    "def tree(p):\n"
    "    out = [p]\n"
    "    try:\n"
    "        for t in os.listdir('/proc/%d/task' % p):\n"
    "            with open('/proc/%d/task/%s/children' % (p, t)) as f:\n"
    "                for c in f.read().split():\n"
    "                    out += tree(int(c))\n"
    "    except (OSError, ValueError):\n"
    "        pass\n"
    "    return out\n"
    "def rss(p):\n"
    "    try:\n"
    "        with open('/proc/%d/statm' % p) as f:\n"
    "            return int(f.read().split()[1]) * page\n"
    "    except (OSError, IndexError, ValueError):\n"
    "        return 0\n"
    "top = 0\n"
    "while True:\n"
    "    done, status, usage = os.wait4(pid, os.WNOHANG)\n"
    "    if done:\n"
    "        break\n"
    "    top = max(top, sum(rss(p) for p in tree(pid)))\n"
    "    time.sleep(0.02)\n"
    "cpu = usage.ru_utime + usage.ru_stime\n"
    "sys.stderr.write('\\nPEAK_RSS_KB %d CPU_S %.3f\\n' % (max(usage.ru_maxrss, top // 1024), cpu))\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


#: Where children run and what is added to their environment: ``benchmarks.inject`` points both at a
#: patched copy of the package (a regression injected to show that a row can fail).
CHILD = {"cwd": REPO, "env": {}}


def run_child(
    command: Sequence[str], *, cwd: Path | None = None, check: bool = True, env: dict[str, str] | None = None
) -> Timed:
    """Run ``command`` (with ``env`` added to the environment); its wall time, CPU time and peak RSS."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-S", "-c", _WRAP, *command],
        cwd=cwd or CHILD["cwd"],
        env={**os.environ, **CHILD["env"], **(env or {})},  # type: ignore[dict-item]
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    wall = time.perf_counter() - start
    err = done.stderr.decode("utf-8", "replace")
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[3:])} exited {done.returncode}: {err[-2000:]}")
    peak, _, cpu = err.rsplit("PEAK_RSS_KB ", 1)[1].split()[:3]
    return Timed(wall, int(peak) / 1024, float(cpu))


def replay(run: Path, cache: Path, dataset: Path = SHARED_DB) -> Timed:
    """``oracleproto replay RUN`` as a user runs it (temporary output folder, ``cache`` for its index)."""
    return run_child(
        [*CLI, "replay", str(run), "--dataset", str(dataset), "--no-progress"],
        env={"ORACLEPROTO_CACHE_DIR": str(cache)},
    )


def verify(run: Path, dataset: Path = SHARED_DB) -> Timed:
    """``oracleproto verify RUN``."""
    return run_child([*CLI, "verify", str(run), "--dataset", str(dataset), "--quiet"])


def index_dir(run: Path, cache: Path) -> Path:
    """The replay index a replay of ``run`` with ``ORACLEPROTO_CACHE_DIR=cache`` builds and uses."""
    from oracleproto.transport.index import fingerprint
    from oracleproto.transport.replay_index import replay_index_dir

    return replay_index_dir(cache, fingerprint(run / "cassettes"))


def floor(run: Path, kind: str, index: Path | None = None) -> Timed:
    """One floor of ``benchmarks.floor`` (``replay``, ``index`` or ``verify``) on ``run``."""
    return run_child(
        [sys.executable, "-m", "benchmarks.floor", str(run), kind, *([str(index)] if index else [])]
    )


def alternate(pairs: int, tool: object, base: object) -> tuple[list[Timed], list[Timed]]:
    """Run tool and floor alternately ``pairs`` times; every run of each."""
    tools: list[Timed] = []
    bases: list[Timed] = []
    for _ in range(pairs):
        tools.append(tool())  # type: ignore[operator]
        bases.append(base())  # type: ignore[operator]
    return tools, bases


def best(pairs: int, tool: object, base: object) -> tuple[Timed, Timed]:
    """Alternate tool and floor ``pairs`` times; the least CPU of each (a shared machine only adds)."""
    tools, bases = alternate(pairs, tool, base)
    return min(tools, key=lambda t: t.cpu_s), min(bases, key=lambda t: t.cpu_s)


def cassette_mib(run: Path) -> float:
    """Size of the run's cassette files (MiB)."""
    return sum(p.stat().st_size for p in (run / "cassettes").rglob("*.yaml")) / (1 << 20)
