"""Cassette-level roll-ups: provider markers, search drift, detector verdict flips, cost."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Any

from oracleproto.primitives.usage_cost import provider_cost_usd, token_count
from oracleproto.refresh.classify import MARKER_FIELDS, EntryChange
from oracleproto.refresh.mask import parse_body
from oracleproto.transport.entry import Entry, is_carried_copy


def _doc(entry: Entry) -> dict[str, Any]:
    body, is_json = parse_body(entry.body)
    return body if is_json and isinstance(body, dict) else {}


def marker_drift(old: tuple[Entry, ...], new: tuple[Entry, ...]) -> list[dict[str, Any]]:
    """Per requested model and marker field: value counts before and after, when they differ."""

    def tally(entries: tuple[Entry, ...]) -> dict[tuple[str, str], Counter[str]]:
        out: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
        for e in entries:
            if e.channel == "search" or e.status != 200:
                continue
            doc = _doc(e)
            requested = str(e.request_meta.get("model"))
            for name in MARKER_FIELDS:
                if name in doc:
                    out[(requested, name)][str(doc[name])] += 1
        return out

    before, after = tally(old), tally(new)
    rows = []
    for model, name in sorted(before.keys() | after.keys()):
        a, b = before.get((model, name), Counter()), after.get((model, name), Counter())
        if set(a) != set(b):
            rows.append(
                {
                    "model": model,
                    "field": name,
                    "before": dict(sorted(a.items())),
                    "after": dict(sorted(b.items())),
                }
            )
    return rows


def _results(entry: Entry) -> dict[str, Any]:
    results = _doc(entry).get("results")
    out: dict[str, Any] = {}
    for item in results if isinstance(results, list) else []:
        if isinstance(item, dict) and isinstance(item.get("url"), str):
            out[item["url"]] = item.get("published_date")
    return out


def search_drift(changes: list[EntryChange]) -> list[dict[str, Any]]:
    """Per re-asked search whose answer changed: URLs added/removed, published_date changes."""
    rows = []
    for c in changes:
        if c.channel != "search" or c.cls != "response_changed" or c.old is None or c.new is None:
            continue
        a, b = _results(c.old), _results(c.new)
        rows.append(
            {
                "query": c.slot[1] if len(c.slot) > 1 else c.new.key[:16],
                "urls_added": sorted(b.keys() - a.keys()),
                "urls_removed": sorted(a.keys() - b.keys()),
                "published_date_changes": [
                    {"url": u, "before": a[u], "after": b[u]}
                    for u in sorted(a.keys() & b.keys())
                    if a[u] != b[u]
                ],
            }
        )
    return rows


def _verdict(entry: Entry) -> str:
    if entry.exception is not None or entry.status != 200:
        return f"failed:{entry.status}"
    choices = _doc(entry).get("choices")
    try:
        content = choices[0]["message"]["content"]  # type: ignore[index]
        verdict = json.loads(content).get("verdict")
    except (TypeError, KeyError, IndexError, json.JSONDecodeError, AttributeError):
        return "unparsed"
    return str(verdict)


def detector_flips(changes: list[EntryChange]) -> list[dict[str, Any]]:
    """Detector calls on the same item whose verdict differs."""
    rows = []
    for c in changes:
        if c.channel == "detector" and c.old is not None and c.new is not None and c.cls != "unchanged":
            before, after = _verdict(c.old), _verdict(c.new)
            if before != after:
                rows.append({"item": c.slot[1] if len(c.slot) > 1 else "", "before": before, "after": after})
    return rows


def _usage(entry: Entry) -> dict[str, Any]:
    usage = _doc(entry).get("usage")
    return usage if isinstance(usage, dict) else {}


def _totals(entries: list[Entry]) -> dict[str, Any]:
    out: dict[str, Any] = {"calls": len(entries), "prompt_tokens": 0, "completion_tokens": 0, "cost": None}
    for e in entries:
        usage = _usage(e)
        # Bounded like the providers read them: NaN or 10^30 in a recorded reply adds nothing.
        out["prompt_tokens"] += token_count(usage.get("prompt_tokens"), "prompt_tokens") or 0
        out["completion_tokens"] += token_count(usage.get("completion_tokens"), "completion_tokens") or 0
        reported = provider_cost_usd(usage)
        if reported is not None:
            out["cost"] = (out["cost"] or 0.0) + reported
    return out


def carried_over(entry: Entry, old_by_key: dict[str, Entry]) -> bool:
    """True when a refresh entry is the old recording served again (not re-recorded live)."""
    return is_carried_copy(entry, old_by_key.get(entry.key))


def cost(old: tuple[Entry, ...], new: tuple[Entry, ...]) -> dict[str, Any]:
    """Live calls, tokens and reported cost (``usage.cost``, xAI ticks) of the original vs the refresh."""
    old_by_key = {e.key: e for e in old}
    live_new = [e for e in new if not carried_over(e, old_by_key)]
    channels = sorted({e.channel for e in (*old, *new)})
    return {
        "original": {ch: _totals([e for e in old if e.channel == ch]) for ch in channels},
        "refresh": {ch: _totals([e for e in live_new if e.channel == ch]) for ch in channels},
        "carried_over": len(new) - len(live_new),
    }
