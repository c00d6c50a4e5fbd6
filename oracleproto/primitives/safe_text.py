"""Strangers' text made writable: JSON and plain text that UTF-8 files, JSON lines and SQLite accept.

Search results, model outputs and question texts may hold any code point, including two kinds
that break writers and readers which otherwise look correct:

- a lone surrogate (U+D800..U+DFFF, which a JSON ``\\ud800`` escape yields): UTF-8 cannot encode
  it, so ``json.dumps(…, ensure_ascii=False)`` followed by a UTF-8 write, or a SQLite bind, raises;
- U+2028, U+2029 and U+0085: ``json.dumps(…, ensure_ascii=False)`` writes them raw, and readers
  that split lines with ``str.splitlines()`` (or JavaScript's JSON-in-script) break a record there.

:func:`escape_json` writes those characters of a JSON text as ``\\uXXXX`` escapes — the same JSON
value, now one line under any line splitter and encodable as UTF-8 — and leaves every other
character as it is, so files without them keep their bytes. Plain (non-JSON) text has no escape
syntax: :func:`storable` replaces a lone surrogate with U+FFFD, as a UTF-8 decoder does with bytes
it cannot read, and keeps everything else.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Characters a JSON text must not carry raw: lone surrogates and the line breaks beyond ``\n``
#: that ``json.dumps`` leaves unescaped (C0 controls it always escapes).
_JSON_UNSAFE = re.compile("[\x85\u2028\u2029\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def escape_json(text: str) -> str:
    """``text`` (JSON written with ``ensure_ascii=False``) with the unsafe characters escaped.

    Sound because JSON's own syntax is ASCII: such a character can only sit inside a string,
    where its ``\\uXXXX`` escape denotes the same character — except a high surrogate directly
    followed by a low one, whose two escapes every JSON reader (Python's too) joins into the one
    character they encode, exactly as it reads ``json.dumps``'s own ASCII output.
    """
    return _JSON_UNSAFE.sub(_escape, text)


def escape_surrogates(text: str) -> str:
    """JSON ``text`` with only its lone surrogates escaped (what a UTF-8 store needs; lines untouched)."""
    return _SURROGATE.sub(_escape, text)


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **kwargs)`` made safe by :func:`escape_json`."""
    return escape_json(json.dumps(value, ensure_ascii=False, **kwargs))


def has_surrogate(text: str) -> bool:
    """True when ``text`` holds a lone surrogate (UTF-8 cannot encode it)."""
    return _SURROGATE.search(text) is not None


def storable(text: str) -> str:
    """Plain text UTF-8 can encode: each lone surrogate replaced by U+FFFD, nothing else changed."""
    return _SURROGATE.sub("\ufffd", text)
