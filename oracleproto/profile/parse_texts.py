"""Read the request, prompt, protocol and text sections of a profile (§1–§5)."""

from __future__ import annotations

import copy
from typing import Any

from oracleproto.profile import vocabulary as v
from oracleproto.profile.model import (
    AssistantEcho,
    BlockSpec,
    Injections,
    JsonStyle,
    LlmRequest,
    PromptLines,
    Protocols,
    RequestJson,
    Texts,
)
from oracleproto.profile.reader import Reader

_JSON_WS = " \t\n\r"


def read_request_json(r: Reader, value: Any) -> RequestJson | None:
    """``request_json``: one serialisation style per channel."""
    data = r.obj("request_json", value, v.JSON_CHANNELS)
    if data is None:
        return None
    styles = {name: _style(r, f"request_json.{name}", data.get(name)) for name in v.JSON_CHANNELS}
    if any(style is None for style in styles.values()):
        return None
    return RequestJson(**styles)  # type: ignore[arg-type]


def _style(r: Reader, path: str, value: Any) -> JsonStyle | None:
    data = r.obj(path, value, ("item_separator", "key_separator", "ensure_ascii"))
    if data is None:
        return None
    item = r.string(f"{path}.item_separator", data.get("item_separator"))
    key = r.string(f"{path}.key_separator", data.get("key_separator"))
    ascii_only = r.boolean(f"{path}.ensure_ascii", data.get("ensure_ascii"))
    # Anything else than JSON whitespace around the comma or colon would not be JSON any more.
    if item is not None and item.strip(_JSON_WS) != ",":
        r.problem(f"{path}.item_separator", f"must be ',' with optional JSON whitespace, got {item!r}")
        item = None
    if key is not None and key.strip(_JSON_WS) != ":":
        r.problem(f"{path}.key_separator", f"must be ':' with optional JSON whitespace, got {key!r}")
        key = None
    if item is None or key is None or ascii_only is None:
        return None
    return JsonStyle(item, key, ascii_only)


def read_llm_request(r: Reader, value: Any) -> LlmRequest | None:
    """``llm_request``: body key order, the tool schema and the assistant echo."""
    data = r.obj("llm_request", value, ("key_order", "tool_schema", "assistant_echo"))
    if data is None:
        return None
    order = r.names("llm_request.key_order", data.get("key_order"), v.LLM_BODY_KEYS)
    if order is not None:
        for key in ("model", "messages"):
            if key not in order:
                r.problem("llm_request.key_order", f"must list {key!r}: every request has it")
    schema = _tool_schema(r, data.get("tool_schema"))
    echo = _echo(r, data.get("assistant_echo"))
    if order is None or schema is None or echo is None:
        return None
    return LlmRequest(order, schema, echo)


def _tool_schema(r: Reader, value: Any) -> dict[str, Any] | None:
    """The schema, checked to expose exactly the ``web_search(query)`` function (the barrier)."""
    path = "llm_request.tool_schema"
    if not isinstance(value, dict):
        r.problem(path, "must be an object (the function schema sent as the sole element of tools)")
        return None
    function = value.get("function")
    parameters = function.get("parameters") if isinstance(function, dict) else None
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    if value.get("type") != "function" or not isinstance(function, dict):
        r.problem(path, 'must be {"type": "function", "function": {...}}')
        return None
    if function.get("name") != "web_search":
        r.problem(f"{path}.function.name", "must be 'web_search': the harness executes no other tool")
        return None
    if not isinstance(properties, dict) or list(properties) != ["query"]:
        # The model controls only the query; any other argument could reach the search call.
        r.problem(
            f"{path}.function.parameters.properties",
            "must declare exactly one property, 'query' (the cutoff is held by the harness)",
        )
        return None
    if parameters is not None and parameters.get("required") != ["query"]:
        r.problem(f"{path}.function.parameters.required", 'must be ["query"]')
        return None
    # A private copy: the profile is immutable even if the caller changes its data afterwards.
    return copy.deepcopy(value)


def _echo(r: Reader, value: Any) -> AssistantEcho | None:
    path = "llm_request.assistant_echo"
    data = r.obj(path, value, ("mode",), ("declared_key_orders",))
    if data is None:
        return None
    mode = r.choice(f"{path}.mode", data.get("mode"), v.ECHO_MODES)
    orders: dict[str, tuple[str, ...]] = {}
    raw = data.get("declared_key_orders")
    if raw is None and mode == "declared_order":
        r.problem(f"{path}.declared_key_orders", "missing; the declared_order mode needs the key orders")
        return None
    if raw is not None:
        known = r.obj(f"{path}.declared_key_orders", raw, (), v.DECLARED_KINDS)
        if known is None:
            return None
        for kind, keys in known.items():
            if kind in v.DECLARED_KINDS:
                listed = r.strings(f"{path}.declared_key_orders.{kind}", keys)
                if listed is not None:
                    orders[kind] = listed
    if mode is None:
        return None
    return AssistantEcho(mode, orders)  # type: ignore[arg-type]


