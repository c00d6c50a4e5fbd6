"""How an assistant reply is sent back in later requests (harness profile §2, ``assistant_echo``).

Two harnesses differ here in bytes the model sees on every later step:

- ``provider_order`` is oracleproto's own echo: the message as ``chat_parse`` normalised it
  (string content, never-empty tool-call ids), key order as the provider wrote it.
- ``declared_order`` is what an SDK-based harness sends: the provider's message unchanged (null
  values, block-list content and missing ids included), with the keys its SDK declares first, in
  declaration order, and every other key after them in provider order — at each nesting level the
  SDK models (tool calls, their function/custom, function_call, audio, annotations and their
  url_citation).

Both are pure functions of a ``ChatResponse``; the result is a fresh copy the caller may mutate.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from oracleproto.profile.model import AssistantEcho
from oracleproto.providers.types import ChatResponse, Message, ToolCall, ToolCallId

#: Nested objects of a message that keep their own declared order: the key, and its kind.
_MESSAGE_OBJECTS = (("function_call", "function_call"), ("audio", "audio"))
#: Nested objects of one tool-call element, ordered by the kind of the same name.
_CALL_OBJECTS = ("function", "custom")


def rebuilt_message(response: ChatResponse) -> Message:
    """The assistant message of a response not parsed from a body (fakes), from its parsed fields."""
    message: Message = {"role": "assistant", "content": response.content}
    if response.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in response.tool_calls
        ]
    return message


def declared(value: Mapping[str, Any], order: Sequence[str]) -> dict[str, Any]:
    """``value``'s members: those named in ``order`` first, in that order, then the rest as given."""
    out = {key: value[key] for key in order if key in value}
    out.update((key, item) for key, item in value.items() if key not in out)
    return out


def _order(value: Any, kind: str, orders: Mapping[str, Sequence[str]]) -> Any:
    # Only objects are reordered; a null or a value of an unexpected type is echoed as it came.
    return declared(value, orders.get(kind, ())) if isinstance(value, dict) else value


def _tool_call(call: Any, orders: Mapping[str, Sequence[str]]) -> Any:
    if not isinstance(call, dict):
        return call
    kind = "custom_tool_call" if call.get("type") == "custom" else "tool_call"
    out = declared(call, orders.get(kind, ()))
    for key in _CALL_OBJECTS:
        if key in out:
            out[key] = _order(out[key], key, orders)
    return out


def _annotation(item: Any, orders: Mapping[str, Sequence[str]]) -> Any:
    if not isinstance(item, dict):
        return item
    out = declared(item, orders.get("annotation", ()))
    if "url_citation" in out:
        out["url_citation"] = _order(out["url_citation"], "url_citation", orders)
    return out


def declared_order_message(message: Mapping[str, Any], orders: Mapping[str, Sequence[str]]) -> Message:
    """``message`` with every object the SDK models put in its declared order (values unchanged)."""
    out = declared(message, orders.get("message", ()))
    for key, kind in _MESSAGE_OBJECTS:
        if key in out:
            out[key] = _order(out[key], kind, orders)
    calls = out.get("tool_calls")
    if isinstance(calls, list):
        # An empty list stays an empty list: the SDK echoes what it parsed.
        out["tool_calls"] = [_tool_call(call, orders) for call in calls]
    annotations = out.get("annotations")
    if isinstance(annotations, list):
        out["annotations"] = [_annotation(item, orders) for item in annotations]
    return out


def echo_message(response: ChatResponse, echo: AssistantEcho) -> Message:
    """The assistant message to append after ``response``, as the profile's echo mode writes it.

    ``provider_order`` is today's normalised ``ChatResponse.assistant_message``;
    ``declared_order`` is ``ChatResponse.provider_message`` reordered. A response that was not
    parsed from a body (test fakes) has neither; its message is rebuilt from the parsed fields.
    """
    if echo.mode == "provider_order":
        source = response.assistant_message or rebuilt_message(response)
        return copy.deepcopy(source)
    source = response.provider_message or response.assistant_message or rebuilt_message(response)
    # Deep-copied first: the reordered containers are new, and the leaves must not be shared
    # with the response either (the caller's conversation may be edited).
    return declared_order_message(copy.deepcopy(source), echo.declared_key_orders)


def tool_call_id_for(call: ToolCall, echo: AssistantEcho) -> ToolCallId:
    """The ``tool_call_id`` of the tool message answering ``call``.

    ``provider_order`` echoes normalised ids, so the tool message uses the same (possibly
    synthesised) id; ``declared_order`` echoes the provider's id, or none, so it uses that id or "".
    """
    if echo.mode == "provider_order":
        return call.id
    return "" if call.raw_id is None else call.raw_id
