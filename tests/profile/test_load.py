"""Harness profiles: the two shared instances load and mean what they say; the built-in one is today's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from oracleproto.errors import ConfigError
from oracleproto.profile import (
    builtin_profile,
    builtin_profile_data,
    export_text,
    load_profile,
    parse_profile_text,
    profile_fingerprint,
    profile_from_data,
    profile_to_data,
)

pytestmark = pytest.mark.shared


def _fixture(earlier_harness: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((earlier_harness / f"{name}.profile.json").read_text(encoding="utf-8"))
    return data


def test_both_shared_profiles_load(earlier_harness: Path) -> None:
    earlier = load_profile(earlier_harness / "earlier-harness.profile.json")
    current = load_profile(earlier_harness / "oracleproto-current.profile.json")
    assert earlier.name == "earlier-harness"
    assert earlier.injection_policy == "earlier"
    assert earlier.request_sharing == "none"
    assert earlier.search_request.api_key_in == "body"
    assert earlier.search_request.include_raw_content_value == "markdown"
    assert earlier.llm_request.assistant_echo.mode == "declared_order"
    assert earlier.llm_request.assistant_echo.declared_key_orders["tool_call"] == ("id", "function", "type")
    assert [b.name for b in earlier.protocols.blocks] == ["budget", "reflection", "belief"]
    assert earlier.protocols.blocks[0].separator == "\n\n---\n"
    assert earlier.protocols.blocks[1].separator is None
    assert earlier.protocols.blocks[1].terminator == "\n"
    assert earlier.tool_result.failure_payload[2].is_json
    assert earlier.tool_result.failure_payload[2].json_value == []
    assert current.injection_policy == "oracleproto"
    assert current.request_sharing == "identical_search_and_detector"
    assert profile_fingerprint(earlier) != profile_fingerprint(current)


def test_the_current_instance_is_the_builtin_profile_but_for_the_tool_name_spelling(
    earlier_harness: Path,
) -> None:
    """oracleproto-current.profile.json was written from our source; its one note-worthy difference is
    the tool name, which the built-in profile writes as Python's repr() (the extension key)."""
    data = _fixture(earlier_harness, "oracleproto-current")
    assert profile_fingerprint(profile_from_data(data, source="x")) != profile_fingerprint(builtin_profile())
    data["tool_calls"]["tool_name_format"] = "python_repr"
    for entry in data["tool_calls"]["errors"].values():
        entry["message"] = entry["message"].replace("'{{tool_name}}'", "{{tool_name}}")
    assert profile_fingerprint(profile_from_data(data, source="x")) == profile_fingerprint(builtin_profile())


def test_fingerprint_ignores_descriptive_keys_and_follows_every_byte() -> None:
    data = builtin_profile_data()
    base = profile_fingerprint(profile_from_data(data, source="x"))
    data["name"], data["description"], data["notes"] = "renamed", "other words", ["a note"]
    assert profile_fingerprint(profile_from_data(data, source="x")) == base
    changed = builtin_profile_data()
    changed["truncation"]["marker"] += " "
    assert profile_fingerprint(profile_from_data(changed, source="x")) != base
    # Key order of the tool schema reaches the wire, so it is part of the fingerprint.
    reordered = builtin_profile_data()
    schema = reordered["llm_request"]["tool_schema"]
    reordered["llm_request"]["tool_schema"] = {"function": schema["function"], "type": schema["type"]}
    assert profile_fingerprint(profile_from_data(reordered, source="x")) != base


def test_export_round_trips(earlier_harness: Path) -> None:
    for name in ("earlier-harness", "oracleproto-current"):
        profile = load_profile(earlier_harness / f"{name}.profile.json")
        again = parse_profile_text(export_text(profile), source="export")
        assert profile_to_data(again) == profile_to_data(profile)
        assert profile_fingerprint(again) == profile_fingerprint(profile)
    assert load_profile(Path("builtin")) is builtin_profile()


