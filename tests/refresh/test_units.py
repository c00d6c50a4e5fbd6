"""Pure parts of the audit: selector, masking, pairing, search/detector/cost roll-ups."""

from __future__ import annotations

import json
from typing import Any

import pytest

from oracleproto.errors import ConfigError
from oracleproto.primitives.hashing import canonical_json, sha256_hex
from oracleproto.refresh.classify import classify, slot_of
from oracleproto.refresh.rollups import cost, detector_flips, marker_drift, search_drift
from oracleproto.refresh.selector import parse_selector
from oracleproto.transport.entry import Entry

CTX = {"model": "sim/a::r5::c4", "question_id": "q1", "sample": 0, "step": 0}


def entry(
    channel: str,
    request: dict[str, Any],
    response: dict[str, Any] | bytes,
    *,
    context: dict[str, Any] | None = None,
    recorded_at: str = "2026-01-01T00:00:00.000000+00:00",
    latency_ms: int = 5,
    headers: dict[str, list[str]] | None = None,
) -> Entry:
    body = response if isinstance(response, bytes) else json.dumps(response).encode()
    request_body = canonical_json(request)
    return Entry(
        key=sha256_hex(canonical_json([channel, request, context])),
        channel=channel,  # type: ignore[arg-type]
        request_meta={"channel": channel, "host": "loopback", "model": request.get("model")},
        request_body=request_body,
        context=context,
        occurrence=0 if channel == "llm" else None,
        method="POST",
        uri="http://127.0.0.1:1234/x",
        request_headers={},
        status=200,
        reason="OK",
        response_headers=headers or {},
        body=body,
        exception=None,
        latency_ms=latency_ms,
        recorded_at=recorded_at,
    )


def chat(
    content: str, *, tool_id: str | None = None, fp: str = "fp_1", cost_usd: float | None = None
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_id:
        message["tool_calls"] = [{"id": tool_id, "type": "function", "function": {"name": "web_search"}}]
    usage: dict[str, Any] = {"prompt_tokens": 10, "completion_tokens": 2}
    if cost_usd is not None:
        usage["cost"] = cost_usd
    return {
        "id": "x",
        "created": 1,
        "model": "m",
        "system_fingerprint": fp,
        "choices": [{"message": message}],
        "usage": usage,
    }


def llm_request(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "prompt"}, *messages], "temperature": 0.7}


# ---------------------------------------------------------------- selector


