"""Replay and ``verify`` against their libyaml floors at three run sizes, with peak memory.

Every measured command runs in its own child process, as a user runs it, and its wall time
and peak RSS (``wait4``) are taken; the floor (``benchmarks.floor``) runs the same way right
next to it, so both see the same machine. Real runs are recorded against the simulator (zero
latency); the 30 × 300 × 3 panel is synthetic: the 6 × 80 × 3 cassettes re-keyed and
copied up to that size (recording it would take an hour), and for it a first replay's cassette
stage (stream every file into the index, verifying every digest; root digest) is measured against
the floor's parse.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from oracleproto.transport.entry import Entry
from oracleproto.transport.fileio import atomic_write, dump_entries, read_entries

REPO = Path(__file__).resolve().parents[1]
SHARED_DB = REPO.parent / "shared" / "datasets" / "oracleproto-80.db"
CLI = [sys.executable, "-c", "from oracleproto.cli.main import main; main()"]
#: The published panel size the synthetic run stands for.
SYNTH_MODELS, SYNTH_QUESTIONS = 30, 300


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


def run_child(
    command: Sequence[str], *, cwd: Path = REPO, check: bool = True, env: dict[str, str] | None = None
) -> Timed:
    """Run ``command`` (with ``env`` added to the environment); its wall time and peak RSS."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-S", "-c", _WRAP, *command],
        cwd=cwd,
        env={**os.environ, **(env or {})},
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


def record(models: int, root: Path) -> tuple[Path, Timed]:
    """Record models × 80 × 3 against the simulator (zero latency); the run dir and its timing."""
    args = ["sim", "run", "--dataset", str(SHARED_DB), "--models", str(models), "--samples", "3"]
    timed = run_child([*CLI, *args, "--runs-root", str(root), "--no-progress"])
    (run,) = [p for p in root.iterdir() if p.is_dir()]
    return run, timed


def replay(run: Path, cache: Path) -> Timed:
    """``oracleproto replay RUN`` as a user runs it (temporary output folder, ``cache`` for its index)."""
    return run_child(
        [*CLI, "replay", str(run), "--dataset", str(SHARED_DB), "--no-progress"],
        env={"ORACLEPROTO_CACHE_DIR": str(cache)},
    )


def verify(run: Path) -> Timed:
    """``oracleproto verify RUN``."""
    return run_child([*CLI, "verify", str(run), "--dataset", str(SHARED_DB), "--quiet"])


def floor(run: Path, *, for_verify: bool) -> Timed:
    """The floor of ``benchmarks.floor`` on ``run``."""
    return run_child(
        [sys.executable, "-m", "benchmarks.floor", str(run), *(["verify"] if for_verify else [])]
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
    """Alternate tool and floor ``pairs`` times; the fastest of each (a shared machine only adds time)."""
    tools, bases = alternate(pairs, tool, base)
    return min(tools, key=lambda t: t.wall_s), min(bases, key=lambda t: t.wall_s)


def _rekeyed(entry: Entry, copy: int) -> Entry:
    key = hashlib.sha256(f"{entry.key}:{copy}".encode()).hexdigest()
    return dataclasses.replace(entry, key=key, digest=None)


def synthesize(source_run: Path, target: Path, *, models: int = 6, questions: int = 80) -> float:
    """Cassettes of a 30 × 300 × 3 panel from a models × questions × 3 run; returns the scale factor.

    Each source file is parsed once and written ``ceil(scale)`` times with fresh keys (and
    digests); the last copy takes only its fraction of the entries.
    """
    scale = (SYNTH_MODELS * SYNTH_QUESTIONS) / (models * questions)
    copies = math.ceil(scale)
    src = source_run / "cassettes"
    for path in sorted(src.glob("*.yaml")) + sorted((src / "llm").glob("*.yaml")):
        rel = path.relative_to(src)
        parsed = read_entries(path)
        for copy in range(copies):
            entries = parsed
            if copy == copies - 1:
                entries = entries[: max(1, round(len(entries) * (scale - copies + 1)))]
            name = rel.with_name(f"{rel.stem}__x{copy}{rel.suffix}")
            atomic_write(target / "cassettes" / name, dump_entries(_rekeyed(e, copy) for e in entries))
    return scale


#: What a first ``oracleproto replay`` does with the cassettes before its first request: the
#: ``RecordReplay`` a replay opens streams every file into a fresh index (verifying every digest,
#: accumulating the root and the statistics), then serves from it; the root comes from its summary.
_LOAD = (
    "import sys; from pathlib import Path; from oracleproto.clock import SystemClock; "
    "from oracleproto.transport.index import fingerprint; "
    "from oracleproto.transport.recorder import RecordReplay; "
    "from oracleproto.transport.replay_index import replay_index_dir; "
    "c = Path(sys.argv[1]) / 'cassettes'; "
    "rr = RecordReplay(c, clock=SystemClock(), mode='replay', "
    "cache_dir=replay_index_dir(Path(sys.argv[2]), fingerprint(c))); rr.root_digest(); rr.close()"
)
_PARSE = (
    "import sys; from pathlib import Path; from benchmarks.floor import parse_cassettes; "
    "parse_cassettes(Path(sys.argv[1]), digest=False)"
)


def synthetic_load(run: Path) -> Timed:
    """A first replay's cassette stage on ``run``: stream every file into a new index, root digest."""
    cache = run.parent / f"cache-{run.name}"
    shutil.rmtree(cache, ignore_errors=True)  # always a first replay: the index is built, not reused
    try:
        return run_child([sys.executable, "-c", _LOAD, str(run), str(cache)])
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def synthetic_floor(run: Path) -> Timed:
    """libyaml parse of every cassette file of ``run``."""
    return run_child([sys.executable, "-c", _PARSE, str(run)])


def cassette_mib(run: Path) -> float:
    """Size of the run's cassette files (MiB)."""
    return sum(p.stat().st_size for p in (run / "cassettes").rglob("*.yaml")) / (1 << 20)
