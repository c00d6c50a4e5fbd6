"""Our ReAct loop, run with the earlier harness's profile, sends the earlier harness's bytes.

captures/ref-script.jsonl holds every HTTP exchange of the earlier implementation driven by a
scripted model (script/a, script/b: forced tool errors, replies without a box, an exhausted
search budget), captures/ref-live.jsonl the same harness with four simulator personas; both with
N = 6, C = 4, R = 5, L = 2, drop-tools on, n = 1. Here a fake chat model replays each sample's
captured responses in order, a fake Tavily answers each search with its captured response, and a
fake detector gives the captured verdicts; every chat request our loop builds, serialised with the
profile's ``request_json.llm`` and key order, must equal the captured request body byte for byte.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from oracleproto.agent import run_sample
from oracleproto.context import CallContext
from oracleproto.dataset.loader import load_questions
from oracleproto.dataset.models import Question
from oracleproto.primitives.clock import FakeClock
from oracleproto.profile import HarnessProfile
from oracleproto.providers.chat_parse import parse_chat_completion
from oracleproto.providers.detector import Verdict
from oracleproto.providers.filtered import FilteredSearch
from oracleproto.providers.llm_body import build_chat_body
from oracleproto.providers.search_results import parse_results
from oracleproto.providers.types import ChatResponse, Message, SearchOutcome, SearchResult, ToolSchema
from oracleproto.settings.model import LLMSettings, ReactSettings

DETECTOR_MODEL = "sim/detector"
#: TAVILY_RAW_CONTENT_MAX_CHARS of the captured runs (the earlier default).
MAX_CHARS = 8_000
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Capture:
    """One capture file, indexed: chat turns per sample, search responses, detector verdicts."""

    #: (model, first user message) → the (request body, response body) of each step, in order.
    samples: dict[tuple[str, str], list[tuple[bytes, bytes]]]
    #: (query, end_date) → Tavily's response (volatile members removed).
    searches: dict[tuple[str, str], dict[str, Any]]
    #: (url, cutoff date) → the detector's verdict.
    verdicts: dict[tuple[str, str], str]


def _stable(response: dict[str, Any]) -> dict[str, Any]:
    # Repeated identical searches differ only in Tavily's timing and request id.
    return {k: v for k, v in response.items() if k not in ("response_time", "request_id")}


@cache
def load_capture(path: Path) -> Capture:
    samples: dict[tuple[str, str], dict[int, tuple[bytes, bytes]]] = {}
    searches: dict[tuple[str, str], dict[str, Any]] = {}
    verdicts: dict[tuple[str, str], str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        assert row["status"] == 200, row["seq"]
        body, response = base64.b64decode(row["body_b64"]), base64.b64decode(row["resp_b64"])
        request = json.loads(body)
        if row["path"] == "/search":
            key = (request["query"], request["end_date"])
            found = _stable(json.loads(response))
            assert searches.setdefault(key, found) == found, key
        elif request["model"] == DETECTOR_MODEL:
            prompt = request["messages"][0]["content"]
            url = re.search(r"^url: (.*)$", prompt, re.MULTILINE)
            cutoff = re.search(r"^cutoff_date: (\S+)$", prompt, re.MULTILINE)
            assert url is not None and cutoff is not None, row["seq"]
            reply = json.loads(json.loads(response)["choices"][0]["message"]["content"])
            verdict = verdicts.setdefault((url.group(1), cutoff.group(1)), reply["verdict"])
            assert verdict == reply["verdict"], row["seq"]
        else:
            assert row["path"] == "/v1/chat/completions", row["seq"]
            # n = 1: a sample is its model and prompt; its step is the number of replies so far.
            sample = (request["model"], request["messages"][0]["content"])
            step = sum(m["role"] == "assistant" for m in request["messages"])
            assert step not in samples.setdefault(sample, {}), (row["seq"], "a retried or repeated request")
            samples[sample][step] = (body, response)
    ordered = {}
    for sample, steps in samples.items():
        assert sorted(steps) == list(range(len(steps))), sample[0]
        ordered[sample] = [steps[k] for k in range(len(steps))]
    return Capture(ordered, searches, verdicts)


@dataclass
class ReplayChat:
    """Answers call k with the captured response of step k; keeps what each call was given."""

    responses: list[bytes]
    seen: list[tuple[list[Message], list[ToolSchema]]] = field(default_factory=list)

    async def complete(
        self, model: str, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> ChatResponse:
        k = len(self.seen)
        self.seen.append((json.loads(json.dumps(list(messages))), list(tools)))
        assert k < len(self.responses), (
            f"our loop made call {k + 1}; the earlier harness made {len(self.responses)}"
        )
        return parse_chat_completion(self.responses[k], latency_ms=10, received_at=T0 + timedelta(seconds=k))


@dataclass
class CapturedTavily:
    """Tavily answering each search with its captured response, cut by the profile's rules."""

    capture: Capture
    profile: HarnessProfile

    async def search(self, query: str, end_date: date, max_results: int) -> SearchOutcome:
        assert max_results == 5
        data = self.capture.searches[(query, end_date.isoformat())]
        results = parse_results(data, MAX_CHARS, self.profile.truncation)
        dates = tuple(r.published_date for r in results)
        return SearchOutcome(query, end_date, results, data.get("answer"), dates, None, None, 20)


