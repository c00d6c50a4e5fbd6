"""Positions of captured exchanges, main-LLM samples included.

A capture carries no sample identity, so it is rebuilt from the conversation itself:

* the step-0 requests of one (model, question) are numbered 0, 1, … in seq order;
* a later request inherits the sample of its parent: the step k−1 request of the same model and
  question whose ``messages`` are a prefix of its own. When several are (identical trajectories
  so far), the parent whose captured reply equals the assistant message that follows (content
  and tool-call ids) wins, then one that has no child yet, then the earliest;
* a request that repeats, byte for byte, an earlier request of the same model and question
  whose answer was not a 2xx is a retry of it and keeps its sample (a 429 then a 200 are one
  logical call at one position, replayed in that order).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from oracleproto.conformance.capture import CaptureExchange
from oracleproto.conformance.positions import (
    LlmPosition,
    Located,
    channel_of,
    detector_position,
    is_chat_path,
    llm_facts,
    message_text,
    parse_body,
    search_position,
)
from oracleproto.conformance.questions import QuestionMatcher
from oracleproto.conformance.template import DetectorTemplateMatcher

Reply = tuple[Any, tuple[Any, ...]]


@dataclass(frozen=True)
class Classified:
    """A captured exchange with its channel and position."""

    exchange: CaptureExchange
    located: Located


@dataclass
class _Turn:
    exchange: CaptureExchange
    model: str
    question_id: str
    step: int
    messages: list[Any]
    reply: Reply | None
    sample: int = -1
    children: int = 0
    retried: bool = False

    @property
    def failed(self) -> bool:
        return not 200 <= self.exchange.status < 300


def _reply_of(message: Any) -> Reply | None:
    """(content, tool-call ids) of an assistant message."""
    if not isinstance(message, dict):
        return None
    calls = message.get("tool_calls")
    ids = tuple(c.get("id") for c in calls if isinstance(c, dict)) if isinstance(calls, list) else ()
    return message.get("content"), ids


def _captured_reply(exchange: CaptureExchange) -> Reply | None:
    is_json, body = parse_body(exchange.resp_body)
    choices = body.get("choices") if is_json and isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    return _reply_of(choices[0].get("message"))


def _llm_turn(exchange: CaptureExchange, body: Any, questions: QuestionMatcher) -> _Turn | Located:
    if not is_chat_path(exchange.path):
        return Located("llm", None, "not a chat-completions request")
    facts = llm_facts(body)
    if isinstance(facts, str):
        return Located("llm", None, facts)
    model, messages, step = facts
    first_user = next((m for m in messages if isinstance(m, dict) and m.get("role") == "user"), None)
    text = message_text(first_user)
    if text is None:
        return Located("llm", None, "the request has no user message with text")
    question_id, why = questions.identify(text)
    if question_id is None:
        return Located("llm", None, f"question not identified: {why}")
    return _Turn(exchange, model, question_id, step, messages, _captured_reply(exchange))


def _parent(turn: _Turn, earlier: list[_Turn]) -> _Turn | None:
    size = len(turn.messages)
    candidates = [
        p
        for p in earlier
        if p.step == turn.step - 1
        and len(p.messages) < size
        and turn.messages[: len(p.messages)] == p.messages
    ]
    if not candidates:
        return None

    def preference(parent: _Turn) -> tuple[bool, bool, int]:
        following = next(
            (
                m
                for m in turn.messages[len(parent.messages) :]
                if isinstance(m, dict) and m.get("role") == "assistant"
            ),
            None,
        )
        matches = parent.reply is not None and parent.reply == _reply_of(following)
        return not matches, parent.children > 0, parent.exchange.seq

    return min(candidates, key=preference)


def _assign_group(turns: list[_Turn]) -> dict[int, Located]:
    """Samples of one (model, question)'s turns, in seq order; a turn without a parent is reported."""
    out: dict[int, Located] = {}
    done: list[_Turn] = []
    next_sample = 0
    for turn in turns:
        retry_of = next(
            (
                p
                for p in reversed(done)
                if p.failed and not p.retried and p.exchange.body == turn.exchange.body
            ),
            None,
        )
        if retry_of is not None:
            retry_of.retried = True
            turn.sample = retry_of.sample
        elif turn.step == 0:
            turn.sample, next_sample = next_sample, next_sample + 1
        else:
            parent = _parent(turn, done)
            if parent is None:
                out[turn.exchange.seq] = Located(
                    "llm",
                    None,
                    f"no earlier step {turn.step - 1} request of this model and question leads to it",
                )
                continue
            parent.children += 1
            turn.sample = parent.sample
        done.append(turn)
        out[turn.exchange.seq] = Located(
            "llm", LlmPosition(turn.model, turn.question_id, turn.sample, turn.step)
        )
    return out


def classify_capture(
    exchanges: Iterable[CaptureExchange],
    *,
    detector_model: str,
    template: DetectorTemplateMatcher,
    questions: QuestionMatcher,
) -> list[Classified]:
    """Every exchange with its channel and position (or the reason it has none), in seq order."""
    ordered = sorted(exchanges, key=lambda e: e.seq)
    located: dict[int, Located] = {}
    groups: dict[tuple[str, str], list[_Turn]] = {}
    for exchange in ordered:
        is_json, body = parse_body(exchange.body)
        channel = channel_of(exchange.path, body, detector_model)
        if channel == "search":
            located[exchange.seq] = (
                search_position(body) if is_json else Located("search", None, "the body is not JSON")
            )
        elif channel == "detector":
            located[exchange.seq] = detector_position(body, template)
        elif not is_json:
            located[exchange.seq] = Located("llm", None, "the body is not JSON")
        else:
            turn = _llm_turn(exchange, body, questions)
            if isinstance(turn, Located):
                located[exchange.seq] = turn
            else:
                groups.setdefault((turn.model, turn.question_id), []).append(turn)
    for turns in groups.values():
        located.update(_assign_group(turns))
    return [Classified(e, located[e.seq]) for e in ordered]
