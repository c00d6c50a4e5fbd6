"""LEAK_DETECTOR_PROMPT_FILE: the detector template as data — loading, refusals, rendering, the wire."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import httpx
import pytest

from oracleproto.errors import ConfigError
from oracleproto.primitives.clock import FakeClock
from oracleproto.primitives.hashing import sha256_16
from oracleproto.prompts.text_file import MAX_TEXT_FILE_BYTES
from oracleproto.providers.detector import LeakDetector, render_detector_prompt
from oracleproto.providers.detector_template import (
    BUILTIN_DETECTOR_PROMPT_HASH,
    DETECTOR_TEMPLATE,
    WHITELISTED_FIELDS,
    DetectorTemplate,
)
from oracleproto.providers.types import SearchResult
from oracleproto.settings.model import DetectorSettings, LLMSettings
from oracleproto.sim.personas import DETECTOR_SLUG
from oracleproto.sim.server import SimConfig, Simulator

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "detector-prompt.txt"
CUTOFF = date(2026, 2, 28)
RESULT = SearchResult(
    title="Harbour {{url}} report",
    url="https://example.org/harbour",
    content="The ferry resumed on 2026-04-02. {verdict}",
    raw_content=None,
    published_date="2026-04-03",
)
TEMPLATE = (
    'Cutoff {{cutoff_date}}. Reply {"verdict": "keep" or "drop"}.\n'
    "title: {{title}}\nurl: {{url}}\npublished_date: {{published_date}}\n"
    "content: {{content}}\nraw_content: {{raw_content}}\n"
)


def write(tmp_path: Path, content: str | bytes, name: str = "detector.txt") -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def refusal(path: Path) -> str:
    with pytest.raises(ConfigError) as refused:
        DetectorTemplate.from_file(path)
    return str(refused.value)


def test_the_built_in_template_renders_as_the_str_format_template_did() -> None:
    # The former template, spelled for str.format, is kept here as the regression reference.
    legacy = DETECTOR_TEMPLATE.replace("{{", "\0").replace("}}", "\1")
    legacy = legacy.replace("{", "{{").replace("}", "}}").replace("\0", "{").replace("\1", "}")
    fields = {
        "title": RESULT.title,
        "url": RESULT.url,
        "published_date": RESULT.published_date,
        "content": RESULT.content,
        "raw_content": "(not given)",
        "cutoff_date": CUTOFF.isoformat(),
    }
    assert render_detector_prompt(RESULT, CUTOFF) == legacy.format(**fields)
    assert sha256_16(legacy) == BUILTIN_DETECTOR_PROMPT_HASH == DetectorTemplate.builtin().fingerprint


def test_a_file_template_fills_the_six_fields_once_and_keeps_other_braces(tmp_path: Path) -> None:
    template = DetectorTemplate.from_file(write(tmp_path, TEMPLATE))
    prompt = template.render(RESULT, CUTOFF)
    assert prompt == (
        'Cutoff 2026-02-28. Reply {"verdict": "keep" or "drop"}.\n'
        "title: Harbour {{url}} report\nurl: https://example.org/harbour\npublished_date: 2026-04-03\n"
        "content: The ferry resumed on 2026-04-02. {verdict}\nraw_content: (not given)\n"
    )
    assert template.fingerprint == sha256_16(TEMPLATE)
    assert not template.is_builtin


def test_a_file_holding_the_built_in_text_is_the_built_in_template(tmp_path: Path) -> None:
    template = DetectorTemplate.from_file(write(tmp_path, DETECTOR_TEMPLATE))
    assert template.is_builtin and template.fingerprint == BUILTIN_DETECTOR_PROMPT_HASH


def test_settings_without_a_file_give_the_built_in_template(tmp_path: Path) -> None:
    assert DetectorTemplate.from_settings(DetectorSettings.from_values({})).is_builtin
    path = write(tmp_path, TEMPLATE)
    assert (
        DetectorTemplate.from_settings(DetectorSettings.from_values({"prompt_file": path})).text == TEMPLATE
    )


def test_the_shipped_example_loads_and_renders() -> None:
    template = DetectorTemplate.from_file(EXAMPLE)
    prompt = template.render(RESULT, CUTOFF)
    assert "{{" not in prompt.replace(RESULT.title, "")
    assert prompt.count("2026-02-28") >= 2
    for value in (RESULT.url, RESULT.content, RESULT.published_date):
        assert value is not None and value in prompt
    for word in ("question", "answer", "option"):  # a temporal auditor, not an answer auditor
        assert word not in template.text.lower()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "the template is empty"),
        (
            "Cutoff {{cutoff_date}}; the query was {{query}}; page {{content}}",
            "unknown placeholder {{query}} (line 1)",
        ),
        ("{{cutoff_date}}\n{{content}}\n{{score}}", "unknown placeholder {{score}} (line 3)"),
        ("Cutoff {cutoff_date}; page {{content}}", "no {{cutoff_date}}: the detector cannot judge leakage"),
        ("Cutoff {{cutoff_date}} and nothing else", "no page field: the detector would judge nothing"),
    ],
    ids=["empty", "query", "score", "single-braces", "no-page"],
)
def test_an_unusable_template_is_refused_by_name(tmp_path: Path, content: str, message: str) -> None:
    path = write(tmp_path, content)
    text = refusal(path)
    assert f"LEAK_DETECTOR_PROMPT_FILE {path} is not a usable detector prompt template" in text
    assert message in text


def test_unknown_placeholders_name_the_allowed_ones(tmp_path: Path) -> None:
    text = refusal(write(tmp_path, "{{cutoff_date}} {{content}} {{question}}"))
    allowed = ", ".join("{{" + name + "}}" for name in WHITELISTED_FIELDS)
    assert f"the allowed placeholders are {allowed}" in text


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "no such file; check the path, or unset LEAK_DETECTOR_PROMPT_FILE"),
        ("directory", "is a directory; point LEAK_DETECTOR_PROMPT_FILE at a file"),
        ("not-utf8", "not UTF-8 text: byte 0xff at offset 5 (line 1); re-save the file as UTF-8"),
        ("too-big", f"more than the {MAX_TEXT_FILE_BYTES} bytes allowed"),
    ],
)
def test_a_file_that_cannot_be_read_is_refused(tmp_path: Path, setup: str, message: str) -> None:
    path = tmp_path / "detector.txt"
    if setup == "directory":
        path.mkdir()
    elif setup == "not-utf8":
        path.write_bytes(b"abcde\xff {{cutoff_date}}")
    elif setup == "too-big":
        path.write_bytes(b"x" * (MAX_TEXT_FILE_BYTES + 1))
    text = refusal(path)
    assert f"LEAK_DETECTOR_PROMPT_FILE {path}" in text
    assert message in text


async def test_the_detector_request_carries_the_files_text_to_the_simulator(tmp_path: Path) -> None:
    sent: list[dict[str, object]] = []

    async def capture(request: httpx.Request) -> None:
        sent.append(json.loads(request.content))

    path = write(tmp_path, TEMPLATE)
    with Simulator(SimConfig(seed=0)) as sim:
        llm = LLMSettings.from_values({"base_url": sim.llm_base_url, "api_key": "sim-llm-key-0001"})
        settings = DetectorSettings.from_values({"model": DETECTOR_SLUG, "prompt_file": path})
        async with httpx.AsyncClient(event_hooks={"request": [capture]}) as http:
            verdict = await LeakDetector(http, settings, llm, FakeClock()).judge(RESULT, CUTOFF)
            explicit = DetectorTemplate.builtin()
            builtin = await LeakDetector(http, settings, llm, FakeClock(), template=explicit).judge(
                RESULT, CUTOFF
            )
    # The simulator reads the fields from the file's wording and drops the page published after the cutoff.
    assert verdict.label == "drop" and builtin.label == "drop"
    assert [body["messages"] for body in sent] == [
        [{"role": "user", "content": DetectorTemplate(TEMPLATE).render(RESULT, CUTOFF)}],
        [{"role": "user", "content": render_detector_prompt(RESULT, CUTOFF)}],
    ]