def test_selector_terms_and_clauses() -> None:
    sel = parse_selector(["model=sim/a,question=q1,question=q2", "channel=search"])
    assert sel(("llm"), CTX)  # real slug matches the virtual one
    assert not sel("llm", {**CTX, "question_id": "q3"})
    assert sel("search", {**CTX, "model": "other"})  # second clause
    assert not sel("llm", None)
    assert parse_selector([])("detector", None) and parse_selector([]).full
    assert parse_selector(["sample=1"])("llm", {**CTX, "sample": 1})
    assert not parse_selector(["sample=1"])("llm", CTX)
    assert sel.describe() == ["model=sim/a,question=q1,question=q2", "channel=search"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("model", "term 'model' is not key=value"),
        ("colour=red", "unknown key 'colour'; use one of model, question, sample, channel"),
        ("channel=web", "channel 'web' is not one of llm, search, detector"),
        ("sample=first", "sample 'first' must be a sample index"),
    ],
)
def test_selector_errors_name_the_bad_term(value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_selector([value])


def test_selector_check_against_the_run() -> None:
    sel = parse_selector(["question=q9"])
    with pytest.raises(ConfigError, match="question q9 is not in the run"):
        sel.check_against(["sim/a::r5::c4"], ["q1"])
    parse_selector(["model=sim/a::r5::c4,question=q1"]).check_against(["sim/a::r5::c4"], ["q1"])


# ---------------------------------------------------------------- masking and classes


def test_volatile_fields_are_masked_and_listed_not_counted() -> None:
    old = entry("llm", llm_request(), chat("hi", tool_id="call_a"), context=CTX, headers={"date": ["Mon"]})
    padded = json.dumps(chat("hi", tool_id="call_b") | {"id": "y", "created": 2}).encode() + b"\n\n  "
    new = entry(
        "llm", llm_request(), padded, context=CTX, recorded_at="2026-02-01T00:00:00.000000+00:00",
        latency_ms=9, headers={"date": ["Tue"]},
    )  # fmt: skip
    [change] = classify((old,), (new,))
    assert change.cls == "unchanged" and change.drift == "none"
    assert change.masked == [
        "latency_ms", "recorded_at", "response_headers.date", "body.id", "body.created", "tool_call_ids",
    ]  # fmt: skip


def test_fingerprint_change_alone_is_marker_only_provider_drift() -> None:
    old = entry("llm", llm_request(), chat("hi"), context=CTX)
    new = entry("llm", llm_request(), chat("hi", fp="fp_2"), context=CTX)
    [change] = classify((old,), (new,))
    assert (change.cls, change.drift, change.marker_only) == ("response_changed", "provider", True)
    assert change.response_diff == ['$.body.system_fingerprint: "fp_1" → "fp_2"']
    assert marker_drift((old,), (new,)) == [
        {"model": "m", "field": "system_fingerprint", "before": {"fp_1": 1}, "after": {"fp_2": 1}}
    ]


def test_changed_prompt_is_harness_drift_and_later_turns_inherit_it() -> None:
    step1 = {**CTX, "step": 1}
    tool = {"role": "tool", "tool_call_id": "c", "content": "results"}
    assistant = {"role": "assistant", "content": None}
    old = (
        entry("llm", llm_request(), chat("a"), context=CTX),
        entry("llm", llm_request(assistant, tool), chat("b"), context=step1),
    )
    changed_prompt = {
        "model": "m",
        "messages": [{"role": "user", "content": "new prompt"}],
        "temperature": 0.7,
    }
    new = (
        entry("llm", changed_prompt, chat("a"), context=CTX),
        entry(
            "llm",
            {**changed_prompt, "messages": [*changed_prompt["messages"], assistant, tool]},
            chat("c"),
            context=step1,
        ),
    )
    changes = classify(old, new)
    assert [(c.slot[4], c.cls, c.drift) for c in changes] == [
        (0, "request_changed", "harness"),
        (1, "request_changed", "harness"),
    ]
    assert changes[0].request_diff == ['$.body.messages[0].content: "prompt" → "new prompt"']


def test_history_change_after_a_search_change_is_provider_drift() -> None:
    assistant = {"role": "assistant", "content": None}
    old_tool = {"role": "tool", "tool_call_id": "c", "content": "old results"}
    new_tool = {"role": "tool", "tool_call_id": "c", "content": "new results"}
    search_req = {"query": "q"}
    old = (
        entry(
            "search", search_req, {"results": [{"url": "https://a.example", "published_date": "2026-01-01"}]}
        ),
        entry("llm", llm_request(assistant, old_tool), chat("b"), context={**CTX, "step": 1}),
    )
    new = (
        entry("search", search_req, {"results": [{"url": "https://a.example", "published_date": "2026-01-02"},
                                                  {"url": "https://b.example", "published_date": None}]}),
        entry("llm", llm_request(assistant, new_tool), chat("b"), context={**CTX, "step": 1}),
    )  # fmt: skip
    changes = classify(old, new)
    assert {(c.channel, c.cls, c.drift) for c in changes} == {
        ("search", "response_changed", "provider"),
        ("llm", "request_changed", "provider"),
    }
    assert search_drift(changes) == [
        {
            "query": "q",
            "urls_added": ["https://b.example"],
            "urls_removed": [],
            "published_date_changes": [
                {"url": "https://a.example", "before": "2026-01-01", "after": "2026-01-02"}
            ],
        }
    ]


def test_new_and_vanished_queries_are_follow_on() -> None:
    old = (entry("search", {"query": "old"}, {"results": []}),)
    new = (entry("search", {"query": "new"}, {"results": []}),)
    assert [(c.cls, c.drift) for c in classify(old, new)] == [
        ("added", "follow-on"),
        ("removed", "follow-on"),
    ]


def test_detector_verdict_flip_is_paired_by_the_audited_url() -> None:
    def det(verdict: str, extra: str) -> Entry:
        prompt = f'{{"url": "https://x.example/a", "cutoff_date": "2026-01-01"}} {extra}'
        request = {
            "model": "sim/detector",
            "messages": [{"role": "user", "content": prompt}],
            "temperature": 0,
        }
        return entry("detector", request, chat(json.dumps({"verdict": verdict, "reason": "r"})))

    old, new = det("keep", "v1"), det("drop", "v2")
    assert slot_of(old) == ("detector", "https://x.example/a", "2026-01-01")
    changes = classify((old,), (new,))
    assert [c.cls for c in changes] == ["request_changed"]
    assert detector_flips(changes) == [{"item": "https://x.example/a", "before": "keep", "after": "drop"}]


def test_cost_counts_live_calls_only_and_sums_usage_cost() -> None:
    a = entry("llm", llm_request(), chat("a", cost_usd=0.25), context=CTX)
    b_ctx = {**CTX, "question_id": "q2"}
    b = entry("llm", llm_request(), chat("b", cost_usd=0.5), context=b_ctx)
    b_new = entry(
        "llm",
        llm_request(),
        chat("c", cost_usd=0.75),
        context=b_ctx,
        recorded_at="2026-03-01T00:00:00.000000+00:00",
    )
    out = cost((a, b), (a, b_new))  # a carried over, b re-recorded
    assert out["carried_over"] == 1
    assert out["original"]["llm"] == {"calls": 2, "prompt_tokens": 20, "completion_tokens": 4, "cost": 0.75}
    assert out["refresh"]["llm"] == {"calls": 1, "prompt_tokens": 10, "completion_tokens": 2, "cost": 0.75}


def test_cost_reads_xai_ticks_like_the_analysis() -> None:
    ticks = chat("t")
    ticks["usage"]["cost_in_usd_ticks"] = 2_500_000_000
    out = cost((entry("llm", llm_request(), ticks, context=CTX),), ())
    assert out["original"]["llm"]["cost"] == 0.25


def test_one_url_audited_for_two_cutoffs_pairs_by_cutoff() -> None:
    def det(cutoff: str, wording: str) -> Entry:
        prompt = f'{wording}: {{"url": "https://x.example/a", "cutoff_date": "{cutoff}"}}'
        request = {
            "model": "sim/detector",
            "messages": [{"role": "user", "content": prompt}],
            "temperature": 0,
        }
        return entry("detector", request, chat("{}"))

    old = (det("2026-02-01", "audit"), det("2026-01-01", "audit"))
    new = (det("2026-01-01", "check"), det("2026-02-01", "check"))
    changes = classify(old, new)
    assert [c.cls for c in changes] == ["request_changed", "request_changed"]
    for c in changes:
        assert c.old is not None and c.new is not None
        assert len(c.request_diff) == 1 and c.request_diff[0].startswith("$.body.messages[0].content:")
        assert c.old.request_body.split("cutoff_date")[1] == c.new.request_body.split("cutoff_date")[1]


def test_entries_sharing_a_slot_pair_with_their_nearest_request() -> None:
    def search(end_date: str, max_results: int) -> Entry:
        return entry(
            "search", {"query": "q", "end_date": end_date, "max_results": max_results}, {"results": []}
        )

    old = (search("2026-01-01", 5), search("2026-02-01", 5))
    new = (search("2026-02-01", 6), search("2026-01-01", 6))
    changes = classify(old, new)
    assert [(c.cls, c.drift) for c in changes] == [("request_changed", "harness")] * 2
    assert [c.request_diff for c in changes] == [["$.body.max_results: 5 → 6"]] * 2
