"""A fast writer for cassette YAML, byte-identical to the ``yaml.dump`` call in :mod:`fileio`.

``fileio.dump_entries`` used to run ``yaml.dump(doc, Dumper=CSafeDumper, sort_keys=True,
allow_unicode=True, width=100)``; PyYAML's Python representer and libyaml's emitter cost about
2 ms per 50 KB entry, most of a recording's end-of-session fold and of ``verify``'s canonical
re-serialisation. Cassettes hold only nested dicts with string keys, lists, str, int, float,
bool and None, so this module emits that layout directly and reproduces libyaml 0.2.5's choice
of scalar style (plain / single-quoted / double-quoted, after PyYAML's implicit resolver) and
its line folding at width 100, whole runs of text at a time instead of one character at a time.

Anything it has not been shown to match (bytes values, other types, keys that are long or
multi-line, the Unicode line separators U+2028/U+2029) raises :class:`UnsupportedError`; the caller
then dumps that one interaction with ``yaml.dump``. An interaction's text as a list item at
column 0 does not depend on its neighbours, so per-entry fallback fragments concatenate to the
same bytes (tests/transport/test_yaml_writer.py checks every one of these claims against yaml.dump).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from yaml.resolver import Resolver

#: libyaml's ``best_width`` for ``width=100``.
_WIDTH = 100
#: Longest simple key libyaml writes as ``key:`` (bytes); longer keys use the ``? key`` form.
_MAX_SIMPLE_KEY = 128
_STR_TAG = "tag:yaml.org,2002:str"
_FLOAT_TAG = "tag:yaml.org,2002:float"

# libyaml's IS_PRINTABLE (0.2.5): LF, 0x20-0x7E, 0xA0-0xD7FF, 0xE000-0xFFFD except the BOM.
# Everything else (tab, CR, DEL, C1 controls, the BOM, every non-BMP character) is "special".
_SPECIAL = re.compile(r"[^\n\x20-\x7e\u00a0-\ud7ff\ue000-\ufefe\uff00-\ufffd]")
# Characters libyaml escapes in a double-quoted scalar (with allow_unicode): the specials plus
# the line feed, the quote and the backslash.
_DQ_ESCAPE = re.compile(r"[^\x20\x21\x23-\x5b\x5d-\x7e\u00a0-\ud7ff\ue000-\ufefe\uff00-\ufffd]")
_NAMED_ESCAPES = {
    0x00: "0", 0x07: "a", 0x08: "b", 0x09: "t", 0x0A: "n", 0x0B: "v", 0x0C: "f", 0x0D: "r",
    0x1B: "e", 0x22: '"', 0x5C: "\\", 0x85: "N", 0x2028: "L", 0x2029: "P",
}  # fmt: skip
# A first character that is an indicator keeps a scalar out of plain style.
_FIRST_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")
# Where libyaml may fold: a space not preceded by a space (not at the start). Single-quoted and
# plain scalars also need a non-space after it; a double-quoted one escapes that next space.
_FOLD_SQ = re.compile(r"(?<=[^ ]) (?=[^ ])")
_FOLD_DQ = re.compile(r"(?<=[^ ]) ")
_NEWLINES = re.compile(r"(\n+)")
#: Rendered keys and short values, reused (bounded: cleared never, just not grown past the cap).
_SHORT_MAX = 50_000
_SHORT: dict[str, str] = {}
_KEYS: dict[str, str] = {}
_ASCII_PRINTABLE = bytes([0x0A, *range(0x20, 0x7F)])
#: ASCII a double-quoted scalar writes as is or with a named escape (TAB, LF, CR, quote, backslash).
_NAMED_ONLY = _ASCII_PRINTABLE + b"\t\r"
_LINE_PATTERNS: dict[int, re.Pattern[str]] = {}
_IMPLICIT: dict[Any, list[tuple[str, re.Pattern[str]]]] = Resolver.yaml_implicit_resolvers


class UnsupportedError(Exception):
    """A value this writer does not reproduce exactly; dump it with ``yaml.dump`` instead."""


def _resolves_to_str(value: str) -> bool:
    # PyYAML's implicit resolver (what the serializer asks before letting libyaml write plain).
    for tag, regexp in [*_IMPLICIT.get(value[0] if value else "", ()), *_IMPLICIT.get(None, ())]:
        if regexp.match(value):
            return bool(tag == _STR_TAG)
    return True


def _dq_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    named = _NAMED_ESCAPES.get(code)
    if named is not None:
        return "\\" + named
    if code <= 0xFF:
        return f"\\x{code:02X}"
    if code <= 0xFFFF:
        return f"\\u{code:04X}"
    return f"\\U{code:08X}"


def _line_pattern(k: int) -> re.Pattern[str]:
    """One folded line: ``k`` characters, then up to the first fold candidate (dropped) or the end.

    The candidate is a single space between two non-spaces; the repeated group consumes every
    other run (runs of 2+ spaces, a trailing space, the rest of a run the first ``k`` characters
    ended in) with the words between them. Possessive quantifiers: matching never backtracks,
    and ``findall`` cuts a whole body into lines in C, a few times faster than a loop of
    ``str.find`` (a candidate is dropped by the trailing `` ?``). The alternative is a last short line.
    """
    pattern = _LINE_PATTERNS.get(k)
    if pattern is None:
        pattern = re.compile(
            rf"(.{{{k}}}[^ ]*+(?:(?: {{2,}}+| \Z|(?<= ) ++)[^ ]*+)*+(?= [^ ]|\Z)|.+) ?", re.DOTALL
        )
        _LINE_PATTERNS[k] = pattern
    return pattern


def _fold(
    text: str, col: int, indent: int, candidates: re.Pattern[str], escape_next_space: bool
) -> tuple[str, int]:
    """``text`` (no line breaks) written from column ``col``, folded like libyaml; and the end column."""
    n = len(text)
    pad = "\n" + " " * indent
    out: list[str] = []
    start = 0
    # After the first fold every line starts at ``indent``, so one regex pass cuts the rest into
    # lines; not when a fold may have to escape a following space (double-quoted "  ").
    k = _WIDTH + 1 - indent
    bulk = k > 0 and not (escape_next_space and "  " in text)
    while True:
        if bulk and start:
            lines = _line_pattern(k).findall(text, start)
            out.append(pad.join(lines))
            return "".join(out), indent + len(lines[-1])
        # libyaml folds at the first candidate space found while the column is past the width.
        first = start + (_WIDTH + 1 - col)
        if first >= n:
            break
        match = candidates.search(text, max(first, start))
        if match is None:
            break
        at = match.start()
        if escape_next_space and at == n - 1:
            break  # never at the last character
        out.append(text[start:at])
        if escape_next_space and text[at + 1 : at + 2] == " ":
            out.append(pad + "\\")
            col = indent + 1
        else:
            out.append(pad)
            col = indent
        start = at + 1
    out.append(text[start:])
    return "".join(out), col + (n - start)


def _single_quoted(value: str, col: int, indent: int) -> str:
    """``'value'`` written after a space at column ``col``, folded at spaces and line breaks."""
    # ``in`` runs at memchr speed; a ``replace`` walks the whole body even when there is no quote.
    text = value.replace("'", "''") if "'" in value else value
    if "\n" not in text:
        body, _ = _fold(text, col + 2, indent, _FOLD_SQ, False)
        return " '" + body + "'"
    out = [" '"]
    col += 2
    breaks = False
    for part in _NEWLINES.split(text):
        if not part:
            continue
        if part[0] == "\n":
            # libyaml writes one extra line break before a run of breaks, then re-indents.
            out.append("\n" * (len(part) + 1))
            breaks = True
            continue
        if breaks:
            out.append(" " * indent)
            col = indent
            breaks = False
        body, col = _fold(part, col, indent, _FOLD_SQ, False)
        out.append(body)
    if breaks:
        out.append(" " * indent)
    out.append("'")
    return "".join(out)


def _escaped(value: str) -> str:
    """``value`` as libyaml escapes it inside double quotes."""
    if value.isascii() and not value.encode("ascii").translate(None, _NAMED_ONLY):
        # Only named escapes are needed (no control character but LF, TAB, CR; no DEL): a few
        # C-speed replaces instead of a Python call per escaped character (pretty-printed JSON
        # bodies escape every line break).
        return (
            value.replace("\\", "\\\\")
            .replace('"', '\\"')
            .replace("\n", "\\n")
            .replace("\t", "\\t")
            .replace("\r", "\\r")
        )
    return _DQ_ESCAPE.sub(_dq_escape, value)


def _double_quoted(value: str, col: int, indent: int) -> str:
    text = _escaped(value)
    body, _ = _fold(text, col + 2, indent, _FOLD_DQ, True)
    return ' "' + body + '"'


def _plain_allowed(value: str) -> bool:
    """libyaml's block_plain_allowed for a value with no special characters and no line breaks."""
    if value[0] == " " or value[-1] == " " or value[0] in _FIRST_INDICATORS:
        return False
    if value[:3] in ("---", "..."):
        return False
    if value[0] in "?:-" and (len(value) == 1 or value[1] == " "):
        return False
    if value[-1] == ":":
        return False
    return not ((":" in value and ": " in value) or ("#" in value and " #" in value))


