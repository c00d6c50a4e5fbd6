"""Per sample: a compact summary (always shown in lists) and the full trajectory (rendered on demand).

States, correctness and exam scores come from the analysis reader's trial table, so the viewer
agrees with the tables by construction; everything else is the DB cell as stored, joined with the
cassette entries the sample used when the run has them.
"""

from __future__ import annotations

import re
from typing import Any

from oracleproto.analysis.reader import ModelRun
from oracleproto.analysis.trials import BUCKETS, TrialState
from oracleproto.view.recording import Recording, join_searches, llm_steps
from oracleproto.view.rows import ModelRows, json_or_none

STATES = {
    TrialState.EMPTY: "empty",
    TrialState.EXCLUDED: "excluded",
    TrialState.CALL_ERROR: "error",
    TrialState.PARSE_FAIL: "unparsed",
}
_BOXED = re.compile(r"\\boxed\s*\{")
#: Assistant message fields shown besides content and tool calls (reasoning text as providers name it).
REASONING_FIELDS = ("reasoning", "reasoning_content")
HARNESS_MARK = "[Harness status]"


def boxed_span(text: str) -> list[int] | None:
    """[start, end) of the last brace-balanced ``\\boxed{...}`` in ``text`` (the parser's payload)."""
    span: list[int] | None = None
    pos = 0
    while (match := _BOXED.search(text, pos)) is not None:
        depth, i = 1, match.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth:
            pos = match.end()
            continue
        span, pos = [match.start(), i], i
    return span


def utf16_span(text: str, span: list[int] | None) -> list[int] | None:
    """``span`` (code point offsets into ``text``) in UTF-16 code units, as the page's script slices.

    A character beyond U+FFFF (an emoji) is one code point here and two units there, so offsets
    after it would otherwise mark the wrong letters.
    """
    if span is None:
        return None
    return [len(text[:i].encode("utf-16-le", "surrogatepass")) // 2 for i in span]


def _letters(cell: Any) -> list[str] | None:
    value = json_or_none(cell)
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str) and value.strip():
        return [s.strip() for s in value.split(",")]
    return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def summary(model: ModelRun, qi: int, j: int, cells: dict[str, Any]) -> dict[str, Any]:
    """The list form of one sample: outcome, letters, exam score, counters, detector drops."""
    table = model.table
    state = int(table.state[qi, j])
    if state == TrialState.PARSED:
        outcome = "correct" if bool(table.correct[qi, j]) else "wrong"
    else:
        outcome = STATES[TrialState(state)]
    calls = json_or_none(cells.get("search_calls"))
    verdicts = [
        str(v)
        for c in (calls if isinstance(calls, list) else [])
        if isinstance(c, dict)
        for v in (c.get("detector_verdicts") or [])
    ]
    counted = bool(table.counted[qi, j])
    return {
        "outcome": outcome,
        "letters": _letters(cells.get("final_answer_letters")),
        "exam": round(float(table.exam[qi, j]), 6) if counted else None,
        "error": cells.get("error"),
        "steps": _int(cells.get("react_steps")),
        "tools": _int(cells.get("tool_calls_count")),
        "searches": int(table.search_calls[qi, j]),
        "prompt_tokens": _int(cells.get("prompt_tokens")),
        "completion_tokens": _int(cells.get("completion_tokens")),
        "reasoning_tokens": _int(cells.get("reasoning_tokens")),
        "latency_ms": _int(cells.get("latency_ms")),
        "kept": sum(v == "keep" for v in verdicts),
        "dropped": sum(v == "drop" for v in verdicts),
        "failed": sum(v.startswith("failed") for v in verdicts),
    }


def _tool_call(call: dict[str, Any]) -> dict[str, Any]:
    """A call's id, name and arguments: a function call's, or a custom call's name and input."""
    custom = call.get("type") == "custom"
    called = call.get("custom" if custom else "function")
    part: dict[str, Any] = called if isinstance(called, dict) else {}
    return {
        "id": call.get("id"),
        "name": part.get("name"),
        "arguments": part.get("input" if custom else "arguments"),
    }


def _message(message: Any) -> dict[str, Any]:
    """One trace message as shown: role, content, reasoning text, tool calls, injection marker."""
    if not isinstance(message, dict):
        return {"role": "?", "content": str(message)}
    out: dict[str, Any] = {"role": message.get("role"), "content": message.get("content")}
    for name in REASONING_FIELDS:
        if message.get(name):
            out["reasoning"] = message[name]
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        out["tool_calls"] = [_tool_call(c) for c in calls if isinstance(c, dict)]
    if message.get("tool_call_id"):
        out["tool_call_id"] = message["tool_call_id"]
    if message.get("refusal"):
        out["refusal"] = message["refusal"]
    content = message.get("content")
    if isinstance(content, str) and HARNESS_MARK in content:
        out["harness"] = True
    return out


def detail(
    rows: ModelRows, qid: str, j: int, cells: dict[str, Any], recording: Recording | None
) -> dict[str, Any]:
    """The full trajectory of one sample (rendered only when the sample is opened)."""
    trace = json_or_none(cells.get("messages_trace"))
    messages = [_message(m) for m in trace] if isinstance(trace, list) else []
    prompt = rows.prompts.get(qid)
    if messages and messages[0].get("role") == "user" and messages[0].get("content") == prompt:
        messages = messages[1:]  # the prompt is shown once, above the turns
    for m in messages:
        if m.get("role") == "user":
            m["harness"] = True  # after the prompt, every user message is the harness's injection
    calls = json_or_none(cells.get("search_calls"))
    calls = calls if isinstance(calls, list) else []
    raw = cells.get("final_answer_raw")
    keys = rows.entry_keys.get((qid, j)) if rows.entry_keys is not None else None
    out: dict[str, Any] = {
        "messages": messages,
        "search_calls": calls,
        "step_metrics": json_or_none(cells.get("step_metrics")),
        "final_answer_raw": raw,
        "boxed": utf16_span(raw, boxed_span(raw)) if isinstance(raw, str) else None,
        "parse_ok": cells.get("parse_ok"),
        "finish_reason": cells.get("finish_reason"),
        "nudges_used": cells.get("nudges_used"),
        "final_answer_retry_used": cells.get("final_answer_retry_used"),
        "response_id": cells.get("response_id"),
        "system_fingerprint": cells.get("system_fingerprint"),
        "service_tier": cells.get("service_tier"),
        "belief_final": json_or_none(cells.get("belief_final")),
        "created_at": cells.get("created_at"),
        "entry_keys": keys,
    }
    if recording is not None and keys is not None:
        out["llm_calls"] = llm_steps(recording, keys)
        out["recorded_searches"] = join_searches(recording, keys, calls)
    return out


def question_doc(model: ModelRun, rows: ModelRows, qi: int, qid: str) -> dict[str, Any]:
    """A question as the viewer lists it (from the model's DB; identical across models)."""
    q = rows.questions.get(qid, {})
    options = json_or_none(q.get("options"))
    return {
        "id": qid,
        "event": q.get("event"),
        "question_type": q.get("question_type"),
        "choice_type": q.get("choice_type"),
        "bucket": BUCKETS[int(model.table.bucket[qi])],
        "options": options if isinstance(options, list) else [],
        "answer": _letters(q.get("answer")) or [],
        "end_time": q.get("end_time"),
    }