@dataclass
class CapturedDetector:
    """The captured verdict on each (url, cutoff)."""

    capture: Capture
    fail_action: str = "drop"
    judged: int = 0

    async def judge(self, result: SearchResult, cutoff: date) -> Verdict:
        self.judged += 1
        return Verdict(self.capture.verdicts[(result.url, cutoff.isoformat())], "", None, 5)


def question_of(questions: list[Question], prompt: str) -> Question:
    found = [q for q in questions if q.event in prompt]
    assert len(found) == 1, prompt[:200]
    return found[0]


def first_difference(ours: bytes, theirs: bytes) -> str:
    at = next(
        (i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), min(len(ours), len(theirs))
    )
    around = slice(max(at - 200, 0), at + 200)
    return f"first difference at byte {at}:\n ours:   {ours[around]!r}\n theirs: {theirs[around]!r}"


@pytest.mark.parametrize(("name", "samples"), [("ref-script.jsonl", 12), ("ref-live.jsonl", 24)])
async def test_every_chat_request_equals_the_captured_bytes(
    earlier_harness: Path, earlier_profile: HarnessProfile, name: str, samples: int
) -> None:
    capture = load_capture(earlier_harness / "captures" / name)
    questions = load_questions(earlier_harness / "subset6.db")
    llm = LLMSettings(  # type: ignore[call-arg]
        _env_file=None,
        temperature=0.7,
        top_p=1.0,
        max_tokens=12_000,
        send_seed=False,
        reasoning_model_patterns=[],
        max_completion_tokens_models=[],
    )
    react = ReactSettings(  # type: ignore[call-arg]
        _env_file=None,
        max_steps=6,
        max_search_calls=4,
        force_final_answer_lookahead=2,
        budget_exceeded_drop_tools=True,
        min_search_calls=0,
        final_answer_retry=False,
        answer_parser="algorithm2",
    )
    assert len(capture.samples) == samples
    compared = 0
    detector = CapturedDetector(capture)
    for (model, prompt), turns in capture.samples.items():
        question = question_of(questions, prompt)
        chat = ReplayChat([response for _, response in turns])
        await run_sample(
            question=question,
            user_prompt=prompt,
            model=model,
            chat=chat,
            search=FilteredSearch(CapturedTavily(capture, earlier_profile), detector),  # type: ignore[arg-type]
            tools=[dict(earlier_profile.llm_request.tool_schema)],
            react=react,
            max_results=5,
            # δ = 1 day: the captured end_date of every search of this question.
            prediction_cutoff=question.end_time - timedelta(days=1),
            context=CallContext(model=model, question_id=question.id, sample=0),
            clock=FakeClock(T0),
            write_trace=True,
            belief=False,
            profile=earlier_profile,
        )
        assert len(chat.seen) == len(turns), (model, question.id)
        for step, ((messages, tools), (captured, _)) in enumerate(zip(chat.seen, turns, strict=True)):
            ours = earlier_profile.request_json.llm.encode(
                build_chat_body(llm, model, messages, tools, earlier_profile)
            )
            assert ours == captured, f"{model} {question.id} step {step}: {first_difference(ours, captured)}"
            compared += 1
    # Every captured chat request was rebuilt, and the searches went through the detector.
    assert compared == sum(len(t) for t in capture.samples.values())
    assert detector.judged > 0


async def test_the_script_capture_exercises_the_earlier_rules(earlier_harness: Path) -> None:
    # What the byte comparison above covers, read from the captured requests themselves.
    capture = load_capture(earlier_harness / "captures" / "ref-script.jsonl")
    texts: set[str] = set()
    tools_per_step: set[tuple[int, bool]] = set()
    for turns in capture.samples.values():
        for step, (body, _) in enumerate(turns):
            request = json.loads(body)
            tools_per_step.add((step + 1, "tools" in request))
            texts.update(m["content"] for m in request["messages"][1:] if m["role"] in ("user", "tool"))
    # The texts to look for come from the earlier harness's profile in ../shared: each injection's
    # directive (after its status header) and each error message the script forced, as the start of
    # a tool message.
    profile = json.loads((earlier_harness / "earlier-harness.profile.json").read_text(encoding="utf-8"))
    injections = profile["texts"]["injections"]
    errors = profile["tool_calls"]["errors"]
    directives = [
        injections[name].split("\n", 1)[1].split("{{")[0]
        for name in (
            "budget_exhausted",
            "unboxed_continuation",
            "soft_warning",
            "soft_warning_no_search",
            "hard_cutoff",
        )
    ]
    messages = [
        json.dumps({"error": errors[kind]["message"].replace("{{tool_name}}", name).split("{{")[0]})[:-2]
        for kind, name in (
            ("unknown_tool", "calculator"),
            ("bad_json", ""),
            ("empty_query", ""),
            ("budget_exceeded", ""),
        )
    ]
    bodies = [t.split("\n", 1)[1] if "\n" in t and not t.startswith("{") else t for t in texts]
    for expected in (*directives, *messages):
        assert expected and any(body.startswith(expected) for body in bodies), expected
    # Step 6 (hard cutoff) never offers tools; step 1 always does.
    assert (6, True) not in tools_per_step and (1, False) not in tools_per_step
