"""Validate parsed profile data into a :class:`HarnessProfile`, listing every problem with its path."""

from __future__ import annotations

from typing import Any

from oracleproto.errors import ConfigError
from oracleproto.profile import vocabulary as v
from oracleproto.profile.model import HarnessProfile
from oracleproto.profile.parse_calls import (
    read_detector,
    read_fingerprints,
    read_search_request,
    read_tool_calls,
    read_tool_result,
    read_truncation,
)
from oracleproto.profile.parse_texts import (
    read_llm_request,
    read_prompt,
    read_protocols,
    read_request_json,
    read_texts,
)
from oracleproto.profile.placeholders import uses
from oracleproto.profile.reader import Reader, json_type

_FIX = "see docs/harness-profile.md, or start from `oracleproto profile export builtin`"


def profile_from_data(data: Any, *, source: str) -> HarnessProfile:
    """The profile ``data`` describes; a ConfigError naming ``source`` and every problem otherwise."""
    r = Reader()
    profile = _read(r, data)
    if r.problems or profile is None:
        listed = "\n".join(f"  - {problem}" for problem in r.problems)
        raise ConfigError(f"{source} is not a valid harness profile:\n{listed}\nFix the listed keys; {_FIX}")
    return profile


def _read(r: Reader, data: Any) -> HarnessProfile | None:
    top = r.obj("", data, v.TOP_KEYS, v.OPTIONAL_TOP_KEYS)
    if top is None:
        return None
    version = top.get("profile_version")
    if "profile_version" in top and (type(version) is not int or version != v.PROFILE_VERSION):
        r.problem(
            "profile_version",
            f"must be {v.PROFILE_VERSION} (the schema this oracleproto reads), "
            f"got {json_type(version)} {version!r}",
        )
    name = r.string("name", top.get("name"))
    description = r.string("description", top.get("description"))
    notes = r.strings("notes", top["notes"]) if "notes" in top else ()
    policy = r.choice("injection_policy", top.get("injection_policy"), v.POLICIES)
    sections = {
        "request_json": read_request_json(r, top.get("request_json")),
        "llm_request": read_llm_request(r, top.get("llm_request")),
        "prompt": read_prompt(r, top.get("prompt")),
        "protocols": read_protocols(r, top.get("protocols")),
        "texts": read_texts(r, top.get("texts"), policy),
        "tool_calls": read_tool_calls(r, top.get("tool_calls")),
        "tool_result": read_tool_result(r, top.get("tool_result")),
        "truncation": read_truncation(r, top.get("truncation")),
        "detector": read_detector(r, top.get("detector")),
        "search_request": read_search_request(r, top.get("search_request")),
        "fingerprints": read_fingerprints(r, top.get("fingerprints")),
    }
    sharing = r.choice("request_sharing", top.get("request_sharing"), v.SHARING)
    if (
        r.problems
        or name is None
        or description is None
        or notes is None
        or policy is None
        or sharing is None
    ):
        return None
    profile = HarnessProfile(
        profile_version=v.PROFILE_VERSION,
        name=name,
        description=description,
        notes=notes,
        injection_policy=policy,  # type: ignore[arg-type]
        request_sharing=sharing,  # type: ignore[arg-type]
        **sections,  # type: ignore[arg-type]
    )
    _cross_checks(r, profile)
    return profile


def _cross_checks(r: Reader, profile: HarnessProfile) -> None:
    """Rules that tie two sections together."""
    if profile.texts.tool_error_status is None:
        for index, entry in enumerate(profile.tool_calls.error_payload):
            if uses(entry.text, "tool_error_status"):
                r.problem(
                    f"tool_calls.error_payload[{index}].text",
                    "uses {{tool_error_status}}, but texts.tool_error_status is null; write that text",
                )
