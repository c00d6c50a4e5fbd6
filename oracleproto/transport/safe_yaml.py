"""Loading cassette YAML from strangers: no anchors or aliases, bounded nesting, capped sizes.

Cassettes are published and replayed by reviewers, so a cassette is untrusted input. Plain
``yaml.load`` with libyaml's composer has two ways to exhaust a machine from a small file:
aliases (a "billion laughs" document is a few hundred bytes and expands to gigabytes once
anything walks it) and deep nesting (libyaml's C composer recurses once per level and
overflows the C stack — a segfault, not an exception — somewhere past 20,000 levels).

The loader below keeps libyaml's C scanner and parser and builds the Python objects straight
from its events in one iterative loop (no node graph, no recursion): alias and anchor events
are refused, the depth is capped, explicit tags other than SafeConstructor's scalar ones are
refused, and non-string scalars go through SafeConstructor's own functions, so the result is
what ``yaml.CSafeLoader`` gives for every cassette we write (our dumper never writes anchors).
Skipping the node graph makes it faster than the C composer (``make bench`` prints the ratio).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml
from yaml import events
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

try:
    from yaml._yaml import CParser as _Parser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml.parser import Parser as _Parser  # type: ignore[assignment]

#: A cassette file larger than this is refused before it is read (bytes).
MAX_CASSETTE_FILE_BYTES = 512 * 1024 * 1024
#: One entry (interaction) spanning more characters of YAML than this is refused as soon as it ends.
MAX_ENTRY_CHARS = 64 * 1024 * 1024
#: Deepest collection nesting accepted; our cassettes use about 10 levels.
MAX_DEPTH = 64
_STR_TAG, _SEQ_TAG, _MAP_TAG = (f"tag:yaml.org,2002:{t}" for t in ("str", "seq", "map"))
_NO_ALIASES = "cassettes never use anchors or aliases (they can expand a small file into gigabytes)"


class UnsafeYamlError(yaml.YAMLError):
    """The document uses a construct refused in untrusted input (alias, anchor, deep nesting)."""

    def __init__(self, what: str, mark: Any, reason: str) -> None:
        at = "" if mark is None else f" at line {mark.line + 1}, column {mark.column + 1}"
        super().__init__(f"{what}{at}: {reason}")


class NoAliasLoader(_Parser, SafeConstructor, Resolver):
    """libyaml parsing; objects built straight from its events, without anchors, aliases or recursion."""

    def __init__(self, stream: bytes | str) -> None:
        _Parser.__init__(self, stream)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)

    def _scalar(self, tag: str, event: Any) -> Any:
        # Non-string scalars (null, bool, int, float, timestamp, !!binary) use SafeConstructor's
        # own functions; an unknown or unsafe tag raises its ConstructorError.
        constructors: dict[Any, Any] = self.yaml_constructors
        build = constructors.get(tag, constructors[None])
        return build(self, ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style))

    def _start(self, event: Any, depth: int) -> list[Any]:
        if event.anchor is not None:
            raise UnsafeYamlError("anchor (&name)", event.start_mark, _NO_ALIASES)
        if depth >= MAX_DEPTH:
            raise UnsafeYamlError("nesting", event.start_mark, f"deeper than {MAX_DEPTH} levels")
        is_seq = type(event) is events.SequenceStartEvent
        if event.tag not in (None, "!", _SEQ_TAG if is_seq else _MAP_TAG):
            why = "cassettes use plain lists and mappings"
            raise UnsafeYamlError(f"tag {event.tag}", event.start_mark, why)
        # [container, is a sequence, pending mapping key, a key is pending, start index]
        return [[] if is_seq else {}, is_seq, None, False, event.start_mark.index]

    def load_document(self, max_entry_chars: int, on_item: Callable[[Any], None] | None = None) -> Any:
        """The one document of the stream as Python objects (None for an empty stream).

        Each item of the top-level ``interactions`` list longer than ``max_entry_chars``
        characters of YAML is refused as soon as it ends. With ``on_item``, each item is handed
        to it as soon as it ends and the list keeps only None in its place (a streamed read holds
        one entry, not the file's).
        """
        # A hot loop (one turn per YAML event): names are bound locally, scalars are tested first.
        get: Callable[[], Any] = self.get_event
        resolve: Callable[..., str] = self.resolve
        scalar_event, end_events = events.ScalarEvent, (events.SequenceEndEvent, events.MappingEndEvent)
        get()  # StreamStartEvent
        if isinstance(get(), events.StreamEndEvent):
            return None
        root: Any = None
        stack: list[list[Any]] = []
        while True:
            event = get()
            kind = type(event)
            if kind is scalar_event:
                if event.anchor is not None:
                    raise UnsafeYamlError("anchor (&name)", event.start_mark, _NO_ALIASES)
                value: Any = event.value
                tag = event.tag
                if tag is None or tag == "!":
                    implicit = event.implicit
                    tag = resolve(ScalarNode, value, implicit) if implicit[0] else _STR_TAG
                if tag != _STR_TAG:
                    value = self._scalar(tag, event)
            elif kind in end_events:
                frame = stack.pop()
                value = frame[0]
                if len(stack) == 2 and stack[0][2] == "interactions":
                    span = event.end_mark.index - frame[4]
                    value = _entry_done(len(stack[1][0]), span, max_entry_chars, value, on_item)
            elif kind is events.DocumentEndEvent:
                break
            elif kind is events.AliasEvent:
                raise UnsafeYamlError("alias (*name)", event.start_mark, _NO_ALIASES)
            else:  # a sequence or mapping starts
                stack.append(self._start(event, len(stack)))
                continue
            if not stack:
                root = value
                continue
            top = stack[-1]
            if top[1]:
                top[0].append(value)
            elif top[3]:
                top[0][top[2]] = value
                top[3] = False
            elif isinstance(value, (list, dict)):
                raise UnsafeYamlError("a list or mapping as a key", event.start_mark, "keys are plain values")
            else:
                top[2], top[3] = value, True
        end = get()
        if not isinstance(end, events.StreamEndEvent):
            raise UnsafeYamlError("a second document", end.start_mark, "a cassette is one YAML document")
        return root


def _check_entry(index: int, span: int, max_entry_chars: int) -> None:
    if span > max_entry_chars:
        limit = f"over the entry limit of {max_entry_chars:,}"
        raise UnsafeYamlError(f"entry #{index}", None, f"{span:,} characters of YAML, {limit}")


def _entry_done(
    index: int, span: int, max_entry_chars: int, value: Any, on_item: Callable[[Any], None] | None
) -> Any:
    # An interactions item ended: check its size, then keep it, or hand it on and keep None instead.
    _check_entry(index, span, max_entry_chars)
    if on_item is None:
        return value
    on_item(value)
    return None


def load_untrusted(
    data: bytes, *, max_entry_chars: int = MAX_ENTRY_CHARS, on_item: Callable[[Any], None] | None = None
) -> Any:
    """Parse one cassette document; raises ``yaml.YAMLError`` (UnsafeYamlError for refused input).

    ``on_item``: receives each top-level ``interactions`` item as it ends (see ``load_document``).
    """
    loader = NoAliasLoader(data)
    try:
        return loader.load_document(max_entry_chars, on_item)
    except yaml.MarkedYAMLError as exc:
        # libyaml 0.2.5's scanner (PyYAML ≥ 6.0.4 wheels) caps flow nesting itself, and it scans up
        # to 1,024 characters ahead, so a deep ``[[[…`` stops there before our cap is reached: the
        # same refusal, named the same way whichever library version parsed it.
        if "maximum nesting depth" in str(exc.problem) and exc.problem_mark is not None:
            raise UnsafeYamlError("nesting", exc.problem_mark, f"deeper than {MAX_DEPTH} levels") from None
        raise
    finally:
        loader.dispose()