def _problems(data: Any) -> str:
    with pytest.raises(ConfigError) as info:
        profile_from_data(data, source="p.json")
    return str(info.value)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda d: d.update(extra=1), "extra: unknown key"),
        (
            lambda d: d["texts"].update(status_header="{{step}} {{bogus}}"),
            "texts.status_header: unknown placeholder {{bogus}}",
        ),
        (
            lambda d: d.update(injection_policy="later"),
            "injection_policy: must be one of 'earlier', 'oracleproto'",
        ),
        (lambda d: d["tool_calls"]["checks"].append("telepathy"), "tool_calls.checks[6]: must be one of"),
        (lambda d: d["tool_calls"]["errors"].pop("bad_json"), "tool_calls.errors.bad_json: missing"),
        (
            lambda d: d["truncation"].update(marker="{{max_chars}} {{step}}"),
            "truncation.marker: unknown placeholder {{step}}",
        ),
        (
            lambda d: d["detector"].update(template="no cutoff {{title}}"),
            "detector.template: has no {{cutoff_date}}",
        ),
        (
            lambda d: d["request_json"]["llm"].update(item_separator=";"),
            "request_json.llm.item_separator: must be ','",
        ),
        (lambda d: d.update(profile_version=2), "profile_version: must be 1"),
        (lambda d: d.update(profile_version=True), "profile_version: must be 1"),
        (
            lambda d: d["search_request"].update(include_raw_content_value=1),
            "include_raw_content_value: must be one of",
        ),
        (
            lambda d: d["llm_request"]["tool_schema"]["function"]["parameters"]["properties"].update(
                end_date={}
            ),
            "must declare exactly one property, 'query'",
        ),
        (
            lambda d: d["texts"]["injections"].update(hard_cutoff=None),
            "texts.injections.hard_cutoff: is null",
        ),
        (
            lambda d: d["tool_calls"]["error_payload"].append({"key": "s", "text": "{{tool_error_status}}"}),
            "uses {{tool_error_status}}, but texts.tool_error_status is null",
        ),
        (
            lambda d: d["protocols"]["blocks"].append({"name": "budget", "text": "x"}),
            "'budget' is listed twice",
        ),
        (
            lambda d: d["prompt"].update(outcome_line="{{letter}}) {{option}}"),
            "prompt.outcome_line: unknown placeholder {{option}}",
        ),
        (
            lambda d: d["tool_calls"].update(tool_name_format="quoted"),
            "tool_calls.tool_name_format: must be one of",
        ),
        (
            lambda d: d["llm_request"]["assistant_echo"].update(mode="declared_order"),
            "declared_key_orders: missing",
        ),
    ],
)
def test_invalid_profiles_name_the_key_path(edit: Any, expected: str) -> None:
    data = builtin_profile_data()
    edit(data)
    message = _problems(data)
    assert expected in message
    assert message.startswith("p.json is not a valid harness profile:")


def test_every_problem_is_listed_at_once() -> None:
    data = builtin_profile_data()
    data["injection_policy"] = "x"
    data["request_sharing"] = "all"
    data["fingerprints"]["budget_block"] = "maybe"
    message = _problems(data)
    assert (
        "injection_policy" in message
        and "request_sharing" in message
        and "fingerprints.budget_block" in message
    )


def test_a_missing_key_is_reported_once_and_a_null_one_as_null() -> None:
    data = builtin_profile_data()
    del data["texts"]
    del data["llm_request"]["key_order"]
    data["prompt"] = None
    lines = _problems(data).splitlines()
    missing = "missing; add it (see docs/harness-profile.md)"
    assert [line for line in lines if "texts" in line] == [f"  - texts: {missing}"]
    assert [line for line in lines if "key_order" in line] == [f"  - llm_request.key_order: {missing}"]
    assert "  - prompt: must be an object, got null" in lines


def test_spaced_braces_are_literal_text() -> None:
    """Only ``{{name}}`` with a-z and _ is a placeholder: other brace runs are text (schema §1)."""
    data = builtin_profile_data()
    data["texts"]["status_header"] = "{{ step }} {{Step}} {x} \\boxed{...} %s {{step}}"
    profile = profile_from_data(data, source="x")
    assert profile.texts.status_header.startswith("{{ step }}")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{", "not valid JSON"),
        ('{"name": 1, "name": 2}', "the key 'name' appears twice"),
        ("[1]", "<top level>: must be an object, got an array"),
        ("[" * 100_000, "nested too deeply"),
        ('{"profile_version": NaN}', "NaN is not a JSON number"),
        ('{"profile_version": -Infinity}', "-Infinity is not a JSON number"),
        ('{"profile_version": 1e999}', "1e999 is not a JSON number"),
        ('{"profile_version": 1' + "0" * 5000 + "}", "a number has more than 4300 digits"),
        ('{"name": "a\\ud800"}', "name: holds an escaped lone surrogate"),
        ('{"texts": {"\\udfff": "x"}}', "texts.\\udfff: holds an escaped lone surrogate"),
        ('{"notes": ["ok", "\\udc00"]}', "notes[1]: holds an escaped lone surrogate"),
        ('{"a": ' + "[" * 900 + "0" + "]" * 900 + "}", "unknown key"),
        ('{"a": ' + "[" * 980 + '"\\ud800"' + "]" * 980 + "}", "nested too deeply"),
    ],
)
def test_bad_files_are_refused_with_a_message(text: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=r"profile\.json"):
        parse_profile_text(text, source="profile.json")
    with pytest.raises(ConfigError) as info:
        parse_profile_text(text, source="profile.json")
    assert expected in str(info.value)


def test_missing_file_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"HARNESS_PROFILE .*: no such file"):
        load_profile(tmp_path / "absent.json")
