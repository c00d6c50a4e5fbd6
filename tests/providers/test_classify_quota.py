"""Quota/credit/billing failures are their own kind, on the real shapes of each provider (issue 11).

Bodies are written here in the shapes the providers send (confirmed against public bug reports
and the shared real payloads), never copied: OpenAI's 429 ``insufficient_quota``, Zhipu's error
code 1113, MiniMax's 1008 (OpenAI-compatible and native envelopes), OpenRouter's 402 (HTTP and
inside a 200), Tavily's 432/433, and the rate limits that must stay rate limits.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from oracleproto.errors import ErrorKind
from oracleproto.providers.chat_parse import ErrorInBodyError, parse_chat_completion
from oracleproto.providers.classify import classify_error_object, classify_status, mentions_quota
from oracleproto.providers.search import search_failure_kind
from oracleproto.providers.timing import rate_limit_wait

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def body(payload: Any) -> bytes:
    return json.dumps(payload, ensure_ascii=False).encode("utf-8")


OPENAI_INSUFFICIENT_QUOTA = body(
    {
        "error": {
            "message": "You exceeded your current quota, please check your plan and billing details.",
            "type": "insufficient_quota",
            "param": None,
            "code": "insufficient_quota",
        }
    }
)
ZHIPU_1113_ZH = body({"error": {"code": "1113", "message": "余额不足或无可用资源包,请充值。"}})
ZHIPU_1113_EN = body(
    {"error": {"code": "1113", "message": "Insufficient balance or no resource package. Please recharge."}}
)
MINIMAX_1008_COMPAT = body(
    {
        "error": {
            "http_code": "429",
            "message": "insufficient balance (1008)",
            "type": "insufficient_balance_error",
        },
        "request_id": "0123abcd",
    }
)
MINIMAX_1008_NATIVE = body(
    {"id": "0456", "choices": None, "base_resp": {"status_code": 1008, "status_msg": "insufficient balance"}}
)
OPENROUTER_402 = body(
    {
        "error": {
            "message": "Insufficient credits. Add more using https://openrouter.ai/settings/credits",
            "code": 402,
            "metadata": {"limit_source": "openrouter_credits"},
        }
    }
)
OPENROUTER_KEY_LIMIT_402 = body(
    {
        "error": {
            "message": "This request requires more credits, or fewer max_tokens. You requested up to 4096 "
            "tokens, but can only afford 1200.",
            "code": 402,
        }
    }
)
SILICONFLOW_403 = body(
    {
        "code": 30011,
        "message": "The selected model requires paid balance. Your paid "
        "balance is insufficient. Please top up and try again.",
        "data": None,
    }
)
ANTHROPIC_400 = body(
    {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "Your credit balance is too low to access the API. "
            "Go to Plans & Billing to purchase credits.",
        },
    }
)
TAVILY_432 = body(
    {"detail": {"error": "This request exceeds your plan's set usage limit. Upgrade your plan."}}
)
TAVILY_433 = body(
    {"detail": {"error": "This request exceeds the pay-as-you-go limit. Raise it on the dashboard."}}
)
AZURE_86400 = body(
    {
        "error": {
            "code": "429",
            "message": "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version "
            "2024-02-01 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry "
            "after 86400 seconds. Please go here: https://aka.ms/oai/quotaincrease if you would like to "
            "further increase the default rate limit.",
        }
    }
)
OPENAI_RPM = body(
    {
        "error": {
            "message": "Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): "
            "Limit 500, Used 500, Requested 1. Please try again in 120ms. You can increase your rate limit "
            "by adding a payment method to your account at https://platform.openai.com/account/billing.",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }
)
GEMINI_PER_MINUTE = body(
    {
        "error": {
            "code": 429,
            "message": "Quota exceeded for quota metric 'Generate Content API requests per minute' and limit "
            "'GenerateContent request limit per minute for a region' of service "
            "'generativelanguage.googleapis.com'.",
            "status": "RESOURCE_EXHAUSTED",
        }
    }
)


@pytest.mark.parametrize(
    ("status", "raw"),
    [
        pytest.param(429, OPENAI_INSUFFICIENT_QUOTA, id="openai-insufficient_quota"),
        pytest.param(429, ZHIPU_1113_ZH, id="zhipu-1113-zh"),
        pytest.param(429, ZHIPU_1113_EN, id="zhipu-1113-en"),
        pytest.param(400, body({"error": {"code": 1113, "message": "账户已欠费"}}), id="zhipu-1113-numeric"),
        pytest.param(429, MINIMAX_1008_COMPAT, id="minimax-1008"),
        pytest.param(402, OPENROUTER_402, id="openrouter-402"),
        pytest.param(402, OPENROUTER_KEY_LIMIT_402, id="openrouter-402-key-limit"),
        pytest.param(402, b"", id="402-no-body"),
        pytest.param(403, SILICONFLOW_403, id="siliconflow-403-balance"),
        pytest.param(400, ANTHROPIC_400, id="credit-balance-too-low"),
        pytest.param(432, TAVILY_432, id="tavily-432"),
        pytest.param(433, TAVILY_433, id="tavily-433"),
    ],
)
def test_exhausted_credit_is_quota(status: int, raw: bytes) -> None:
    assert classify_status(status, raw) is ErrorKind.QUOTA


@pytest.mark.parametrize(
    ("status", "raw", "kind"),
    [
        pytest.param(429, AZURE_86400, ErrorKind.RATE_LIMIT, id="azure-86400-is-a-wait-not-quota"),
        pytest.param(429, OPENAI_RPM, ErrorKind.RATE_LIMIT, id="openai-rpm-mentions-billing"),
        pytest.param(429, GEMINI_PER_MINUTE, ErrorKind.RATE_LIMIT, id="gemini-per-minute-quota"),
        pytest.param(
            401, body({"error": {"message": "insufficient balance"}}), ErrorKind.AUTH, id="401-stays-auth"
        ),
        pytest.param(500, OPENAI_INSUFFICIENT_QUOTA, ErrorKind.SERVER_5XX, id="5xx-stays-5xx"),
        pytest.param(
            400,
            body({"error": {"message": "max_tokens 1008 too large"}}),
            ErrorKind.BAD_REQUEST,
            id="code-number-in-text-only",
        ),
    ],
)
def test_lookalikes_keep_their_kind(status: int, raw: bytes, kind: ErrorKind) -> None:
    assert classify_status(status, raw) is kind


def test_real_openrouter_upstream_429_stays_a_rate_limit(shared_payloads: Path) -> None:
    raw = (
        shared_payloads / "issue-pastes" / "open-webui-computer_issue293_openrouter_429_upstream.json"
    ).read_bytes()
    assert classify_status(429, raw) is ErrorKind.RATE_LIMIT
    assert not mentions_quota(raw.decode())
    # OpenRouter puts the same object in a 200 body too.
    assert classify_error_object(json.loads(raw)["error"]) is ErrorKind.RATE_LIMIT


@pytest.mark.parametrize(
    "error",
    [
        json.loads(OPENROUTER_402)["error"],
        json.loads(ZHIPU_1113_EN)["error"],
        {"code": "insufficient_quota", "message": "no credit"},
        {"code": 1008, "message": "insufficient balance"},
    ],
)
def test_error_objects_inside_a_200_body(error: dict[str, Any]) -> None:
    assert classify_error_object(error) is ErrorKind.QUOTA
    with pytest.raises(ErrorInBodyError) as info:
        parse_chat_completion(body({"error": error}), latency_ms=1, received_at=NOW)
    assert info.value.kind is ErrorKind.QUOTA


def test_minimax_native_envelope_in_a_200_body() -> None:
    with pytest.raises(ErrorInBodyError) as info:
        parse_chat_completion(MINIMAX_1008_NATIVE, latency_ms=1, received_at=NOW)
    assert info.value.kind is ErrorKind.QUOTA and "insufficient balance" in info.value.detail
    other = body({"choices": None, "base_resp": {"status_code": 1002, "status_msg": "rate limit"}})
    with pytest.raises(ErrorInBodyError) as info:
        parse_chat_completion(other, latency_ms=1, received_at=NOW)
    assert info.value.kind is ErrorKind.UNKNOWN


def test_tavily_statuses_through_the_search_classifier() -> None:
    assert search_failure_kind(432, TAVILY_432) is ErrorKind.QUOTA
    assert search_failure_kind(433, TAVILY_433) is ErrorKind.QUOTA
    assert (
        search_failure_kind(429, body({"detail": {"error": "Rate limit exceeded"}})) is ErrorKind.RATE_LIMIT
    )


def test_azure_wait_is_read_from_the_body_when_no_header() -> None:
    request = httpx.Request("POST", "https://x.openai.azure.com/chat/completions")
    without_header = httpx.Response(429, content=AZURE_86400, request=request)
    assert rate_limit_wait(without_header, NOW) == 86400.0
    with_header = httpx.Response(429, content=AZURE_86400, headers={"Retry-After": "7"}, request=request)
    assert rate_limit_wait(with_header, NOW) == 7.0  # the header wins
    assert rate_limit_wait(httpx.Response(429, content=OPENAI_RPM, request=request), NOW) is None
