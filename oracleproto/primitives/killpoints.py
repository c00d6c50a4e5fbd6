"""Test hook: stop the process at a named phase boundary of a run, to prove resume survives it.

Inert unless the environment variable is set (the crash tests set it in a subprocess)::

    ORACLEPROTO_TEST_KILL_AT=<phase>[:<n>][@<action>]

``phase`` is one of :data:`PHASES`; ``n`` (default 1) picks the n-th time this process reaches it;
``action`` is ``KILL`` (default: SIGKILL, nothing runs after), ``TERM`` (a SIGTERM arrives now; the
process handles it like any other), ``INT`` (a SIGINT, i.e. Ctrl-C, arrives now) or ``ENOSPC``
(the write at this point fails with a full disk).
The code marks a boundary with :func:`reached`; the variable is read once per process.
"""

from __future__ import annotations

import errno
import functools
import os
import signal
import threading
from dataclasses import dataclass

from oracleproto.errors import ConfigError

ENV_VAR = "ORACLEPROTO_TEST_KILL_AT"
#: Phase boundaries of a run, in the order a recording reaches them (then other commands' own).
PHASES = (
    "manifest",  # the manifest of this session is written, nothing else yet
    "commit",  # a sample (or a cutoff skip) was committed to its model DB
    "last-sample",  # every pending sample is committed; the journal is not folded yet
    "fold",  # a journal fold is about to rewrite its n-th cassette file (n > 1: mid-rewrite)
    "fold-write",  # a cassette file's temp copy is written and fsynced, not yet renamed into place
    "folded",  # every cassette file is rewritten; the journal is not cleared yet
    "finished",  # the DBs are stamped finished; the manifest is not
    "analysis",  # the analysis files are written to their temp folder, not yet swapped in
    "analysis-swap",  # the old analysis folder is moved aside, the new one not yet in place
    "replay-worker",  # a replay worker process sent its n-th sample to the main process
    # Maintenance switches (verify/switch.py: ``cassettes gc --apply``):
    "switch-stage",  # the n-th new file is staged in .switch.staging/ (nothing switched yet)
    "switch-commit",  # every new file is staged; the staging folder is not yet renamed to .switch/
    "switch-move",  # the switch is committed; its n-th file is about to move into place
    "switch-moved",  # every staged file is in place; .switch/ is not yet removed
    # Imports (dataset/importers/pipeline.py):
    "import-db",  # ``dataset import`` wrote its DB; its report is not yet written
    "bundle-member",  # ``bundle import`` copied and checked its n-th member into its temp folder
    # Cassette stores (objectstore/):
    "store-put",  # ``store push`` uploaded its n-th object (the run's index not yet)
    "store-index",  # every object is uploaded; the run's index is not yet
    "store-get",  # ``store pull`` / --from-store verified its n-th object into the local cache
    "store-place",  # the pulled run is laid out and checked in its staging folder, not yet renamed
    # Every file replaced in place (primitives/fileio.py):
    "atomic-write",  # the n-th replacement's temporary file is written and fsynced, not yet renamed
)
ACTIONS = ("KILL", "TERM", "INT", "ENOSPC")


@dataclass(frozen=True)
class KillPoint:
    """Where and how to stop."""

    phase: str
    n: int
    action: str


def parse(value: str) -> KillPoint:
    """``phase[:n][@action]`` → a kill point; a clear error for anything else."""
    where, _, action = value.partition("@")
    phase, _, count = where.partition(":")
    action = action or "KILL"
    if phase not in PHASES or action not in ACTIONS or (count and not count.isdigit()) or count == "0":
        raise ConfigError(
            f"{ENV_VAR}={value!r}: expected <phase>[:<n>][@<action>] with phase one of "
            f"{', '.join(PHASES)}, n ≥ 1 and action one of {', '.join(ACTIONS)}"
        )
    return KillPoint(phase, int(count or 1), action)


_lock = threading.Lock()
_counts: dict[str, int] = {}


@functools.cache
def _configured() -> KillPoint | None:
    value = os.environ.get(ENV_VAR)
    return parse(value) if value else None


def reached(phase: str) -> None:
    """Mark a phase boundary; acts only when the variable names this phase and count."""
    with _lock:
        point = _configured()
        if point is None or point.phase != phase:
            return
        _counts[phase] = _counts.get(phase, 0) + 1
        if _counts[phase] != point.n:
            return
    if point.action == "ENOSPC":
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    signals = {"KILL": signal.SIGKILL, "TERM": signal.SIGTERM, "INT": signal.SIGINT}
    os.kill(os.getpid(), signals[point.action])
