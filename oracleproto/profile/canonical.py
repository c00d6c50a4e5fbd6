"""The canonical form of a profile, and its fingerprint.

``profile_to_data`` writes every section in schema order, maps whose order means nothing
(``tool_calls.errors``, ``detector.missing``, ``declared_key_orders``) sorted by key, and the
objects whose order reaches the wire (``tool_schema``, a payload's ``json`` value) as loaded.
Optional extension keys are written only when they differ from their default, so a profile that
does not use an extension keeps the fingerprint it had before the extension existed.

The fingerprint covers the behaviour only: two profiles that make a harness send the same bytes
have the same fingerprint whatever their ``name``, ``description`` and ``notes`` say.
"""

from __future__ import annotations

import json
from typing import Any

from oracleproto.primitives.hashing import sha256_16
from oracleproto.profile.model import (
    BlockSpec,
    HarnessProfile,
    JsonStyle,
    PayloadEntry,
)

#: Keys the fingerprint leaves out: they describe the profile, they do not change a byte sent.
DESCRIPTIVE_KEYS = ("name", "description", "notes")


def _style(style: JsonStyle) -> dict[str, Any]:
    return {
        "item_separator": style.item_separator,
        "key_separator": style.key_separator,
        "ensure_ascii": style.ensure_ascii,
    }


def _payload(entries: tuple[PayloadEntry, ...]) -> list[dict[str, Any]]:
    return [
        {"key": e.key, "json": e.json_value} if e.is_json else {"key": e.key, "text": e.text} for e in entries
    ]


def _block(block: BlockSpec) -> dict[str, Any]:
    data: dict[str, Any] = {"name": block.name, "text": block.text}
    for key in ("separator", "terminator", "text_search_disabled"):
        value = getattr(block, key)
        if value is not None:
            data[key] = value
    return data


def _sections_a(p: HarnessProfile) -> dict[str, Any]:
    rj, llm, texts = p.request_json, p.llm_request, p.texts
    echo: dict[str, Any] = {"mode": llm.assistant_echo.mode}
    if llm.assistant_echo.declared_key_orders:
        orders = llm.assistant_echo.declared_key_orders
        echo["declared_key_orders"] = {k: list(orders[k]) for k in sorted(orders)}
    return {
        "request_json": {
            name: _style(getattr(rj, name)) for name in ("llm", "detector", "search", "tool_message_content")
        },
        "llm_request": {
            "key_order": list(llm.key_order),
            "tool_schema": llm.tool_schema,
            "assistant_echo": echo,
        },
        "prompt": {"outcome_line": p.prompt.outcome_line, "outcome_line_other": p.prompt.outcome_line_other},
        "protocols": {
            "separator": p.protocols.separator,
            "suffix": p.protocols.suffix,
            "blocks": [_block(b) for b in p.protocols.blocks],
        },
        "texts": {
            "search_clause": texts.search_clause,
            "search_clause_disabled": texts.search_clause_disabled,
            "status_header": texts.status_header,
            "tool_error_status": texts.tool_error_status,
            "tool_error_hint_strips": texts.tool_error_hint_strips,
            "tool_error_hint_default": texts.tool_error_hint_default,
            "injections": dict(vars(texts.injections)),
        },
        "injection_policy": p.injection_policy,
    }


def _sections_b(p: HarnessProfile) -> dict[str, Any]:
    calls, result, det, search = p.tool_calls, p.tool_result, p.detector, p.search_request
    tool_calls: dict[str, Any] = {
        "checks": list(calls.checks),
        "blank_arguments_are_empty": calls.blank_arguments_are_empty,
        "query_whitespace": calls.query_whitespace,
        "errors": {
            k: {"code": calls.errors[k].code, "message": calls.errors[k].message}
            for k in sorted(calls.errors)
        },
        "error_payload": _payload(calls.error_payload),
    }
    if calls.tool_name_format != "as_sent":
        tool_calls["tool_name_format"] = calls.tool_name_format
    return {
        "tool_calls": tool_calls,
        "tool_result": {
            "payload_keys": list(result.payload_keys),
            "result_keys": list(result.result_keys),
            "absent_field": result.absent_field,
            "raw_content_empty_is_absent": result.raw_content_empty_is_absent,
            "failure_payload": _payload(result.failure_payload),
        },
        "truncation": {
            "fields": list(p.truncation.fields),
            "marker": p.truncation.marker,
            "detector_sees_marker": p.truncation.detector_sees_marker,
        },
        "detector": {
            "key_order": list(det.key_order),
            "template": det.template,
            "missing": {
                k: {"text": det.missing[k].text, "when": det.missing[k].when} for k in sorted(det.missing)
            },
        },
        "search_request": {
            "api_key_in": search.api_key_in,
            "key_order": list(search.key_order),
            "include_raw_content_value": search.include_raw_content_value,
            "include_answer_value": search.include_answer_value,
            "include_answer_when_off": search.include_answer_when_off,
        },
        "request_sharing": p.request_sharing,
        "fingerprints": {
            "protocol_blocks": p.fingerprints.protocol_blocks,
            "budget_block": p.fingerprints.budget_block,
            "detector_template": p.fingerprints.detector_template,
        },
    }


def profile_to_data(profile: HarnessProfile) -> dict[str, Any]:
    """The whole profile as plain JSON data, in canonical order (what ``profile export`` writes)."""
    data: dict[str, Any] = {
        "profile_version": profile.profile_version,
        "name": profile.name,
        "description": profile.description,
    }
    if profile.notes:
        data["notes"] = list(profile.notes)
    data.update(_sections_a(profile))
    data.update(_sections_b(profile))
    return data


def canonical_text(data: dict[str, Any]) -> str:
    """Compact JSON of canonical-order data (order as given: it is part of the bytes)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def behaviour_data(profile: HarnessProfile) -> dict[str, Any]:
    """The canonical data without its descriptive keys: what the fingerprint covers."""
    return {k: v for k, v in profile_to_data(profile).items() if k not in DESCRIPTIVE_KEYS}


def profile_fingerprint(profile: HarnessProfile) -> str:
    """sha256-16 of the canonical JSON of the profile's behaviour."""
    return sha256_16(canonical_text(behaviour_data(profile)))


def export_text(profile: HarnessProfile) -> str:
    """The profile as an indented JSON document (2 spaces, non-ASCII kept, trailing newline)."""
    return json.dumps(profile_to_data(profile), ensure_ascii=False, indent=2) + "\n"
