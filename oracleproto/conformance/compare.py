"""Compare one request body of ours with the captured one, and say where they first differ.

Credentials are masked on both sides first (``mask.py``); then the bytes decide. When they differ,
the report names the first difference a reader can act on, walking both parsed values in order:
object key order is part of the wire format (``messages[3]: keys [content, role] vs [role,
content]``), lists differ by index or length, strings at their first differing character (with
context). When the parsed values are equal, the difference is serialisation (separators,
``\\u00e9`` vs ``é``, number spelling), shown at the first differing byte. Bodies that are not
JSON compare as bytes. Everything shown is made safe for a terminal (``text.py``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Literal

from oracleproto.conformance.mask import mask_api_key
from oracleproto.conformance.text import clip, safe_bytes, safe_text

#: Characters (or bytes) of context shown on each side of a difference.
CONTEXT = 40
_MISSING = object()


class _Object(tuple[tuple[str, Any], ...]):
    """A JSON object as its members in order (duplicates kept: they are on the wire)."""


@dataclass(frozen=True)
class Difference:
    """The first difference between two bodies: where (JSON path or byte offset) and what."""

    kind: Literal["json", "serialisation", "bytes"]
    path: str
    detail: str
    offset: int | None = None

    def summary(self) -> str:
        where = self.path or "(body)"
        return f"{where}: {self.detail}"


def masked(body: bytes) -> bytes:
    """The body as compared: top-level ``api_key`` values masked."""
    return mask_api_key(body)


def compare_bodies(ours: bytes, captured: bytes) -> Difference | None:
    """None when the masked bodies are byte-identical, else their first difference."""
    ours, captured = masked(ours), masked(captured)
    if ours == captured:
        return None
    left, right = _parse(ours), _parse(captured)
    if left is _MISSING or right is _MISSING:
        return _byte_difference("bytes", ours, captured)
    found = _walk(left, right, "")
    return found if found is not None else _byte_difference("serialisation", ours, captured)


def _parse(body: bytes) -> Any:
    try:
        return json.loads(body, object_pairs_hook=_Object)
    except (ValueError, RecursionError):
        return _MISSING


def _type(value: Any) -> str:
    if isinstance(value, _Object):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"


def _child(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.isidentifier() and key.isprintable():
        return f"{path}.{clip(key, 60)}" if path else clip(key, 60)
    return f"{path}[{safe_text(clip(json.dumps(key, ensure_ascii=False), 60))}]"


def _scalar(value: Any) -> str:
    return safe_text(clip(json.dumps(value, ensure_ascii=False), 60))


def _walk(left: Any, right: Any, path: str) -> Difference | None:
    kind = _type(left)
    if kind != _type(right):
        return Difference(
            "json", path, f"{kind} {_scalar_or_kind(left)} vs {_type(right)} {_scalar_or_kind(right)}"
        )
    if kind == "object":
        return _walk_object(left, right, path)
    if kind == "array":
        for index, (a, b) in enumerate(zip(left, right, strict=False)):
            found = _walk(a, b, _child(path, index))
            if found is not None:
                return found
        if len(left) != len(right):
            return Difference("json", path, f"length {len(left)} vs {len(right)}")
        return None
    if kind == "string":
        return None if left == right else _string_difference(left, right, path)
    if kind == "number" and (left == right or (_nan(left) and _nan(right))):
        return None  # 1 vs 1.0 parse equal: the serialisation pass shows the spelling
    if left == right:
        return None
    return Difference("json", path, f"{_scalar(left)} vs {_scalar(right)}")


def _scalar_or_kind(value: Any) -> str:
    if isinstance(value, _Object | list):
        return f"of {len(value)}"
    return _scalar(value)


def _nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _walk_object(left: _Object, right: _Object, path: str) -> Difference | None:
    for (key_a, a), (key_b, b) in zip(left, right, strict=False):
        if key_a != key_b:
            return Difference("json", path, f"keys {_keys(left)} vs {_keys(right)}")
        found = _walk(a, b, _child(path, key_a))
        if found is not None:
            return found
    if len(left) != len(right):
        return Difference("json", path, f"keys {_keys(left)} vs {_keys(right)}")
    return None


def _keys(obj: _Object) -> str:
    names = [k for k, _ in obj]
    shown = ", ".join(safe_text(clip(k, 30)) for k in names[:12])
    return f"[{shown}{', …' if len(names) > 12 else ''}]"


def _common_prefix(left: str | bytes, right: str | bytes) -> int:
    """Length of the common prefix, by bisection on slice equality (memcmp speed on 100 KB bodies)."""
    low, high = 0, min(len(left), len(right))
    while low < high:
        middle = (low + high + 1) // 2
        if left[low:middle] == right[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _string_difference(left: str, right: str, path: str) -> Difference:
    index = _common_prefix(left, right)
    detail = (
        f"at character {index}: {_window(left, index)} vs {_window(right, index)}"
        f" (lengths {len(left)} vs {len(right)})"
    )
    return Difference("json", path, detail, offset=index)


def _window(text: str, index: int) -> str:
    start = max(0, index - CONTEXT)
    end = index + CONTEXT
    head = "…" if start > 0 else ""
    tail = "…" if end < len(text) else ""
    return f'"{head}{safe_text(text[start:end])}{tail}"'


def _byte_difference(kind: Literal["serialisation", "bytes"], ours: bytes, captured: bytes) -> Difference:
    index = _common_prefix(ours, captured)
    detail = (
        f"at byte {index}: {_byte_window(ours, index)} vs {_byte_window(captured, index)}"
        f" (sizes {len(ours)} vs {len(captured)})"
    )
    return Difference(kind, "", detail, offset=index)


def _byte_window(data: bytes, index: int) -> str:
    start, end = max(0, index - CONTEXT), min(len(data), index + CONTEXT)
    # Widen to whole UTF-8 characters: a cut sequence would show as invalid bytes that are not.
    for _ in range(3):
        if start > 0 and 0x80 <= data[start] < 0xC0:
            start -= 1
        if end < len(data) and 0x80 <= data[end] < 0xC0:
            end += 1
    head = "…" if start > 0 else ""
    tail = "…" if end < len(data) else ""
    return f'"{head}{safe_bytes(data[start:end])}{tail}"'