def _string(value: str, col: int, indent: int) -> str:
    """A string value written after ``key:`` or ``-`` ending at column ``col``."""
    # Short values repeat (channels, methods, header values): their text does not depend on the
    # column as long as the line cannot reach the width, so it is kept and reused.
    known = _SHORT.get(value) if len(value) < _WIDTH else None  # (a long value is never kept)
    if known is not None and col + len(known) <= _WIDTH:
        return known
    text = _string_text(value, col, indent)
    if col + len(text) <= _WIDTH and "\n" not in text and len(_SHORT) < _SHORT_MAX:
        _SHORT[value] = text
    return text


def _string_text(value: str, col: int, indent: int) -> str:
    if not value:
        return " ''"
    if value.isascii():
        # Deleting every printable ASCII byte (and LF) leaves only libyaml's specials.
        special = bool(value.encode("ascii").translate(None, _ASCII_PRINTABLE))
    else:
        if "\u2028" in value or "\u2029" in value:
            raise UnsupportedError("Unicode line or paragraph separator")
        special = _SPECIAL.search(value) is not None
    # One-character searches first: they run at memory speed, two-character ones far slower.
    newline = "\n" in value
    if special or (newline and ("\n " in value or " \n" in value)):
        return _double_quoted(value, col, indent)
    if newline or not _plain_allowed(value) or not _resolves_to_str(value):
        return _single_quoted(value, col, indent)
    body, _ = _fold(value, col + 1, indent, _FOLD_SQ, False)
    return " " + body


