"""Classify every entry of two cassette generations, and attribute each change to its cause.

Pairing: the same key is the same request. Otherwise entries are paired by logical slot —
llm: (model, question, sample, step, occurrence); search: the query; detector: the audited
URL and cutoff (search and detector followed by the sample's call when keyed per call, under
request_sharing "none") — so a slot whose canonical request differs shows up as "request
changed", not as an unrelated removal plus addition.

Classes: ``unchanged`` (only masked fields differ), ``response_changed``, ``request_changed``,
``added``, ``removed``. Drift attribution per changed entry:

* a trajectory (model, question, sample) takes the cause of its first divergence, and every
  later turn inherits it — once a response changes, later requests necessarily differ;
* a first divergence is ``provider`` when the response changed, or when only the
  conversation history of the request differs while some search/detector response changed;
  it is ``harness`` when the non-history part of the request (prompt, tools, parameters)
  differs, or the history differs with no upstream response change, or turns were added or
  removed without an earlier change;
* search/detector entries: ``provider`` for a changed response, ``harness`` for a changed
  request, ``follow-on`` for an added/removed query (the model asked something else).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Literal

from oracleproto.refresh.mask import (
    harness_part,
    masked_differences,
    masked_request,
    masked_response,
    parse_body,
)
from oracleproto.transport.diff import json_diff
from oracleproto.transport.entry import Entry

EntryClass = Literal["unchanged", "response_changed", "request_changed", "added", "removed"]
Drift = Literal["none", "provider", "harness", "follow-on"]
CLASSES: tuple[EntryClass, ...] = ("unchanged", "response_changed", "request_changed", "added", "removed")
MARKER_FIELDS = ("system_fingerprint", "model", "service_tier")
_MAX_LINES = 12
_URL = re.compile(r"https?://[^\s\"'\\,]+")
_CUTOFF = re.compile(r"cutoff_date\W{1,8}(\d{4}-\d{2}-\d{2})")


@dataclass
class EntryChange:
    """One row of the audit: a paired (or lone) entry with its class and drift cause."""

    channel: str
    slot: tuple[Any, ...]
    cls: EntryClass
    old: Entry | None
    new: Entry | None
    request_diff: list[str] = field(default_factory=list)
    response_diff: list[str] = field(default_factory=list)
    masked: list[str] = field(default_factory=list)
    drift: Drift = "none"
    marker_only: bool = False

    @property
    def context(self) -> dict[str, Any] | None:
        """The sample context of the entry (new side preferred)."""
        entry = self.new or self.old
        return entry.context if entry is not None else None

    def to_json(self) -> dict[str, Any]:
        """The JSON form used in reports (keys shortened to 16 hex chars)."""
        return {
            "channel": self.channel,
            "class": self.cls,
            "drift": self.drift,
            "slot": list(self.slot),
            "old_key": self.old.key[:16] if self.old else None,
            "new_key": self.new.key[:16] if self.new else None,
            "marker_only": self.marker_only,
            "request_diff": self.request_diff[:_MAX_LINES],
            "response_diff": self.response_diff[:_MAX_LINES],
            "masked": self.masked,
        }


def slot_of(entry: Entry) -> tuple[Any, ...]:
    """The logical slot an entry fills (see module docstring); falls back to the key."""
    body, _ = parse_body(entry.request_body)
    if entry.channel == "llm" and entry.context is not None:
        c = entry.context
        return ("llm", c["model"], c["question_id"], c["sample"], c["step"], entry.occurrence or 0)
    # A search/detector entry keyed per call (request_sharing "none") belongs to one sample's call:
    # its slot carries that call, so identical requests of different samples never pair up.
    ctx = entry.context
    call: tuple[Any, ...] = ()
    if entry.occurrence is not None and ctx is not None:
        call = (ctx["model"], ctx["question_id"], ctx["sample"], ctx["step"], entry.occurrence)
    if entry.channel == "search" and isinstance(body, dict) and isinstance(body.get("query"), str):
        return ("search", body["query"], *call)
    if entry.channel == "detector":
        text = entry.request_body.replace("\\/", "/")
        found = _URL.search(text)
        if found:
            cutoff = _CUTOFF.search(text)
            return ("detector", found.group(0), cutoff.group(1) if cutoff else None, *call)
    return (entry.channel, entry.key)


def _compare(old: Entry, new: Entry) -> EntryChange:
    req_diff = json_diff(masked_request(old), masked_request(new))
    resp_old, resp_new = masked_response(old), masked_response(new)
    resp_diff = json_diff(resp_old, resp_new)
    cls: EntryClass = "request_changed" if req_diff else ("response_changed" if resp_diff else "unchanged")
    change = EntryChange(
        old.channel, slot_of(new), cls, old, new, req_diff, resp_diff, masked_differences(old, new)
    )
    if cls == "response_changed":
        change.marker_only = all(
            any(line.startswith(f"$.body.{m}:") for m in MARKER_FIELDS) for line in resp_diff
        )
    return change


def pair_entries(old: tuple[Entry, ...], new: tuple[Entry, ...]) -> list[EntryChange]:
    """Pair by key, then by slot; classify every pair and every lone entry."""
    old_by_key = {e.key: e for e in old}
    new_by_key = {e.key: e for e in new}
    changes = [_compare(old_by_key[k], new_by_key[k]) for k in sorted(old_by_key.keys() & new_by_key.keys())]
    lone_old: dict[tuple[Any, ...], list[Entry]] = defaultdict(list)
    lone_new: dict[tuple[Any, ...], list[Entry]] = defaultdict(list)
    for e in old:
        if e.key not in new_by_key:
            lone_old[slot_of(e)].append(e)
    for e in new:
        if e.key not in old_by_key:
            lone_new[slot_of(e)].append(e)
    for slot in sorted(lone_old.keys() | lone_new.keys(), key=repr):
        olds = sorted(lone_old.get(slot, []), key=lambda e: e.key)
        news = sorted(lone_new.get(slot, []), key=lambda e: e.key)
        for a in list(olds):
            if not news:
                break
            # Several lone entries in one slot (e.g. one query sent with two end dates): pair each
            # old entry with the new one whose request differs least.
            b = min(news, key=lambda n: (len(json_diff(masked_request(a), masked_request(n))), n.key))
            changes.append(_compare(a, b))
            olds.remove(a)
            news.remove(b)
        changes += [EntryChange(e.channel, slot, "removed", e, None) for e in olds]
        changes += [EntryChange(e.channel, slot, "added", None, e) for e in news]
    return sorted(changes, key=lambda c: (c.channel, repr(c.slot), c.cls))


def _root_cause(change: EntryChange, upstream_changed: bool) -> Drift:
    if change.cls == "response_changed":
        return "provider"
    if change.cls == "request_changed" and change.old is not None and change.new is not None:
        if json_diff(harness_part(masked_request(change.old)), harness_part(masked_request(change.new))):
            return "harness"
        return "provider" if upstream_changed else "harness"
    return "harness"


def attribute(changes: list[EntryChange]) -> None:
    """Set ``drift`` on every changed entry (in place)."""
    upstream_changed = any(c.channel != "llm" and c.cls == "response_changed" for c in changes)
    trajectories: dict[tuple[Any, ...], list[EntryChange]] = defaultdict(list)
    for c in changes:
        if c.channel != "llm":
            if c.cls == "response_changed":
                c.drift = "provider"
            elif c.cls == "request_changed":
                c.drift = "harness"
            elif c.cls in ("added", "removed"):
                c.drift = "follow-on"
        elif c.slot[0] == "llm" and len(c.slot) == 6:
            trajectories[c.slot[1:4]].append(c)
        elif c.cls != "unchanged":
            c.drift = "provider" if c.cls == "response_changed" else "harness"
    for turns in trajectories.values():
        cause: Drift = "none"
        for c in sorted(turns, key=lambda t: (t.slot[4], t.slot[5])):
            if c.cls == "unchanged":
                continue
            if cause == "none":
                cause = _root_cause(c, upstream_changed)
            c.drift = cause


def classify(old: tuple[Entry, ...], new: tuple[Entry, ...]) -> list[EntryChange]:
    """Pair, classify and attribute: the entry-level audit of two generations."""
    changes = pair_entries(old, new)
    attribute(changes)
    return changes
