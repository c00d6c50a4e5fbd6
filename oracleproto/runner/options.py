"""What one invocation of the runner is given (``RunOptions``, ``Recorded``) and reports (``RunSummary``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from oracleproto.ledger.gate import LedgerGate
from oracleproto.runner.failure_tally import FailureTally
from oracleproto.runner.replay_shards import ReplayShard
from oracleproto.runner.spend_cap import SpendCap
from oracleproto.settings.model import CacheMode, Settings
from oracleproto.store import RefreshInfo, RunDir
from oracleproto.store.manifest import ExperimentInfo
from oracleproto.transport import RefreshPredicate
from oracleproto.transport.stats import CassetteStats


@dataclass(frozen=True)
class Recorded:
    """What a replay takes from the recording instead of the clock or the live settings."""

    started_at: datetime
    finished_at: datetime | None
    config_snapshot: dict[str, Any]
    cassettes_mode: CacheMode
    #: The recorded run's refresh provenance (a replayed refresh writes the same manifest).
    refresh: RefreshInfo | None = None
    #: The recorded shard's experiment (a replayed shard writes the same manifest).
    experiment: ExperimentInfo | None = None
    #: The recorded ``hashes.prompt_templates``: which form of the templates the run stored.
    prompt_templates_hash: str | None = None


@dataclass(frozen=True)
class RunOptions:
    """One invocation of the runner."""

    settings: Settings
    source_db: Path
    runs_root: Path
    mode: CacheMode = "record"
    run_id: str | None = None
    recorded: Recorded | None = None
    cache_dir: Path | None = None
    progress: bool = True
    #: Called with the run directory after the DBs are complete (the analysis pass).
    after: Callable[[RunDir, Settings], None] | None = None
    #: Refresh mode only: which calls go live again (None = all); the rest replay.
    should_refresh: RefreshPredicate | None = None
    #: Refresh mode only: what is refreshed into which cassette generation (kept in the manifest,
    #: so rerunning the same refresh id resumes into that generation).
    refresh: RefreshInfo | None = None
    #: ``--max-cost``: stops the session resumably once its spend reaches the cap (live modes).
    spend_cap: SpendCap | None = None
    #: The experiment config file's name and sha256, recorded in the config snapshot.
    config_file: dict[str, str] | None = None
    #: Replay only: processes that share the slots (``runner/replay_shards.py``); 1 = this one alone.
    replay_processes: int = 1
    #: Replay only: worker processes already started for them (else started when the slots are known).
    replay_workers: list[ReplayShard] | None = None
    #: Record mode: the transport that answers live requests instead of the network (``conformance``
    #: answers each request with another harness's captured response); None = the network.
    inner_transport: httpx.AsyncBaseTransport | None = None
    #: The experiment this run is a shard of (``run --shard``/``--shard-models``/``--experiment``),
    #: kept in the manifest.
    experiment: ExperimentInfo | None = None
    #: Live modes: the shared ledger (``LEDGER_URL``) every live call passes through; closed when the
    #: run ends. None: no ledger, as before.
    ledger: LedgerGate | None = None


@dataclass
class RunSummary:
    """What a finished (or resumed) run did."""

    run: RunDir
    slots_total: int
    slots_done_before: int
    slots_run: int
    errors: dict[str, int] = field(default_factory=dict)
    #: Samples the model is asked in the whole run (slots minus admission exclusions): what
    #: ``--allow-errors FRACTION`` is a fraction of.
    samples_admitted: int = 0
    #: Per channel, this session's requests and how they were served (``RecordReplay.session_stats``).
    traffic: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Replay only: statistics of the replayed cassette set (the "what replay saves" line).
    cassettes: CassetteStats | None = None
    #: This session's retries, waits, failed verdicts and removed results, per model.
    failures: FailureTally = field(default_factory=FailureTally)
    #: A finished run re-entered with nothing pending: this session wrote nothing.
    unchanged: bool = False
