"""Loading cassette YAML from strangers: no anchors or aliases, bounded nesting, capped sizes.

Cassettes are published and replayed by reviewers, so a cassette is untrusted input. Plain
``yaml.load`` with libyaml's composer has two ways to exhaust a machine from a small file:
aliases (a "billion laughs" document is a few hundred bytes and expands to gigabytes once
anything walks it) and deep nesting (libyaml's C composer recurses once per level and
overflows the C stack — a segfault, not an exception — somewhere past 20,000 levels).

The loader below keeps libyaml's C scanner and parser and replaces only the composer with an
iterative one that refuses alias and anchor events and caps the depth; the SafeConstructor
builds the Python objects as before. Our dumper never writes anchors, so every cassette we
write loads unchanged (``make bench`` compares its speed with the plain C loader).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml
from yaml import events
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

try:
    from yaml._yaml import CParser as _Parser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml.parser import Parser as _Parser  # type: ignore[assignment]

#: A cassette file larger than this is refused before it is read (bytes).
MAX_CASSETTE_FILE_BYTES = 512 * 1024 * 1024
#: One entry (interaction) spanning more characters of YAML than this is refused before it is built.
MAX_ENTRY_CHARS = 64 * 1024 * 1024
#: Deepest collection nesting accepted; our cassettes use about 10 levels.
MAX_DEPTH = 64
_NO_ALIASES = "cassettes never use anchors or aliases (they can expand a small file into gigabytes)"


class UnsafeYamlError(yaml.YAMLError):
    """The document uses a construct refused in untrusted input (alias, anchor, deep nesting)."""

    def __init__(self, what: str, mark: Any, reason: str) -> None:
        at = "" if mark is None else f" at line {mark.line + 1}, column {mark.column + 1}"
        super().__init__(f"{what}{at}: {reason}")


class NoAliasLoader(_Parser, SafeConstructor, Resolver):
    """libyaml parsing, an iterative composer without anchors/aliases, safe construction."""

    def __init__(self, stream: bytes | str) -> None:
        _Parser.__init__(self, stream)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)

    def _start_collection(self, event: Any, is_seq: bool) -> list[Any]:
        if event.anchor is not None:
            raise UnsafeYamlError("anchor (&name)", event.start_mark, _NO_ALIASES)
        cls = SequenceNode if is_seq else MappingNode
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolve(cls, None, event.implicit)  # type: ignore[no-untyped-call]
        return [cls(tag, [], event.start_mark, None, event.flow_style), is_seq, None]

    def get_single_node(self) -> Node | None:
        """Compose the one document of the stream without recursion (None for an empty stream)."""
        # A hot loop (one turn per YAML event): names are bound locally, scalars are tested first.
        get: Callable[[], Any] = self.get_event
        resolve: Callable[..., str] = self.resolve
        default_tag = self.DEFAULT_SCALAR_TAG
        scalar_event, end_events = events.ScalarEvent, (events.SequenceEndEvent, events.MappingEndEvent)
        get()  # StreamStartEvent
        if isinstance(get(), events.StreamEndEvent):
            return None
        root: Node | None = None
        stack: list[list[Any]] = []  # [collection node, is a sequence, pending mapping key or None]
        while True:
            event = get()
            kind = type(event)
            if kind is scalar_event:
                if event.anchor is not None:
                    raise UnsafeYamlError("anchor (&name)", event.start_mark, _NO_ALIASES)
                tag = event.tag
                if tag is None or tag == "!":
                    implicit = event.implicit
                    tag = resolve(ScalarNode, event.value, implicit) if implicit[0] else default_tag
                node: Node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
            elif kind in end_events:
                node = stack.pop()[0]
                node.end_mark = event.end_mark
            elif kind is events.DocumentEndEvent:
                break
            elif kind is events.AliasEvent:
                raise UnsafeYamlError("alias (*name)", event.start_mark, _NO_ALIASES)
            else:  # a sequence or mapping starts
                if len(stack) >= MAX_DEPTH:
                    raise UnsafeYamlError("nesting", event.start_mark, f"deeper than {MAX_DEPTH} levels")
                stack.append(self._start_collection(event, kind is events.SequenceStartEvent))
                continue
            if not stack:
                root = node
                continue
            top = stack[-1]
            if top[1]:
                top[0].value.append(node)
            elif top[2] is None:
                top[2] = node
            else:
                top[0].value.append((top[2], node))
                top[2] = None
        end = get()
        if not isinstance(end, events.StreamEndEvent):
            raise UnsafeYamlError("a second document", end.start_mark, "a cassette is one YAML document")
        return root


def interaction_spans(root: Node | None) -> list[int]:
    """Characters of YAML each item of the top-level ``interactions`` list spans (empty if none)."""
    if not isinstance(root, MappingNode):
        return []
    for key, value in root.value:
        if isinstance(key, ScalarNode) and key.value == "interactions" and isinstance(value, SequenceNode):
            return [item.end_mark.index - item.start_mark.index for item in value.value]
    return []


def load_untrusted(data: bytes, *, max_entry_chars: int = MAX_ENTRY_CHARS) -> Any:
    """Parse one cassette document; raises ``yaml.YAMLError`` (UnsafeYamlError for refused input).

    Each interaction's size is checked on the composed nodes, before any Python object is built.
    """
    loader = NoAliasLoader(data)
    try:
        root = loader.get_single_node()
        for i, span in enumerate(interaction_spans(root)):
            if span > max_entry_chars:
                limit = f"over the entry limit of {max_entry_chars:,}"
                raise UnsafeYamlError(f"entry #{i}", None, f"{span:,} characters of YAML, {limit}")
        return None if root is None else loader.construct_document(root)
    finally:
        loader.dispose()
