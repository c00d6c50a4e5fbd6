"""The leak detector's request from a harness profile (§8, §11): prompt, missing texts, marker, body.

Cross-checked with the earlier harness's capture: every detector request it sent is rendered again
from the captured search results, byte for byte.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import AsyncIterator
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest

from oracleproto.primitives.clock import FakeClock
from oracleproto.primitives.hashing import sha256_16
from oracleproto.profile import builtin_profile
from oracleproto.profile.builtin import DETECTOR_TEMPLATE
from oracleproto.profile.model import HarnessProfile, MissingText
from oracleproto.profile.placeholders import format_spelling
from oracleproto.providers.detector import LeakDetector
from oracleproto.providers.detector_template import BUILTIN_DETECTOR_PROMPT_HASH, DetectorTemplate
from oracleproto.providers.search_results import parse_results
from oracleproto.providers.types import SearchResult
from oracleproto.settings.model import DetectorSettings, LLMSettings
from oracleproto.sim.loopback import LoopbackServer
from tests.providers.earlier import CAPTURE_FILES, DETECTOR_MODEL, capture, current_profile, earlier_profile
from tests.providers.scripted import Script, chat_body, json_response

CUTOFF = date(2026, 2, 28)
HOSTILE = '\x00"\\\u2028é\U0001f600\ud800 {{url}} {cutoff_date}'
TEMPLATE = (
    "Cutoff {{cutoff_date}}.\nt={{title}}|u={{url}}|p={{published_date}}|c={{content}}|r={{raw_content}}"
)


def result(**kw: Any) -> SearchResult:
    fields: dict[str, Any] = {
        "title": "T",
        "url": "U",
        "content": "C",
        "raw_content": "R",
        "published_date": "P",
    }
    fields.update(kw)
    return SearchResult(**fields)


def detector_settings(**kw: Any) -> DetectorSettings:
    return DetectorSettings(_env_file=None, model=DETECTOR_MODEL, **kw)  # type: ignore[call-arg]


def with_template(profile: HarnessProfile, **detector: Any) -> HarnessProfile:
    spec = dataclasses.replace(profile.detector, template=TEMPLATE, **detector)
    return dataclasses.replace(profile, detector=spec)


def test_builtin_template_keeps_its_single_source_and_fingerprint() -> None:
    builtin = DetectorTemplate.builtin()
    assert builtin.text is DETECTOR_TEMPLATE and builtin.fingerprint == BUILTIN_DETECTOR_PROMPT_HASH
    # Built from the profile, or from its bare text (the prompt-file rule): the same template.
    assert DetectorTemplate(DETECTOR_TEMPLATE) == builtin == DetectorTemplate.from_profile(current_profile())
    assert sha256_16(format_spelling(DETECTOR_TEMPLATE)) == BUILTIN_DETECTOR_PROMPT_HASH


def test_profile_templates_are_fingerprinted_as_the_profile_says() -> None:
    earlier = earlier_profile()
    template = earlier.detector.template
    assert DetectorTemplate.from_profile(earlier).fingerprint == sha256_16(format_spelling(template))
    as_written = dataclasses.replace(
        earlier, fingerprints=dataclasses.replace(earlier.fingerprints, detector_template="template_text")
    )
    assert DetectorTemplate.from_profile(as_written).fingerprint == sha256_16(template)
    assert sha256_16(template) != sha256_16(format_spelling(template))


def test_prompt_file_replaces_only_the_text_and_keeps_its_own_fingerprint(tmp_path: Path) -> None:
    path = tmp_path / "detector.txt"
    path.write_text(TEMPLATE, encoding="utf-8")
    template = DetectorTemplate.from_settings(detector_settings(prompt_file=path), earlier_profile())
    assert template.text == TEMPLATE and template.fingerprint == sha256_16(TEMPLATE)
    # The earlier profile's missing texts and marker rule still apply to the file's text.
    prompt = template.render(result(published_date=None, raw_content="", truncation_marker="<m>"), CUTOFF)
    assert prompt.endswith("|p=(unknown)|c=C|r=(empty)")
    prompt = template.render(result(raw_content="R", truncation_marker="<m>"), CUTOFF)
    assert prompt.endswith("|r=R<m>")
    path.write_text(DETECTOR_TEMPLATE, encoding="utf-8")
    assert (
        DetectorTemplate.from_file(path, profile=earlier_profile()).fingerprint
        == BUILTIN_DETECTOR_PROMPT_HASH
    )


@pytest.mark.parametrize(
    ("published", "body", "expected"),
    [
        (None, None, "p=(not given)|c=C|r=(not given)"),
        ("", "", "p=(not given)|c=C|r="),
        ("2026-01-01", "R", "p=2026-01-01|c=C|r=R"),
    ],
)
def test_builtin_missing_texts(published: str | None, body: str | None, expected: str) -> None:
    template = DetectorTemplate.from_profile(with_template(builtin_profile()))
    rendered = template.render(
        result(published_date=published, raw_content=body, truncation_marker=""), CUTOFF
    )
    assert rendered.endswith(expected)


def test_fields_without_a_missing_rule_are_used_as_they_are() -> None:
    profile = with_template(builtin_profile(), missing={"title": MissingText("(no title)", "absent_or_null")})
    template = DetectorTemplate.from_profile(profile)
    rendered = template.render(result(title="", published_date=None, raw_content=None), CUTOFF)
    assert rendered.endswith("t=|u=U|p=|c=C|r=")
    assert template.render(result(title=None), CUTOFF).startswith("Cutoff 2026-02-28.\nt=(no title)|")


@pytest.mark.parametrize("empty_is_absent", [True, False])
def test_an_empty_body_is_missing_under_absent_or_null_when_the_profile_counts_it_absent(
    empty_is_absent: bool, tmp_path: Path
) -> None:
    # §7: with raw_content_empty_is_absent, "" counts as absent, so §8's absent_or_null rule applies.
    profile = with_template(
        builtin_profile(), missing={"raw_content": MissingText("(none)", "absent_or_null")}
    )
    tool_result = dataclasses.replace(profile.tool_result, raw_content_empty_is_absent=empty_is_absent)
    profile = dataclasses.replace(profile, tool_result=tool_result)
    expected = "|r=(none)" if empty_is_absent else "|r="
    assert DetectorTemplate.from_profile(profile).render(result(raw_content=""), CUTOFF).endswith(expected)
    prompt_file = tmp_path / "prompt.txt"
    prompt_file.write_text(TEMPLATE, encoding="utf-8")
    from_file = DetectorTemplate.from_file(prompt_file, profile=profile)
    assert from_file.render(result(raw_content=""), CUTOFF).endswith(expected)
    assert from_file.render(result(raw_content=None), CUTOFF).endswith("|r=(none)")


def test_marker_shown_to_the_detector_only_when_the_profile_says_so() -> None:
    cut = result(raw_content="R", truncation_marker="\n[cut]")
    assert (
        DetectorTemplate.from_profile(with_template(builtin_profile())).render(cut, CUTOFF).endswith("|r=R")
    )
    assert (
        DetectorTemplate.from_profile(with_template(earlier_profile()))
        .render(cut, CUTOFF)
        .endswith("|r=R\n[cut]")
    )


def test_untrusted_page_text_is_filled_once_and_encodes() -> None:
    template = DetectorTemplate.from_profile(with_template(earlier_profile()))
    hostile = result(title=HOSTILE, url=HOSTILE, content=HOSTILE, raw_content=HOSTILE, published_date=HOSTILE)
    rendered = template.render(hostile, CUTOFF)
    assert rendered.count(HOSTILE) == 5 and "{{url}}" in rendered
    body = {"messages": [{"role": "user", "content": rendered}]}
    assert json.loads(earlier_profile().request_json.detector.encode(body).decode("utf-8")) == body


def make(
    http: httpx.AsyncClient, base_url: str, profile: HarnessProfile | None = None, **kw: Any
) -> LeakDetector:
    llm = LLMSettings(_env_file=None)  # type: ignore[call-arg]
    settings = detector_settings(base_url=base_url, api_key="sk-det-fake-0001", **kw)
    return LeakDetector(http, settings, llm, FakeClock(), profile=profile)


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


async def test_builtin_detector_body_is_what_httpx_json_wrote(http: httpx.AsyncClient) -> None:
    detector = make(http, "http://127.0.0.1:9")
    page = result(title='é\U0001f600\u2028\x00"', raw_content=None, published_date=None)
    body = detector.build_body(page, CUTOFF)
    assert list(body) == ["model", "messages", "temperature", "max_tokens"]
    legacy = {
        "model": DETECTOR_MODEL,
        "messages": [{"role": "user", "content": DetectorTemplate.builtin().render(page, CUTOFF)}],
        "temperature": 0.0,
        "max_tokens": 512,
    }
    assert detector.encode_body(body) == httpx.Request("POST", "http://127.0.0.1/", json=legacy).content
    # A lone surrogate (httpx's json= could not encode it at all) travels as its escape.
    assert b"\\ud800" in detector.encode_body(detector.build_body(result(title=HOSTILE), CUTOFF))


async def test_earlier_detector_body_orders_and_serialises_as_its_sdk(http: httpx.AsyncClient) -> None:
    detector = make(http, "http://127.0.0.1:9", earlier_profile())
    body = detector.build_body(result(), CUTOFF)
    assert list(body) == ["model", "messages", "max_tokens", "temperature"]
    assert detector.encode_body(body).endswith(b'"}],"max_tokens":512,"temperature":0.0}')


async def test_the_detector_posts_the_profile_bytes(http: httpx.AsyncClient) -> None:
    reply = json_response(chat_body('{"verdict": "keep", "reason": "ok"}'))
    script = Script(reply)
    with LoopbackServer(script) as server:
        detector = make(http, server.base_url, earlier_profile())
        verdict = await detector.judge(result(title=HOSTILE), CUTOFF)
    assert verdict.label == "keep"
    request = script.requests[0]
    assert request.headers["content-type"] == "application/json"
    assert request.body == detector.encode_body(detector.build_body(result(title=HOSTILE), CUTOFF))


@pytest.mark.shared
@pytest.mark.parametrize("name", CAPTURE_FILES)
async def test_earlier_profile_renders_every_captured_detector_request(
    http: httpx.AsyncClient, name: str
) -> None:
    profile = earlier_profile()
    detector = make(http, "http://127.0.0.1:9", profile)
    exchanges = capture(name)
    # Every result of every captured search, rendered as the earlier harness's detector request.
    rendered: Counter[bytes] = Counter()
    for exchange in exchanges:
        if exchange.is_search:
            cutoff = date.fromisoformat(exchange.request_json["end_date"])
            for item in parse_results(exchange.response_json, 8000, profile.truncation):
                rendered[detector.encode_body(detector.build_body(item, cutoff))] += 1
    sent = [exchange.body for exchange in exchanges if exchange.is_detector]
    assert len(sent) >= 100
    missing = [body[:200] for body in sent if body not in rendered]
    assert not missing, missing[:2]
    # The prompts cover results without a published date (the profile's "(unknown)").
    assert any(b"published_date: (unknown)" in body for body in sent)
