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


class UnsafeYamlError(yaml.YAMLError):
    """The document uses a construct refused in untrusted input (alias, anchor, deep nesting)."""

    def __init__(self, what: str, mark: Any) -> None:
        at = "" if mark is None else f" at line {mark.line + 1}, column {mark.column + 1}"
        super().__init__(f"{what}{at}")


class NoAliasLoader(_Parser, SafeConstructor, Resolver):
    """libyaml parsing, an iterative composer without anchors/aliases, safe construction."""

    def __init__(self, stream: bytes | str) -> None:
        _Parser.__init__(self, stream)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)

    def _tag(self, kind: type[Node], event: Any, value: str | None) -> str:
        tag = event.tag
        if tag is None or tag == "!":
            return str(self.resolve(kind, value, event.implicit))  # type: ignore[no-untyped-call]
        return str(tag)

    def get_single_node(self) -> Node | None:
        """Compose the one document of the stream without recursion (None for an empty stream)."""
        get: Callable[[], Any] = self.get_event
        get()  # StreamStartEvent
        event = get()
        if isinstance(event, events.StreamEndEvent):
            return None
        root: Node | None = None
        stack: list[list[Any]] = []  # [collection node, pending mapping key or None]
        while True:
            event = get()
            kind = type(event)
            if kind is events.AliasEvent:
                raise UnsafeYamlError(
                    "alias (*name) refused: cassettes never use anchors or aliases", event.start_mark
                )
            if kind is events.DocumentEndEvent:
                break
            if kind is events.SequenceEndEvent or kind is events.MappingEndEvent:
                node: Node = stack.pop()[0]
                node.end_mark = event.end_mark
            else:
                if event.anchor is not None:
                    raise UnsafeYamlError(
                        "anchor (&name) refused: cassettes never use anchors or aliases", event.start_mark
                    )
                if kind is events.ScalarEvent:
                    node = ScalarNode(
                        self._tag(ScalarNode, event, event.value),
                        event.value,
                        event.start_mark,
                        event.end_mark,
                        style=event.style,
                    )
                else:
                    if len(stack) >= MAX_DEPTH:
                        raise UnsafeYamlError(
                            f"nesting deeper than {MAX_DEPTH} levels refused", event.start_mark
                        )
                    cls = SequenceNode if kind is events.SequenceStartEvent else MappingNode
                    node = cls(
                        self._tag(cls, event, None), [], event.start_mark, None, flow_style=event.flow_style
                    )
                    stack.append([node, None])
                    continue
            if not stack:
                root = node
                continue
            top = stack[-1]
            parent = top[0]
            if isinstance(parent, SequenceNode):
                parent.value.append(node)
            elif top[1] is None:
                top[1] = node
            else:
                parent.value.append((top[1], node))
                top[1] = None
        end = get()
        if not isinstance(end, events.StreamEndEvent):
            raise UnsafeYamlError(
                "a second document refused: a cassette is one YAML document", end.start_mark
            )
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
                raise UnsafeYamlError(
                    f"entry #{i} is {span:,} characters of YAML, over the limit of {max_entry_chars:,}",
                    None,
                )
        return None if root is None else loader.construct_document(root)
    finally:
        loader.dispose()
