"""JSON-path diffs between canonical requests, and the nearest recorded request on a miss."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from oracleproto.transport.entry import Entry

_MAX_SHOWN = 80


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"


def json_diff(old: Any, new: Any, path: str = "$") -> list[str]:
    """Differences as ``$.a.b[2]: old → new`` lines (``<absent>`` for missing members)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for key in sorted(set(old) | set(new)):
            sub = f"{path}.{key}"
            if key not in old:
                out.append(f"{sub}: <absent> → {_short(new[key])}")
            elif key not in new:
                out.append(f"{sub}: {_short(old[key])} → <absent>")
            else:
                out.extend(json_diff(old[key], new[key], sub))
        return out
    if isinstance(old, list) and isinstance(new, list):
        out = []
        for i in range(max(len(old), len(new))):
            sub = f"{path}[{i}]"
            if i >= len(old):
                out.append(f"{sub}: <absent> → {_short(new[i])}")
            elif i >= len(new):
                out.append(f"{sub}: {_short(old[i])} → <absent>")
            else:
                out.extend(json_diff(old[i], new[i], sub))
        return out
    if old == new and type(old) is type(new):
        return []
    return [f"{path}: {_short(old)} → {_short(new)}"]


def stored_request(entry: Entry) -> dict[str, Any]:
    """The full canonical request of an entry (meta plus parsed body)."""
    return {**entry.request_meta, "body": json.loads(entry.request_body)}


def nearest(live: dict[str, Any], candidates: Iterable[Entry]) -> tuple[Entry, list[str]] | None:
    """The candidate whose canonical request differs least from ``live``, with the diff."""
    best: tuple[Entry, list[str]] | None = None
    for entry in candidates:
        diff = json_diff(stored_request(entry), live)
        if best is None or len(diff) < len(best[1]):
            best = (entry, diff)
    return best


def _outcome(entry: Entry) -> dict[str, Any]:
    try:
        body: Any = json.loads(entry.body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        body = entry.body.decode("utf-8", "replace")
    return {"status": entry.status, "exception": entry.exception, "body": body}


def generation_diff(old: Iterable[Entry], new: Iterable[Entry]) -> dict[str, list[str]]:
    """Per key present in both generations, the JSON-path diff of the outcomes (changed keys only)."""
    before = {e.key: e for e in old}
    changes: dict[str, list[str]] = {}
    for entry in sorted(new, key=lambda e: e.key):
        previous = before.get(entry.key)
        if previous is not None:
            diff = json_diff(_outcome(previous), _outcome(entry))
            if diff:
                changes[entry.key] = diff
    return changes
