"""The detector persona: a temporal auditor answering one JSON line ``{"verdict", "reason"}``.

It reads the six whitelisted fields from the prompt (a JSON object holding them, or
``field: value`` lines) and drops an item when ``published_date`` is after ``cutoff_date``
or the title/content/raw_content mention a date after the cutoff. It never looks at the
instructions around the item, so example dates in the harness's own wording do not count.
"""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Any

FIELDS = ("title", "url", "published_date", "content", "raw_content", "cutoff_date")
_BODY_FIELDS = ("title", "content", "raw_content")

_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        )
    )
}
_MONTH_RE = "|".join(_MONTHS)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MDY = re.compile(rf"\b({_MONTH_RE})\s+(\d{{1,2}}),?\s+(\d{{4}})\b", re.I)
_DMY = re.compile(rf"\b(\d{{1,2}})\s+({_MONTH_RE})\s+(\d{{4}})\b", re.I)
_CUTOFF_PROSE = re.compile(r"cut-?off[^\n]{0,60}?(\d{4}-\d{2}-\d{2})", re.I)
_LABEL = re.compile(rf"^\s*[-*]?\s*({'|'.join(FIELDS)})\s*[:=]\s?(.*)$", re.M)


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def mentioned_dates(text: str) -> list[date]:
    """Calendar dates written in ``text`` (ISO, ``March 5, 2026`` and ``5 March 2026``)."""
    found = [_safe_date(int(y), int(m), int(d)) for y, m, d in _ISO.findall(text)]
    found += [_safe_date(int(y), _MONTHS[m.lower()], int(d)) for m, d, y in _MDY.findall(text)]
    found += [_safe_date(int(y), _MONTHS[m.lower()], int(d)) for d, m, y in _DMY.findall(text)]
    return [d for d in found if d is not None]


def _from_json(text: str) -> dict[str, Any] | None:
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and ("cutoff_date" in value or {"title", "content"} <= value.keys()):
            return value
    return None


def _from_labels(text: str) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    matches = list(_LABEL.finditer(text))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        value = (match.group(2) + text[match.end() : end]).strip()
        fields.setdefault(match.group(1), value)
    return fields


def read_item(text: str) -> dict[str, Any]:
    """The whitelisted fields found in a detector prompt (missing ones absent)."""
    fields = _from_json(text) or {}
    if "cutoff_date" not in fields:
        labelled = _from_labels(text)
        fields = {**labelled, **fields}
    return {k: v for k, v in fields.items() if k in FIELDS}


def _first_date(value: Any) -> date | None:
    if not isinstance(value, str):
        return None
    dates = mentioned_dates(value)
    return dates[0] if dates else None


def verdict(text: str) -> tuple[str, str]:
    """``(verdict, reason)`` for the item described in ``text``; drop when in doubt."""
    item = read_item(text)
    cutoff = _first_date(item.get("cutoff_date"))
    if cutoff is None:
        # Templates may state the cutoff in prose ("… cutoff date is 2026-03-01 …").
        prose = _CUTOFF_PROSE.search(text)
        cutoff = _first_date(prose.group(1)) if prose else None
    if cutoff is None:
        return "drop", "no readable cutoff_date; dropping under doubt"
    published = _first_date(item.get("published_date"))
    if published is not None and published > cutoff:
        return "drop", f"published_date {published.isoformat()} is after the cutoff {cutoff.isoformat()}"
    body = "\n".join(str(item.get(f) or "") for f in _BODY_FIELDS)
    later = sorted(d for d in mentioned_dates(body) if d > cutoff)
    if later:
        return "drop", f"text mentions {later[-1].isoformat()}, after the cutoff {cutoff.isoformat()}"
    return "keep", f"no information dated after {cutoff.isoformat()}"


def reply(text: str) -> str:
    """The detector's reply: one JSON object on one line."""
    v, reason = verdict(text)
    return json.dumps({"verdict": v, "reason": reason})


def looks_like_detector_prompt(text: str) -> bool:
    """True when the prompt carries the detector's field whitelist (cutoff + published date)."""
    return "cutoff_date" in text and "published_date" in text and "raw_content" in text
