"""``--json`` results of ``verify``, ``replay`` and ``cassettes ls|stats``: the facts of the text output.

Each document is one JSON object on stdout (sorted keys, indent 2) and carries ``schema`` so a
script can check what it reads; nothing else goes to stdout with ``--json`` (stages and notes
stay on stderr), and a failed check still exits non-zero after the document is printed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from oracleproto.runner.replay import ReplayReport
from oracleproto.store import RunDir
from oracleproto.transport.entry import Entry
from oracleproto.transport.stats import CassetteStats, cassette_stats, savings_text
from oracleproto.verify.findings import VerifyReport

SCHEMA = "oracleproto-cli/1"
MAIN_TABLES = ("table3_overall", "table4_buckets", "table5_consistency")


def emit(kind: str, document: dict[str, Any]) -> None:
    """Print ``document`` (tagged with ``schema`` and ``kind``) as the command's only stdout."""
    tagged = {"schema": SCHEMA, "kind": kind, **document}
    click.echo(json.dumps(tagged, indent=2, sort_keys=True, ensure_ascii=False))


def verify_document(report: VerifyReport, attestation: Path | None = None) -> dict[str, Any]:
    """``verify --json``: the verdict, the counts and every check (what, status, detail)."""
    counts = {s: sum(c.status == s for c in report.checks) for s in ("pass", "FAIL", "skip", "n/a")}
    return {
        "target": str(report.target),
        "verified": report.ok,
        "counts": {
            "passed": counts["pass"],
            "failed": counts["FAIL"],
            "skipped": counts["skip"],
            "not_applicable": counts["n/a"],
        },
        "checks": [{"what": c.what, "status": c.status, "detail": c.detail} for c in report.checks],
        "attestation": None if attestation is None else str(attestation),
    }


def replay_document(
    report: ReplayReport, *, kept: bool, stats: CassetteStats | None, tables: dict[str, str]
) -> dict[str, Any]:
    """``replay --json``: every check, the verdict, where the replay went, traffic and the tables."""
    return {
        "original": str(report.original),
        "reproduced": report.ok,
        "checks": [{"what": c.what, "match": c.ok, "detail": c.detail} for c in report.checks],
        "matched": sum(c.ok for c in report.checks),
        "replayed_run": str(report.replayed) if kept else None,
        "traffic": report.summary.traffic,
        "cassettes": None if stats is None else stats_document(stats, None)["channels"],
        "savings": None if stats is None else savings_text(stats),
        "tables": tables,
    }


def emit_replay(report: ReplayReport, *, kept: bool, tables: bool) -> None:
    """Print ``replay --json`` (call before a temporary replay folder is removed)."""
    replayed = RunDir.open(report.replayed)
    stats = cassette_stats(replayed.cassettes_dir)
    shown: dict[str, str] = {}
    if tables:
        for name in MAIN_TABLES:
            path = replayed.analysis_dir / f"{name}.md"
            if path.is_file():
                shown[name] = path.read_text(encoding="utf-8")
    emit("replay", replay_document(report, kept=kept, stats=stats, tables=shown))


def entry_document(entry: Entry, users: int | None = None) -> dict[str, Any]:
    """One ``cassettes ls`` line: key, channel, status, generation, context, samples using it."""
    return {
        "key": entry.key,
        "channel": entry.channel,
        "status": entry.status,
        "generation": entry.generation,
        "context": entry.context,
        "used_by_samples": users,
    }


def stats_document(stats: CassetteStats, samples: int | None) -> dict[str, Any]:
    """``cassettes stats --json``: bytes, root digest, per-channel counts, the collapse check."""
    channels = {
        name: {
            "entries": ch.entries,
            "requests": ch.requests,
            "dedup_ratio": round(ch.dedup_ratio, 6),
            "per_call_entries": ch.per_call,
            "prompt_tokens": ch.prompt_tokens,
            "completion_tokens": ch.completion_tokens,
            "cost_usd": round(ch.cost, 10) if ch.costed else None,
            "calls_reporting_cost": ch.costed,
        }
        for name, ch in sorted(stats.channels.items())
    }
    if samples is None:
        collapse: dict[str, Any] = {"status": "skipped", "violations": []}
    else:
        status = "violations" if stats.collapse_violations else "ok"
        collapse = {"status": status, "samples": samples, "violations": list(stats.collapse_violations)}
    return {
        "cassettes": str(stats.cassette_dir),
        "bytes": stats.bytes,
        "root_digest": stats.root_digest,
        "channels": channels,
        "sample_collapse": collapse,
    }
