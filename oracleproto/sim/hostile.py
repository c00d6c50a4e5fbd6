"""Hostile text in the simulator's answers: what strangers' pages and models may write.

Search results, model outputs and detector replies are written by strangers, so every reader and
writer downstream must be total over Unicode and bytes. :class:`HostileText` rewrites the
simulator's successful answers so that one recorded run carries each hostile string in each
untrusted field of the wire (``tests/unicode/`` drives the whole chain over such a run).

Which string goes where is decided per *distinct request* in order of first arrival (not per
attempt): a retry of the same request gets the same string, so a string the harness refuses
(a body that is not UTF-8) stays refused instead of vanishing on the retry.

- ``/search``: every result of the i-th distinct query carries ``inputs[(i + n // 2) % n]`` in one of
  ``title``, ``url``, ``content`` and ``raw_content`` (rotating with the rank, so a response of
  four or more results covers all four), and so do Tavily's ``answer`` and its echo of ``query``.
  The first result of the first query may instead get a page body of ``big_chars`` characters.
- chat: the i-th distinct request of its kind (a final answer, a turn calling tools, a detector
  verdict) gets ``inputs[i % n]``: in the ``content``, in an OpenRouter-style ``message.reasoning``
  and in the ``query`` of each tool call (whose arguments string keeps the characters unescaped,
  as providers send it); a detector reply carries it in its ``reason``.

Bodies are written as real providers write them: UTF-8 with non-ASCII unescaped; a lone
surrogate, which UTF-8 cannot carry, as a JSON ``\\ud800`` escape; :data:`INVALID_UTF8` (a
private-use character standing for bytes) as the raw bytes :data:`INVALID_BYTES`.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from oracleproto.primitives.hashing import sha256_hex
from oracleproto.sim.personas import DETECTOR_SLUG

#: Stands for invalid UTF-8 in a hostile string: written to the wire as :data:`INVALID_BYTES`.
INVALID_UTF8 = "\U000ffffd"
#: What :data:`INVALID_UTF8` becomes on the wire: a lone continuation byte and a byte UTF-8 never uses.
INVALID_BYTES = b"\x80\xff"
#: The result fields that carry a hostile string, one per result, rotating with the rank.
SEARCH_FIELDS: tuple[str, ...] = ("title", "url", "content", "raw_content")


def wire_bytes(payload: Any) -> bytes:
    """``payload`` as a provider writes it: UTF-8, non-ASCII raw, lone surrogates as JSON escapes."""
    text = json.dumps(payload, ensure_ascii=False)
    # backslashreplace spells a lone surrogate ``\\udXXX``: exactly its JSON escape.
    data = text.encode("utf-8", "backslashreplace")
    return data.replace(INVALID_UTF8.encode("utf-8"), INVALID_BYTES)


def big_text(chars: int, marker: str) -> str:
    """A page body of ``chars`` characters: plain words with ``marker`` at the start and the end."""
    words = "The page goes on and on about the same event, again and again. "
    filler = words * (max(0, chars - 2 * len(marker)) // len(words) + 1)
    return marker + filler[: max(0, chars - 2 * len(marker))] + marker


@dataclass
class HostileText:
    """Rewrites the simulator's successful answers so that they carry ``inputs`` (see the module)."""

    #: The hostile strings, handed out in turn to distinct requests.
    inputs: tuple[str, ...]
    #: Characters of the one huge page body (the first result of the first query); 0: none.
    big_chars: int = 0
    _slots: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    _seen: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.inputs:
            raise ValueError("HostileText needs at least one input string")

    def _slot(self, service: str, request: bytes) -> int:
        """The index of ``request`` among the distinct requests of ``service`` seen so far."""
        key = service + ":" + sha256_hex(request)
        with self._lock:
            if key not in self._slots:
                self._slots[key] = self._seen.get(service, 0)
                self._seen[service] = self._slots[key] + 1
            return self._slots[key]

    def search(self, request: bytes, payload: dict[str, Any]) -> bytes:
        """The body of a successful ``/search`` answer to ``request``."""
        slot = self._slot("search", request)
        # Half a cycle on from the tool turns: the i-th query (carrying inputs[i]) is then not
        # answered with the same string, so a query carrying a refused string still gets pages.
        text = self.inputs[(slot + len(self.inputs) // 2) % len(self.inputs)]
        out = dict(payload)
        out["query"] = f"{payload.get('query', '')} {text}"
        out["answer"] = f"Sources on this topic report: {text}"
        results = []
        for rank, result in enumerate(payload.get("results") or []):
            changed = dict(result)
            name = SEARCH_FIELDS[rank % len(SEARCH_FIELDS)]
            changed[name] = _carry(name, changed.get(name), text)
            if slot == 0 and rank == 0 and self.big_chars:
                changed["raw_content"] = big_text(self.big_chars, text)
            results.append(changed)
        out["results"] = results
        return wire_bytes(out)

    def chat(self, request: bytes, payload: dict[str, Any]) -> bytes:
        """The body of a successful chat answer to ``request`` (a forecaster's or the detector's)."""
        out = json.loads(json.dumps(payload))
        message = out["choices"][0]["message"]
        kind = _reply_kind(payload, message)
        text = self.inputs[self._slot(kind, request) % len(self.inputs)]
        if kind == "detector":
            reply = json.loads(message["content"])
            reply["reason"] = f"{reply.get('reason', '')} {text}"
            message["content"] = json.dumps(reply, ensure_ascii=False)
            return wire_bytes(out)
        if message.get("content") is not None:
            message["content"] = f"Note {text}\n{message['content']}"
        message["reasoning"] = f"Thinking it over {text}"
        for call in message.get("tool_calls") or []:
            arguments = json.loads(call["function"]["arguments"])
            if isinstance(arguments.get("query"), str):
                arguments["query"] = f"{arguments['query']} {text}"
            call["function"]["arguments"] = json.dumps(arguments, ensure_ascii=False)
        return wire_bytes(out)


def _reply_kind(payload: dict[str, Any], message: dict[str, Any]) -> str:
    """``detector``, ``tools`` or ``answer``: each kind is counted apart, so each gets every string
    in turn (final answers are few beside the turns that call tools)."""
    if payload.get("model") == DETECTOR_SLUG:
        return "detector"
    return "tools" if message.get("tool_calls") else "answer"


def _carry(name: str, value: Any, text: str) -> str:
    """``value`` with ``text`` in it; a URL keeps its scheme and host so it still reads as a URL."""
    base = "" if value is None else str(value)
    if name == "url":
        return f"{base}/{text}"
    return f"{base} {text}"
