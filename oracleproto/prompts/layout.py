"""The protocol layout: which texts are appended, in which order, with which separator and suffix.

A layout is what ``PROTOCOLS_FILE`` holds (and what a run's ``config_snapshot`` keeps of it for
replay). ``layout_from_data`` validates the parsed file and lists every problem at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from oracleproto.errors import ConfigError
from oracleproto.primitives.hashing import canonical_json, sha256_16
from oracleproto.prompts.placeholders import line_of, placeholders_in, spelled, unknown_placeholders
from oracleproto.prompts.protocol_texts import (
    BLOCK_NAMES,
    BUILTIN_TEXTS,
    DEFAULT_SEPARATOR,
    DEFAULT_SUFFIX,
    PROTOCOL_PLACEHOLDERS,
    BlockName,
)

_TOP_KEYS = ("blocks", "separator", "suffix")
_BLOCK_KEYS = ("name", "text")
_ALLOWED = " and ".join(spelled(name) for name in PROTOCOL_PLACEHOLDERS)
_FIX = (
    "a protocols file holds 'blocks' (a list of {name, text} with name one of "
    f"{', '.join(BLOCK_NAMES)}), and optionally 'separator' and 'suffix' strings; "
    "see docs/examples/protocols-minimal.toml"
)


@dataclass(frozen=True)
class ProtocolBlock:
    """One appended protocol: its name and its unformatted text (placeholders not yet filled).

    A harness profile may frame a block itself (``separator`` before it instead of the layout's,
    ``terminator`` after it) and give the text used when the sample cannot search
    (``text_search_disabled``); a protocols file gives none of them.
    """

    name: BlockName
    text: str
    separator: str | None = None
    terminator: str | None = None
    text_search_disabled: str | None = None

    def framed(self, layout_separator: str, text: str) -> str:
        """``text`` with this block's framing (its separator, else the layout's, and terminator)."""
        separator = self.separator if self.separator is not None else layout_separator
        return separator + text + (self.terminator or "")


@dataclass(frozen=True)
class ProtocolLayout:
    """Blocks in append order; ``separator`` goes before each block, ``suffix`` after the last."""

    blocks: tuple[ProtocolBlock, ...]
    separator: str = DEFAULT_SEPARATOR
    suffix: str = DEFAULT_SUFFIX

    @property
    def names(self) -> tuple[BlockName, ...]:
        """The block names in append order."""
        return tuple(block.name for block in self.blocks)

    def text(self, name: str) -> str | None:
        """The unformatted text of block ``name``, None when the layout has no such block."""
        return next((block.text for block in self.blocks if block.name == name), None)

    @property
    def is_builtin(self) -> bool:
        """True for built-in texts in the built-in order with the default separator and suffix."""
        builtin = tuple(block for block in BUILTIN_LAYOUT.blocks if block.name in self.names)
        return (
            self.blocks == builtin and self.separator == DEFAULT_SEPARATOR and self.suffix == DEFAULT_SUFFIX
        )

    def to_data(self) -> dict[str, Any]:
        """The layout as plain data (the file's shape): what its fingerprint covers."""
        return {
            "blocks": [{"name": block.name, "text": block.text} for block in self.blocks],
            "separator": self.separator,
            "suffix": self.suffix,
        }

    def fingerprint(self) -> str:
        """sha256-16 of the canonical JSON of ``to_data()``: texts, order, separator and suffix."""
        return layout_data_fingerprint(self.to_data())


BUILTIN_LAYOUT = ProtocolLayout(tuple(ProtocolBlock(name, BUILTIN_TEXTS[name]) for name in BLOCK_NAMES))


def layout_data_fingerprint(data: dict[str, Any]) -> str:
    """The fingerprint of a layout's plain data (keys other than blocks/separator/suffix ignored)."""
    return sha256_16(canonical_json({key: data.get(key) for key in _TOP_KEYS}))


def layout_from_data(data: Any, *, source: str) -> ProtocolLayout:
    """Validate parsed protocols-file data; ConfigError naming ``source`` and every problem."""
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source}: the top level must be an object (JSON) or a table (TOML), "
            f"got {type(data).__name__}; {_FIX}"
        )
    problems: list[str] = []
    unknown = [str(key) for key in data if key not in _TOP_KEYS]
    if unknown:
        shown = ", ".join(repr(k) for k in unknown)
        problems.append(f"unknown key(s) {shown}; allowed: {', '.join(_TOP_KEYS)}")
    separator = _literal(data, "separator", DEFAULT_SEPARATOR, problems)
    suffix = _literal(data, "suffix", DEFAULT_SUFFIX, problems)
    blocks = _blocks(data, problems)
    if problems:
        listed = "\n".join(f"  - {problem}" for problem in problems)
        raise ConfigError(f"{source} is not a valid protocols file:\n{listed}\n{_FIX[0].upper()}{_FIX[1:]}")
    return ProtocolLayout(tuple(blocks), separator, suffix)


