"""Channels and logical positions of requests, ours and captured alike.

Two harnesses that run the same protocol send their requests in different orders and with
different transport details; what lines a request of ours up with a captured one is its logical
position:

* ``llm``: (model as sent, question id, sample, step) — step = assistant messages already in
  ``messages`` (so the final-answer retry after step N is step N);
* ``search``: (query, end_date) of the Tavily body;
* ``detector``: (url, cutoff_date) read back out of the prompt with the harness's template.

Our LLM requests take question, sample and step from the harness's ``CallContext``; our search
and detector requests are read from their bodies exactly like captured ones. The capture side of
``llm`` (question matching, sample inheritance) is in ``samples.py``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Literal

from oracleproto.conformance.template import DetectorTemplateMatcher
from oracleproto.conformance.text import clip, safe_text
from oracleproto.context import CallContext

Channel = Literal["llm", "search", "detector"]
CHANNELS: tuple[Channel, ...] = ("llm", "search", "detector")


@dataclass(frozen=True)
class LlmPosition:
    """A main-LLM turn: the model as sent, the question, the sample (0-based) and the step (0-based)."""

    model: str
    question_id: str
    sample: int
    step: int

    def describe(self) -> str:
        model, qid = safe_text(clip(self.model, 60)), safe_text(clip(self.question_id, 60))
        return f"llm {model} question {qid} sample {self.sample} step {self.step}"


@dataclass(frozen=True)
class SearchPosition:
    """A Tavily search: its query and end date (None when the body has none)."""

    query: str
    end_date: str | None

    def describe(self) -> str:
        end = "none" if self.end_date is None else safe_text(clip(self.end_date, 40))
        return (
            f"search query {safe_text(clip(json.dumps(self.query, ensure_ascii=False), 80))} end_date {end}"
        )


@dataclass(frozen=True)
class DetectorPosition:
    """A leak-detector audit: the result's url and the cutoff date, as written in the prompt."""

    url: str
    cutoff_date: str

    def describe(self) -> str:
        url, cutoff = safe_text(clip(self.url, 100)), safe_text(clip(self.cutoff_date, 40))
        return f"detector url {url} cutoff_date {cutoff}"


Position = LlmPosition | SearchPosition | DetectorPosition


@dataclass(frozen=True)
class Located:
    """Where a request belongs: its channel and position, or why no position could be read."""

    channel: Channel
    position: Position | None
    problem: str | None = None

    def describe(self) -> str:
        if self.position is not None:
            return self.position.describe()
        return f"{self.channel} (no position: {self.problem})"

    def as_dict(self) -> dict[str, Any] | None:
        return asdict(self.position) if self.position is not None else None


def parse_body(body: bytes) -> tuple[bool, Any]:
    """``(True, value)`` for a JSON body, ``(False, None)`` for anything else (never raises)."""
    try:
        return True, json.loads(body)
    except (ValueError, RecursionError):
        return False, None


def _route(path: str) -> str:
    return path.split("?", 1)[0].split("#", 1)[0].rstrip("/")


def is_chat_path(path: str) -> bool:
    """True for an OpenAI-style chat-completions path (``…/chat/completions``)."""
    return _route(path).endswith("/chat/completions")


def channel_of(path: str, body: Any, detector_model: str) -> Channel:
    """``search`` for ``…/search``, ``detector`` for a chat call to the detector model, else ``llm``."""
    if _route(path).endswith("/search"):
        return "search"
    if is_chat_path(path) and isinstance(body, dict) and body.get("model") == detector_model:
        return "detector"
    return "llm"


def message_text(message: Any) -> str | None:
    """The text of a chat message: a string content, or the joined text of content parts."""
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, dict)]
        return "".join(t for t in texts if isinstance(t, str))
    return None


def search_position(body: Any) -> Located:
    """The position of a Tavily search body (query, end_date)."""
    if not isinstance(body, dict):
        return Located("search", None, "the body is not a JSON object")
    query, end_date = body.get("query"), body.get("end_date")
    if not isinstance(query, str):
        return Located("search", None, "the body has no string 'query'")
    if end_date is not None and not isinstance(end_date, str):
        return Located("search", None, "'end_date' is neither a string nor absent")
    return Located("search", SearchPosition(query, end_date))


def detector_position(body: Any, template: DetectorTemplateMatcher) -> Located:
    """The position of a detector body, parsed from ``messages[0]`` with the harness's template."""
    messages = body.get("messages") if isinstance(body, dict) else None
    prompt = message_text(messages[0]) if isinstance(messages, list) and messages else None
    if prompt is None:
        return Located("detector", None, "the body has no messages[0] text")
    fields = template.parse(prompt)
    if fields is None:
        return Located("detector", None, "the prompt does not follow the detector template")
    return Located("detector", DetectorPosition(fields["url"], fields["cutoff_date"]))


def llm_facts(body: Any) -> tuple[str, list[Any], int] | str:
    """``(model, messages, step)`` of a main-LLM body, or the reason it has none."""
    if not isinstance(body, dict):
        return "the body is not a JSON object"
    model, messages = body.get("model"), body.get("messages")
    if not isinstance(model, str):
        return "the body has no string 'model'"
    if not isinstance(messages, list):
        return "the body has no 'messages' list"
    step = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
    return model, messages, step


def locate_ours(
    path: str,
    body: bytes,
    *,
    detector_model: str,
    template: DetectorTemplateMatcher,
    context: CallContext | None,
) -> Located:
    """The channel and position of one of our requests (``context``: the harness's call context)."""
    is_json, parsed = parse_body(body)
    channel = channel_of(path, parsed, detector_model)
    if channel == "search":
        return search_position(parsed) if is_json else Located("search", None, "the body is not JSON")
    if channel == "detector":
        return detector_position(parsed, template)
    if not is_chat_path(path):
        return Located("llm", None, "not a chat-completions request")
    facts = llm_facts(parsed) if is_json else "the body is not JSON"
    if isinstance(facts, str):
        return Located("llm", None, facts)
    if context is None:
        return Located("llm", None, "the harness set no call context (question, sample, step)")
    return Located("llm", LlmPosition(facts[0], context.question_id, context.sample, context.step))