def read_prompt(r: Reader, value: Any) -> PromptLines | None:
    """``prompt``: the outcome lines of multiple-choice questions."""
    data = r.obj("prompt", value, ("outcome_line", "outcome_line_other"))
    if data is None:
        return None
    line = r.text("prompt.outcome_line", data.get("outcome_line"), v.P_OUTCOME)
    other = r.text("prompt.outcome_line_other", data.get("outcome_line_other"), v.P_OUTCOME)
    return None if line is None or other is None else PromptLines(line, other)


def read_protocols(r: Reader, value: Any) -> Protocols | None:
    """``protocols``: separator, suffix and the blocks in append order."""
    data = r.obj("protocols", value, ("separator", "suffix", "blocks"))
    if data is None:
        return None
    separator = r.text("protocols.separator", data.get("separator"), ())
    suffix = r.text("protocols.suffix", data.get("suffix"), ())
    raw = data.get("blocks")
    if not isinstance(raw, list):
        r.problem("protocols.blocks", "must be an array of {name, text, ...} objects")
        return None
    blocks: list[BlockSpec] = []
    for index, item in enumerate(raw):
        block = _block(r, f"protocols.blocks[{index}]", item)
        if block is None:
            continue
        if any(b.name == block.name for b in blocks):
            r.problem(f"protocols.blocks[{index}].name", f"{block.name!r} is listed twice; list each once")
            continue
        blocks.append(block)
    if separator is None or suffix is None or len(blocks) != len(raw):
        return None
    return Protocols(separator, suffix, tuple(blocks))


def _block(r: Reader, path: str, value: Any) -> BlockSpec | None:
    optional = ("separator", "terminator", "text_search_disabled")
    data = r.obj(path, value, ("name", "text"), optional)
    if data is None:
        return None
    name = r.choice(f"{path}.name", data.get("name"), v.BLOCK_NAMES)
    text = r.text(f"{path}.text", data.get("text"), v.P_BLOCK)
    separator = r.text(f"{path}.separator", data.get("separator"), (), nullable=True)
    terminator = r.text(f"{path}.terminator", data.get("terminator"), (), nullable=True)
    disabled = r.text(
        f"{path}.text_search_disabled", data.get("text_search_disabled"), v.P_BLOCK, nullable=True
    )
    if name is None or text is None:
        return None
    return BlockSpec(name, text, separator, terminator, disabled)


def read_texts(r: Reader, value: Any, policy: str | None) -> Texts | None:
    """``texts``: the status texts and every injection."""
    keys = (
        "search_clause",
        "search_clause_disabled",
        "status_header",
        "tool_error_status",
        "tool_error_hint_strips",
        "tool_error_hint_default",
        "injections",
    )
    data = r.obj("texts", value, keys)
    if data is None:
        return None
    clause = r.text("texts.search_clause", data.get("search_clause"), v.P_CLAUSE)
    disabled = r.text(
        "texts.search_clause_disabled", data.get("search_clause_disabled"), v.P_CLAUSE, nullable=True
    )
    header = r.text("texts.status_header", data.get("status_header"), v.P_STATUS)
    status = r.text(
        "texts.tool_error_status", data.get("tool_error_status"), v.P_TOOL_ERROR_STATUS, nullable=True
    )
    strips = r.text(
        "texts.tool_error_hint_strips", data.get("tool_error_hint_strips"), v.P_HINT, nullable=True
    )
    default = r.text(
        "texts.tool_error_hint_default", data.get("tool_error_hint_default"), v.P_HINT, nullable=True
    )
    if status is not None and (strips is None or default is None):
        r.problem(
            "texts.tool_error_status", "is set, so tool_error_hint_strips and tool_error_hint_default must be"
        )
    injections = _injections(r, data.get("injections"), policy)
    if clause is None or header is None or injections is None:
        return None
    return Texts(clause, disabled, header, status, strips, default, injections)


def _injections(r: Reader, value: Any, policy: str | None) -> Injections | None:
    data = r.obj("texts.injections", value, v.INJECTIONS)
    if data is None:
        return None
    required = v.POLICY_INJECTIONS.get(policy or "", ())
    texts: dict[str, str | None] = {}
    for name in v.INJECTIONS:
        allowed = v.P_NUDGE if name == "nudge" else v.P_INJECTION
        path = f"texts.injections.{name}"
        texts[name] = r.text(path, data.get(name), allowed, nullable=True)
        if name in required and name in data and data[name] is None:
            r.problem(path, f"is null, but the {policy!r} injection policy sends it; write the text")
    return Injections(**texts)