def _literal(data: dict[str, Any], key: str, default: str, problems: list[str]) -> str:
    """``separator`` / ``suffix``: a string taken as is (placeholders are for block texts only)."""
    value = data.get(key, default)
    if not isinstance(value, str):
        problems.append(f"'{key}' must be a string, got {type(value).__name__}")
        return default
    tokens = placeholders_in(value)
    if tokens:
        shown = ", ".join(dict.fromkeys(tokens))
        problems.append(f"'{key}' holds {shown}; placeholders are replaced only in block texts, so remove it")
    return value


def _blocks(data: dict[str, Any], problems: list[str]) -> list[ProtocolBlock]:
    if "blocks" not in data:
        problems.append("no 'blocks' list; add one {name, text} entry per protocol to append")
        return []
    raw = data["blocks"]
    if not isinstance(raw, list):
        problems.append(f"'blocks' must be a list, got {type(raw).__name__}")
        return []
    blocks: list[ProtocolBlock] = []
    seen: dict[str, int] = {}
    for number, item in enumerate(raw, start=1):
        block = _block(number, item, seen, problems)
        if block is not None:
            blocks.append(block)
    return blocks


def _block(number: int, item: Any, seen: dict[str, int], problems: list[str]) -> ProtocolBlock | None:
    where = f"block #{number}"
    if not isinstance(item, dict):
        problems.append(f"{where} must be an object with 'name' and 'text', got {type(item).__name__}")
        return None
    name = item.get("name")
    unknown = [str(key) for key in item if key not in _BLOCK_KEYS]
    if unknown:
        label = f"{where} ({name})" if name in BLOCK_NAMES else where
        problems.append(f"{label}: unknown key(s) {', '.join(repr(k) for k in unknown)}; allowed: name, text")
    if name is None:
        problems.append(f"{where} has no 'name'; use one of {', '.join(BLOCK_NAMES)}")
        return None
    if name not in BLOCK_NAMES:
        problems.append(f"{where}: unknown block name {name!r}; use one of {', '.join(BLOCK_NAMES)}")
        return None
    where = f"{where} ({name})"
    if name in seen:
        problems.append(f"{where}: duplicate block, already block #{seen[name]}; list each block once")
        return None
    seen[name] = number
    text = item.get("text")
    if text is None:
        problems.append(f"{where} has no 'text'; write the text, or leave the block out to switch it off")
        return None
    if not isinstance(text, str):
        problems.append(f"{where}: 'text' must be a string, got {type(text).__name__}")
        return None
    if not text.strip():
        problems.append(f"{where}: 'text' is empty; write the text, or leave the block out to switch it off")
        return None
    for token in unknown_placeholders(text, PROTOCOL_PLACEHOLDERS):
        problems.append(
            f"{where}: unknown placeholder {token} (line {line_of(text, token)} of its text); the only "
            f"placeholders are {_ALLOWED}; fix the name, or write single braces to keep it as text"
        )
    return ProtocolBlock(cast(BlockName, name), text)
