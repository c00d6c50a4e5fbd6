"""Channels and logical positions of captured exchanges and of our own requests."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from oracleproto.conformance.capture import read_capture
from oracleproto.conformance.positions import (
    DetectorPosition,
    LlmPosition,
    Located,
    SearchPosition,
    locate_ours,
)
from oracleproto.conformance.questions import QuestionMatcher
from oracleproto.conformance.samples import Classified, classify_capture
from oracleproto.conformance.template import DetectorTemplateMatcher
from oracleproto.context import CallContext
from tests.conformance.conftest import DETECTOR_MODEL
from tests.conformance.helpers import (
    CHAT,
    DETECTOR_TEMPLATE,
    QUESTIONS,
    assistant,
    detector,
    detector_body,
    dumps,
    exchange,
    llm,
    search,
    user,
)

SYNTHETIC = DetectorTemplateMatcher(DETECTOR_TEMPLATE)
PARIS = user("Predict: Will it rain in Paris? Answer in a box.")


def _classify(*exchanges: object) -> list[Classified]:
    return classify_capture(
        exchanges,  # type: ignore[arg-type]
        detector_model="det",
        template=SYNTHETIC,
        questions=QuestionMatcher(QUESTIONS),
    )


@pytest.mark.shared
@pytest.mark.parametrize(
    ("name", "counts"),
    [
        ("ref-live.jsonl", {"llm": 76, "search": 61, "detector": 305}),
        ("ref-script.jsonl", {"llm": 72, "search": 36, "detector": 180}),
    ],
)
def test_every_shared_exchange_gets_a_position(
    earlier: Path,
    template: DetectorTemplateMatcher,
    matcher: QuestionMatcher,
    name: str,
    counts: dict[str, int],
) -> None:
    classified = classify_capture(
        read_capture(earlier / "captures" / name),
        detector_model=DETECTOR_MODEL,
        template=template,
        questions=matcher,
    )
    assert collections.Counter(c.located.channel for c in classified) == counts
    assert [c.located.problem for c in classified if c.located.position is None] == []
    llm_positions = [c.located.position for c in classified if c.located.channel == "llm"]
    assert len(set(llm_positions)) == len(llm_positions)  # n = 1: every turn is its own position
    assert all(isinstance(p, LlmPosition) and p.sample == 0 for p in llm_positions)
    searches = [c.located.position for c in classified if c.located.channel == "search"]
    assert all(isinstance(p, SearchPosition) and p.end_date for p in searches)
    detectors = [c.located.position for c in classified if c.located.channel == "detector"]
    assert all(isinstance(p, DetectorPosition) and p.url.startswith("https://") for p in detectors)
    assert {p.cutoff_date for p in detectors} <= {p.end_date for p in searches}  # type: ignore[union-attr]


@pytest.mark.shared
def test_ref_live_positions_cover_all_personas_and_questions(
    earlier: Path, template: DetectorTemplateMatcher, matcher: QuestionMatcher
) -> None:
    classified = classify_capture(
        read_capture(earlier / "captures" / "ref-live.jsonl"),
        detector_model=DETECTOR_MODEL,
        template=template,
        questions=matcher,
    )
    step0 = [
        c.located.position
        for c in classified
        if isinstance(c.located.position, LlmPosition) and c.located.position.step == 0
    ]
    assert {p.model for p in step0} == {"sim/careful", "sim/greedy", "sim/hasty", "sim/sloppy"}
    assert len(step0) == 24 and len({(p.model, p.question_id) for p in step0}) == 24


def test_samples_are_numbered_at_step_zero_and_inherited_from_the_parent() -> None:
    s0 = [PARIS]
    a_reply, b_reply = assistant(None, "call_a"), assistant(None, "call_b")
    tool = {"role": "tool", "tool_call_id": "x", "content": "r"}
    classified = _classify(
        llm(1, s0, a_reply),
        llm(2, s0, b_reply),
        # Sample 1's step 1 arrives first; both step-0 requests are prefixes, the reply decides.
        llm(3, [*s0, b_reply, tool]),
        llm(4, [*s0, a_reply, tool]),
        llm(5, [*s0, a_reply, tool, assistant("more"), user("[Harness status] step 3/6")]),
    )
    assert [c.located.position for c in classified] == [
        LlmPosition("m", "q1", 0, 0),
        LlmPosition("m", "q1", 1, 0),
        LlmPosition("m", "q1", 1, 1),
        LlmPosition("m", "q1", 0, 1),
        LlmPosition("m", "q1", 0, 2),
    ]


def test_identical_trajectories_go_to_parents_without_a_child_first() -> None:
    s0, reply = [PARIS], assistant(None, "same")
    tool = {"role": "tool", "tool_call_id": "same", "content": "r"}
    classified = _classify(
        llm(1, s0, reply), llm(2, s0, reply), llm(3, [*s0, reply, tool]), llm(4, [*s0, reply, tool])
    )
    assert [c.located.position.sample for c in classified] == [0, 1, 0, 1]  # type: ignore[union-attr]


def test_a_retry_after_a_failed_answer_keeps_its_sample() -> None:
    s0 = [PARIS]
    classified = _classify(llm(1, s0, status=429), llm(2, s0), llm(3, s0))
    assert [c.located.position for c in classified] == [
        LlmPosition("m", "q1", 0, 0),
        LlmPosition("m", "q1", 0, 0),
        LlmPosition("m", "q1", 1, 0),
    ]


def test_unidentified_and_orphaned_llm_requests_are_reported() -> None:
    classified = _classify(
        llm(1, [user("Something else entirely")]),
        llm(2, [PARIS, assistant("x")]),
        exchange(3, CHAT, b"not json"),
        exchange(4, CHAT, dumps({"model": "m", "messages": "no"})),
        exchange(5, "/v1/models", dumps({})),
    )
    problems = [c.located.problem for c in classified]
    assert problems == [
        "question not identified: no question's event text occurs in the first user message",
        "no earlier step 0 request of this model and question leads to it",
        "the body is not JSON",
        "the body has no 'messages' list",
        "not a chat-completions request",
    ]
    assert all(c.located.channel == "llm" and c.located.position is None for c in classified)


def test_the_longest_event_wins_and_ties_are_not_guessed() -> None:
    matcher = QuestionMatcher(QUESTIONS)
    assert matcher.identify("Will it rain in Paris? Will it rain?") == ("q1", None)
    assert matcher.identify("Will it rain? tomorrow") == ("q2", None)
    from tests.conformance.helpers import question

    tied = QuestionMatcher([question("a", "abc"), question("b", "xyz"), question("c", "abc")])
    assert tied.identify("abc xyz") == (None, "the events of questions a, b, c all occur in it")
    exact = QuestionMatcher(QUESTIONS, {"q2": "Will it rain in Paris? (our rendering)"})
    assert exact.identify("Will it rain in Paris? (our rendering)") == ("q2", None)


def test_search_and_detector_positions_from_the_body() -> None:
    bad_detector = exchange(5, CHAT, dumps({"model": "det", "messages": [user("free text")]}))
    classified = _classify(
        search(1, "rain", "2026-03-01"),
        search(2, "rain", None),
        detector(3, "https://a.example/1"),
        exchange(4, "/search?x=1", dumps({"query": 3})),
        bad_detector,
    )
    assert [c.located.position for c in classified[:3]] == [
        SearchPosition("rain", "2026-03-01"),
        SearchPosition("rain", None),
        DetectorPosition("https://a.example/1", "2026-03-01"),
    ]
    assert classified[3].located.problem == "the body has no string 'query'"
    assert classified[4].located.problem == "the prompt does not follow the detector template"


def _ours(path: str, body: bytes, context: CallContext | None) -> Located:
    return locate_ours(path, body, detector_model="det", template=SYNTHETIC, context=context)


def test_our_positions_use_the_call_context_and_the_body() -> None:
    context = CallContext("m::r5::c4", "q1", 2, 3)
    body = dumps({"model": "m", "messages": [PARIS]})
    assert _ours(CHAT, body, context).position == LlmPosition("m", "q1", 2, 3)
    assert _ours(CHAT, body, None).problem == "the harness set no call context (question, sample, step)"
    assert _ours("/search", dumps({"query": "q"}), context).position == SearchPosition("q", None)
    assert _ours(CHAT, detector_body("u"), context).position == DetectorPosition("u", "2026-03-01")
    assert _ours(CHAT, detector_body("u", title="x\nurl: y"), None).position == DetectorPosition(
        "y\nurl: u", "2026-03-01"
    )


def test_descriptions_are_safe_for_a_terminal() -> None:
    text = SearchPosition("a\u202eb\x1b[2J", None).describe() + DetectorPosition("u\n", "\ud800").describe()
    assert text.isprintable()
    assert "<U+202E>" in text and "\\u001b" in text and "<LF>" in text and "<U+D800>" in text
