"""The attempt histories of a run's cassettes, read without parsing the YAML.

Only each interaction's ``oracleproto:`` block is looked at (it comes first: the files are written
with sorted keys) and read with one compiled pattern; the request and response bodies — nearly all
of a cassette's bytes — are only skipped over. ``scan_text`` finds the blocks in a whole text with
``str.find``; ``scan`` reads a file line by line and holds one block at a time. Tested equal to a
full YAML parse of the demo's cassettes, and to each other (``tests/analysis/test_cassette_scan.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_INTERACTION = "- oracleproto:"
_NEXT_INTERACTION = "\n" + _INTERACTION
#: The block ends at the first line not indented by four spaces (``  request:`` after sorted keys).
_BLOCK_END = re.compile(r"\n(?!    )")
#: One alternative per line kind the scan reads; ``other`` is any further key of the block.
_LINE = re.compile(
    r"^(?:"
    r"    - attempt: (?P<attempt>\d+)$"
    r"|      (?P<field>exception|latency_ms|recorded_at|status): (?P<value>.*)$"
    r"|    (?P<meta>channel|key|generation): (?P<meta_value>.*)$"
    r"|(?P<context>    context:)$"
    r"|      model: (?P<model>.*)$"
    r"|    (?P<other>[^ ])"
    r")",
    re.MULTILINE,
)


@dataclass
class Call:
    """One recorded logical call as the scanner reads it."""

    channel: str = ""
    key: str = ""
    generation: int = 0
    model: str | None = None
    attempts: list[dict[str, Any]] = field(default_factory=list)


_SCALAR_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
#: Plain scalars without indicators, spaces or comments: what they mean is up to the resolver alone.
_PLAIN_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./:+\-]*")
_RESOLVER: Any = yaml.resolver.Resolver()
_STR_TAG = "tag:yaml.org,2002:str"


def scalar(text: str) -> Any:
    """A YAML scalar of the cassette (``null``, a number, a quoted string)."""
    # Tens of thousands per run: the common forms directly, the rest through libyaml (the
    # pure-Python safe_load was a fifth of a 6×80×3 replay, libyaml per scalar still a tenth of a
    # report). A one-line single-quoted scalar without an inner quote (every ``recorded_at``) is its
    # text: '' is that style's only escape.
    if text == "null":
        return None
    if _INT.fullmatch(text):
        return int(text)
    if len(text) >= 2 and text[0] == "'" and text[-1] == "'" and "'" not in text[1:-1]:
        return text[1:-1]
    # Channels, keys and model slugs: a plain word the loader's own resolver calls a string is one
    # (a word that ends in ':' is a syntax error there, so it is left to libyaml).
    if (
        _PLAIN_WORD.fullmatch(text)
        and not text.endswith(":")
        and _RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) == _STR_TAG
    ):
        return text
    return yaml.load(text, Loader=_SCALAR_LOADER)


def _block(text: str, start: int, end: int) -> Call:
    """The call of one ``oracleproto:`` block (``text[start:end]``, its lines after the header)."""
    call = Call()
    attempts = call.attempts
    in_context = False
    for match in _LINE.finditer(text, start, end):
        kind = match.lastgroup
        if kind == "attempt":
            attempts.append({"attempt": int(match["attempt"])})
            in_context = False
        elif kind == "value":
            if attempts:
                attempts[-1][match["field"]] = scalar(match["value"])
        elif kind == "meta_value":
            setattr(call, match["meta"], scalar(match["meta_value"]))
            in_context = False
        elif kind == "context":
            in_context = True
        elif kind == "model":
            if in_context:
                call.model = str(scalar(match["model"]))
                in_context = False
        else:
            in_context = False
    return call


def scan_text(text: str) -> Iterator[Call]:
    """The logical calls of one cassette file's text, with their attempt histories."""
    at = 0 if text.startswith(_INTERACTION) else text.find(_NEXT_INTERACTION)
    while at != -1:
        header_end = text.find("\n", at + 1)
        if header_end == -1:
            yield Call()
            return
        start = header_end + 1
        found = _BLOCK_END.search(text, header_end)
        end = len(text) if found is None else found.start()
        yield _block(text, start, end)
        at = text.find(_NEXT_INTERACTION, end)


def scan(path: Path) -> Iterator[Call]:
    """The logical calls of one cassette file (universal newlines, as a text-mode read gives)."""
    # Line by line (issue 18): only one ``oracleproto:`` block is held at a time, never the file (a
    # model's cassette is tens of MiB, and a whole-file string, or large pieces of one, grew the
    # heap by their size in a replay). The same calls as ``scan_text`` of the whole text, which
    # tests/analysis/test_cassette_scan.py checks: a block is the lines after the header indented
    # by four spaces, up to the first other line; the next interaction is the next line that
    # starts with ``- oracleproto:``.
    with path.open(encoding="utf-8") as handle:
        lines = iter(handle)
        header = next((line for line in lines if line.startswith(_INTERACTION)), None)
        while header is not None:
            if not header.endswith("\n"):
                yield Call()  # the header is the file's last line: as scan_text, the scan ends
                return
            block: list[str] = []
            after: str | None = None
            for line in lines:
                if not line.startswith("    "):
                    after = line
                    break
                block.append(line)
            text = "".join(block)
            yield _block(text, 0, len(text) - 1 if text.endswith("\n") else len(text))
            if after is None or after.startswith(_INTERACTION):
                header = after
            else:
                header = next((line for line in lines if line.startswith(_INTERACTION)), None)
