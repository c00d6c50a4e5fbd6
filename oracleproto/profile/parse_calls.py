"""Read the tool-call, result, detector, search and fingerprint sections of a profile (§6–§11)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from oracleproto.profile import vocabulary as v
from oracleproto.profile.model import (
    DetectorSpec,
    ErrorText,
    Fingerprints,
    MissingText,
    PayloadEntry,
    SearchRequest,
    ToolCalls,
    ToolResult,
    Truncation,
)
from oracleproto.profile.placeholders import uses
from oracleproto.profile.reader import Reader, json_type


def read_tool_calls(r: Reader, value: Any) -> ToolCalls | None:
    """``tool_calls``: the checks in order, their errors and the error payload."""
    keys = ("checks", "blank_arguments_are_empty", "query_whitespace", "errors", "error_payload")
    data = r.obj("tool_calls", value, keys, ("tool_name_format",))
    if data is None:
        return None
    checks = r.names("tool_calls.checks", data.get("checks"), v.CHECKS)
    if checks is not None and "query" not in checks:
        # Without it a call with no usable query would reach the search (extension of §6).
        r.problem("tool_calls.checks", "must list 'query': a search needs a query")
    blank = r.boolean("tool_calls.blank_arguments_are_empty", data.get("blank_arguments_are_empty"))
    whitespace = r.choice("tool_calls.query_whitespace", data.get("query_whitespace"), ("keep", "strip"))
    errors = _errors(r, data.get("errors"), checks or ())
    payload = read_payload(r, "tool_calls.error_payload", data.get("error_payload"), v.P_ERROR_PAYLOAD)
    name_format = "as_sent"
    if "tool_name_format" in data:
        name_format = (
            r.choice("tool_calls.tool_name_format", data["tool_name_format"], v.TOOL_NAME_FORMATS) or ""
        )
    if None in (checks, blank, whitespace, errors, payload) or not name_format:
        return None
    assert checks is not None and blank is not None and errors is not None and payload is not None
    return ToolCalls(checks, blank, whitespace, errors, payload, name_format)  # type: ignore[arg-type]


def _errors(r: Reader, value: Any, checks: Sequence[str]) -> dict[str, ErrorText] | None:
    data = r.obj("tool_calls.errors", value, (), v.ERROR_KINDS)
    if data is None:
        return None
    errors: dict[str, ErrorText] = {}
    for kind, item in data.items():
        if kind not in v.ERROR_KINDS:
            continue
        path = f"tool_calls.errors.{kind}"
        entry = r.obj(path, item, ("code", "message"))
        if entry is None:
            continue
        code = entry.get("code")
        if code is not None and not isinstance(code, str):
            r.problem(f"{path}.code", f"must be a string or null, got {json_type(code)}")
            continue
        message = r.text(f"{path}.message", entry.get("message"), v.P_ERROR_MESSAGE)
        if message is not None:
            errors[kind] = ErrorText(code, message)
    for check in checks:
        for kind in v.CHECK_ERRORS[check]:
            if kind not in data:
                r.problem(f"tool_calls.errors.{kind}", f"missing; the {check!r} check can fail with it")
    return errors


def read_payload(r: Reader, path: str, value: Any, allowed: Sequence[str]) -> tuple[PayloadEntry, ...] | None:
    """An ordered payload: ``{key, text}`` or ``{key, json}`` entries with distinct keys."""
    if not isinstance(value, list):
        r.problem(path, f"must be an array of {{key, text}} or {{key, json}} objects, got {json_type(value)}")
        return None
    entries: list[PayloadEntry] = []
    for index, item in enumerate(value):
        where = f"{path}[{index}]"
        if not isinstance(item, dict):
            r.problem(where, f"must be an object, got {json_type(item)}")
            continue
        literal = "json" in item
        data = r.obj(where, item, ("key", "json" if literal else "text"))
        if data is None:
            continue
        key = r.string(f"{where}.key", data.get("key"))
        if key is None:
            continue
        if any(e.key == key for e in entries):
            r.problem(f"{where}.key", f"{key!r} is used twice; a payload key appears once")
            continue
        if literal:
            entries.append(PayloadEntry(key, json_value=copy.deepcopy(data["json"]), is_json=True))
            continue
        text = r.text(f"{where}.text", data.get("text"), allowed)
        if text is not None:
            entries.append(PayloadEntry(key, text=text))
    return tuple(entries) if len(entries) == len(value) else None


def read_tool_result(r: Reader, value: Any) -> ToolResult | None:
    """``tool_result``: payload members, result members, absent fields and the failure payload."""
    keys = ("payload_keys", "result_keys", "absent_field", "raw_content_empty_is_absent", "failure_payload")
    data = r.obj("tool_result", value, keys)
    if data is None:
        return None
    payload_keys = r.names("tool_result.payload_keys", data.get("payload_keys"), v.PAYLOAD_KEYS)
    result_keys = r.names("tool_result.result_keys", data.get("result_keys"), v.RESULT_KEYS)
    absent = r.choice("tool_result.absent_field", data.get("absent_field"), ("omit", "null"))
    empty = r.boolean("tool_result.raw_content_empty_is_absent", data.get("raw_content_empty_is_absent"))
    failure = read_payload(r, "tool_result.failure_payload", data.get("failure_payload"), v.P_FAILURE_PAYLOAD)
    if payload_keys is None or result_keys is None or absent is None or empty is None or failure is None:
        return None
    return ToolResult(payload_keys, result_keys, absent, empty, failure)  # type: ignore[arg-type]


def read_truncation(r: Reader, value: Any) -> Truncation | None:
    """``truncation``: which fields are cut, the marker, and whether the detector sees it."""
    data = r.obj("truncation", value, ("fields", "marker", "detector_sees_marker"))
    if data is None:
        return None
    fields = r.names("truncation.fields", data.get("fields"), v.TRUNCATABLE)
    marker = r.text("truncation.marker", data.get("marker"), v.P_MARKER)
    sees = r.boolean("truncation.detector_sees_marker", data.get("detector_sees_marker"))
    if fields is None or marker is None or sees is None:
        return None
    return Truncation(fields, marker, sees)


def read_detector(r: Reader, value: Any) -> DetectorSpec | None:
    """``detector``: body key order, the prompt template and the missing-field texts."""
    data = r.obj("detector", value, ("key_order", "template", "missing"))
    if data is None:
        return None
    order = r.names("detector.key_order", data.get("key_order"), v.DETECTOR_BODY_KEYS)
    if order is not None and len(order) != len(v.DETECTOR_BODY_KEYS):
        absent = [k for k in v.DETECTOR_BODY_KEYS if k not in order]
        r.problem("detector.key_order", f"must list every body key; add {', '.join(map(repr, absent))}")
        order = None
    template = r.text("detector.template", data.get("template"), v.P_DETECTOR)
    if template is not None and not uses(template, "cutoff_date"):
        r.problem("detector.template", "has no {{cutoff_date}}: the detector cannot judge leakage without it")
    if template is not None and not any(uses(template, name) for name in v.DETECTOR_FIELDS):
        r.problem(
            "detector.template", "has no page field ({{title}}, {{url}}, {{content}}, …): it judges nothing"
        )
    missing = _missing(r, data.get("missing"))
    if order is None or template is None or missing is None:
        return None
    return DetectorSpec(order, template, missing)


def _missing(r: Reader, value: Any) -> dict[str, MissingText] | None:
    data = r.obj("detector.missing", value, (), v.DETECTOR_FIELDS)
    if data is None:
        return None
    out: dict[str, MissingText] = {}
    for field, item in data.items():
        if field not in v.DETECTOR_FIELDS:
            continue
        path = f"detector.missing.{field}"
        entry = r.obj(path, item, ("text", "when"))
        if entry is None:
            continue
        text = r.text(f"{path}.text", entry.get("text"), ())
        when = r.choice(f"{path}.when", entry.get("when"), v.MISSING_WHEN)
        if text is not None and when is not None:
            out[field] = MissingText(text, when)  # type: ignore[arg-type]
    known = [key for key in data if key in v.DETECTOR_FIELDS]
    return out if len(out) == len(known) else None


def read_search_request(r: Reader, value: Any) -> SearchRequest | None:
    """``search_request``: where the key goes, body key order and the include_* values."""
    keys = (
        "api_key_in",
        "key_order",
        "include_raw_content_value",
        "include_answer_value",
        "include_answer_when_off",
    )
    data = r.obj("search_request", value, keys)
    if data is None:
        return None
    key_in = r.choice("search_request.api_key_in", data.get("api_key_in"), ("body", "header"))
    order = r.names("search_request.key_order", data.get("key_order"), v.SEARCH_BODY_KEYS)
    if order is not None and key_in is not None:
        needed = [k for k in v.SEARCH_BODY_KEYS if k != "api_key" or key_in == "body"]
        absent = [k for k in needed if k not in order]
        if absent:
            r.problem("search_request.key_order", f"must list every member that can be sent; add {absent}")
            order = None
        if "api_key" in (order or ()) and key_in == "header":
            r.problem("search_request.key_order", "lists 'api_key', but api_key_in is 'header'")
            order = None
    raw_value = _literal(
        r,
        "search_request.include_raw_content_value",
        data.get("include_raw_content_value"),
        v.RAW_CONTENT_VALUES,
    )
    answer = _literal(
        r, "search_request.include_answer_value", data.get("include_answer_value"), v.ANSWER_VALUES
    )
    off = r.choice(
        "search_request.include_answer_when_off", data.get("include_answer_when_off"), ("omit", "false")
    )
    if key_in is None or order is None or raw_value is None or answer is None or off is None:
        return None
    return SearchRequest(key_in, order, raw_value, answer, off)  # type: ignore[arg-type]


def _literal(r: Reader, path: str, value: Any, choices: Sequence[bool | str]) -> bool | str | None:
    # ``True == 1`` in Python: compare types too, so 1 is not taken for true.
    if any(type(value) is type(choice) and value == choice for choice in choices):
        assert isinstance(value, bool | str)
        return value
    shown = ", ".join("true" if c is True else repr(c) for c in choices)
    r.problem(path, f"must be one of {shown}, got {value!r}")
    return None


def read_fingerprints(r: Reader, value: Any) -> Fingerprints | None:
    """``fingerprints``: how the run_meta protocol and detector hashes are computed."""
    data = r.obj("fingerprints", value, ("protocol_blocks", "budget_block", "detector_template"))
    if data is None:
        return None
    blocks = r.choice("fingerprints.protocol_blocks", data.get("protocol_blocks"), ("text", "framed"))
    budget = r.choice("fingerprints.budget_block", data.get("budget_block"), ("none", "filled_text"))
    template = r.choice(
        "fingerprints.detector_template", data.get("detector_template"), ("template_text", "format_spelling")
    )
    if blocks is None or budget is None or template is None:
        return None
    return Fingerprints(blocks, budget, template)  # type: ignore[arg-type]
