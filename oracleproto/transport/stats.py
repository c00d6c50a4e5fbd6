"""Statistics over a cassette set: entries, dedup, sample-collapse check, bytes, tokens, cost."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oracleproto.primitives.usage_cost import provider_cost_usd, token_count
from oracleproto.transport.entry import Entry
from oracleproto.transport.layout import all_cassette_files
from oracleproto.transport.store import CassetteStore


@dataclass
class ChannelStats:
    """Counts of one channel."""

    entries: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    #: Entries whose response reports its cost (OpenRouter's ``usage.cost``, xAI's ticks; most
    #: providers report none).
    costed: int = 0
    #: Entries keyed per call (sample context and occurrence): on search/detector, the calls of a
    #: run recorded with request_sharing "none", which no other call shares.
    per_call: int = 0

    @property
    def dedup_ratio(self) -> float:
        """Requests served per stored entry (1.0 = no sharing)."""
        return self.requests / self.entries if self.entries else 0.0

    def sharing_text(self) -> str:
        """How a search/detector channel shares its entries, for the ``cassettes stats`` line."""
        ratio = f"dedup ratio {self.dedup_ratio:.2f}"
        if not self.per_call:
            return ratio  # request_sharing identical_search_and_detector (the default)
        if self.per_call == self.entries:
            return f"{ratio}, nothing shared (request_sharing none: every call its own entry)"
        # Under "none", calls made outside a sample context still share (the default keying).
        return (
            f"{ratio}, {self.per_call} of {self.entries} entries per call (request_sharing none), "
            "the rest shared"
        )


@dataclass
class CassetteStats:
    """What ``oracleproto cassettes stats`` reports."""

    cassette_dir: Path
    bytes: int
    root_digest: str
    channels: dict[str, ChannelStats] = field(default_factory=dict)
    collapse_violations: list[str] = field(default_factory=list)


def savings_text(stats: CassetteStats) -> str:
    """What replaying this cassette set saves: the live calls, tokens and reported cost it recorded."""
    calls = sum(ch.entries for ch in stats.channels.values())
    tokens = sum(ch.prompt_tokens + ch.completion_tokens for ch in stats.channels.values())
    costed = sum(ch.costed for ch in stats.channels.values())
    text = f"a replay makes none of its {calls} recorded provider calls ({tokens} tokens)"
    if costed:
        cost = sum(ch.cost for ch in stats.channels.values())
        text += f"; recorded cost {cost:.6f} USD ({costed} of {calls} calls report their cost)"
    else:
        text += "; no call reports its cost (price it with `oracleproto report --prices`)"
    return text


def _usage(body: bytes) -> dict[str, Any]:
    # Non-streaming bodies carry usage at top level; SSE streams in their last data chunk.
    text = body.decode("utf-8", "replace").strip()
    candidates = [text]
    if text.startswith(("data:", ":")):
        candidates = [ln[5:].strip() for ln in text.splitlines() if ln.startswith("data:")][::-1]
    for chunk in candidates:
        try:
            doc = json.loads(chunk)
        except (ValueError, RecursionError):  # not JSON, a 5,000-digit number, nesting too deep
            continue
        if isinstance(doc, dict) and isinstance(doc.get("usage"), dict):
            usage: dict[str, Any] = doc["usage"]
            return usage
    return {}


def collapse_violations(entries: list[Entry], n_samples: int) -> list[str]:
    """Model × question pairs whose first main-LLM calls have fewer than ``n_samples`` distinct keys.

    Main-LLM entries only: search/detector entries carry a context too (the first asker's when
    shared, their own under request_sharing "none") but say nothing about sample collapse.
    """
    keys: dict[tuple[str, str], set[str]] = defaultdict(set)
    for e in entries:
        if e.channel == "llm" and e.context is not None and e.context["step"] == 0 and not e.occurrence:
            keys[(e.context["model"], e.context["question_id"])].add(e.key)
    return [
        f"{model} × {qid}: {len(found)} distinct main-LLM key(s) for {n_samples} samples"
        for (model, qid), found in sorted(keys.items())
        if len(found) != n_samples
    ]


def cassette_stats(
    cassette_dir: Path, n_samples: int | None = None, *, store: CassetteStore | None = None
) -> CassetteStats:
    """Compute the stats of a cassette directory (all generations; latest entry per key).

    ``store``: the directory's entries already in memory (a replay's), so they are not parsed again.
    """
    store = store if store is not None else CassetteStore(cassette_dir, writable=False)
    out = CassetteStats(
        cassette_dir=cassette_dir,
        bytes=sum(p.stat().st_size for p in all_cassette_files(cassette_dir)),
        root_digest=store.root_digest(),
    )
    summary = store.index.summary() if store.index is not None and not store.loaded else None
    if n_samples is None and summary is not None and isinstance(summary.get("channels"), dict):
        # Served from a fresh index: its summary holds these counts, so nothing is parsed.
        out.channels = {name: ChannelStats(**fields) for name, fields in summary["channels"].items()}
        return out
    entries = store.effective_entries()
    out.channels = channel_stats(entries)
    if n_samples is not None:
        out.collapse_violations = collapse_violations(entries, n_samples)
    return out


#: What one entry adds to its channel's statistics: channel, requests, prompt and completion
#: tokens, reported cost (None when the response reports none), keyed per call. A few numbers,
#: unlike the entry, so a streamed index build keeps one per key and sums them at the end in key
#: order.
EntryTally = tuple[str, int, int, int, float | None, bool]


def entry_tally(e: Entry) -> EntryTally:
    """What ``e`` adds to :func:`channel_stats`."""
    usage = _usage(e.body)
    # Bounded like the providers read them (``usage_cost``): NaN, Infinity or 10^30 counts nothing.
    prompt = token_count(usage.get("prompt_tokens"), "prompt_tokens") or 0
    completion = token_count(usage.get("completion_tokens"), "completion_tokens") or 0
    return e.channel, e.requests, prompt, completion, provider_cost_usd(usage), e.occurrence is not None


def tally_stats(tallies: Iterable[EntryTally]) -> dict[str, ChannelStats]:
    """Per-channel statistics from entry tallies (costs added in the order given)."""
    channels: dict[str, ChannelStats] = {}
    for channel, requests, prompt, completion, reported, per_call in tallies:
        ch = channels.setdefault(channel, ChannelStats())
        ch.entries += 1
        ch.per_call += per_call
        ch.requests += requests
        ch.prompt_tokens += prompt
        ch.completion_tokens += completion
        if reported is not None:
            ch.cost += reported
            ch.costed += 1
    return channels


def channel_stats(entries: Iterable[Entry]) -> dict[str, ChannelStats]:
    """Entries, requests, tokens and reported cost per channel."""
    return tally_stats(entry_tally(e) for e in entries)