def _key(key: Any) -> str:
    """A mapping key written at the start of its line (a simple key: never folded)."""
    known = _KEYS.get(key) if type(key) is str else None
    if known is not None:
        return known
    text = _key_text(key)
    if len(_KEYS) < _SHORT_MAX:
        _KEYS[key] = text
    return text


def _key_text(key: Any) -> str:
    if type(key) is not str or "\n" in key or len(key.encode("utf-8", "surrogatepass")) > _MAX_SIMPLE_KEY:
        raise UnsupportedError("key")
    if not key:
        return "''"
    if "\u2028" in key or "\u2029" in key:
        raise UnsupportedError("Unicode line or paragraph separator")
    # No folding in a simple key, so the column does not matter (0 keeps _fold from breaking).
    if _SPECIAL.search(key) is not None:
        raise UnsupportedError("key needing double quotes")  # libyaml escapes these differently in keys
    if not _plain_allowed(key) or not _resolves_to_str(key):
        return _single_quoted(key, -(10**9), 0)[1:]
    return key


def _float(value: float) -> str:
    # SafeRepresenter.represent_float.
    if math.isnan(value):
        text = ".nan"
    elif value == float("inf"):
        text = ".inf"
    elif value == float("-inf"):
        text = "-.inf"
    else:
        text = repr(value).lower()
        if "." not in text and "e" in text:
            text = text.replace("e", ".0e", 1)
        for tag, regexp in _IMPLICIT.get(text[0], ()):
            if regexp.match(text):
                if tag != _FLOAT_TAG:
                    raise UnsupportedError("float")
                break
        else:
            raise UnsupportedError("float needing a tag")
    return " " + text


def _scalar(value: Any, col: int, indent: int) -> str | None:
    """A scalar written after ``key:``/``-`` (column ``col``); None for a collection."""
    kind = type(value)
    if kind is str:
        return _string(value, col, indent)
    if value is None:
        return " null"
    if kind is bool:
        return " true" if value else " false"
    if kind is int:
        return " " + str(value)
    if kind is float:
        return _float(value)
    if kind is dict or kind is list:
        return None
    raise UnsupportedError(kind.__name__)


def _mapping(out: list[str], data: dict[Any, Any], indent: int, inline: bool) -> None:
    pad = "\n" + " " * indent
    for i, key in enumerate(sorted(data)):
        if i or not inline:
            out.append(pad)
        name = _key(key)
        out.append(name)
        out.append(":")
        value = data[key]
        text = _scalar(value, indent + len(name) + 1, indent + 2)
        if text is not None:
            out.append(text)
        elif not value:
            out.append(" {}" if type(value) is dict else " []")
        elif type(value) is dict:
            _mapping(out, value, indent + 2, False)
        else:
            _sequence(out, value, indent, False)  # a list under a key is not indented


def _sequence(out: list[str], data: list[Any], indent: int, inline: bool) -> None:
    pad = "\n" + " " * indent
    for i, item in enumerate(data):
        if i or not inline:
            out.append(pad)
        text = _scalar(item, indent + 1, indent + 2)
        if text is not None:
            out.append("-" + text)
        elif not item:
            out.append("- {}" if type(item) is dict else "- []")
        elif type(item) is dict:
            out.append("- ")
            _mapping(out, item, indent + 2, True)
        else:
            out.append("- ")
            _sequence(out, item, indent + 2, True)


def item_fragment(interaction: dict[str, Any]) -> str:
    """The YAML of one interaction as a list item at column 0 (``- ...`` lines, newline-terminated)."""
    if type(interaction) is not dict or not interaction:
        raise UnsupportedError("interaction")
    out: list[str] = ["- "]
    _mapping(out, interaction, 2, True)
    out.append("\n")
    return "".join(out)


def fragment_or_dump(interaction: dict[str, Any], dump: Callable[[list[Any]], str]) -> str:
    """:func:`item_fragment`, else ``dump([interaction])`` (the same text, made by yaml.dump)."""
    try:
        return item_fragment(interaction)
    except UnsupportedError:
        return dump([interaction])
    except RecursionError:
        return dump([interaction])


def document(fragments: list[str], version: int) -> str:
    """The cassette document around already-sorted interaction fragments."""
    if not fragments:
        return f"interactions: []\nversion: {version}\n"
    return "interactions:\n" + "".join(fragments) + f"version: {version}\n"
