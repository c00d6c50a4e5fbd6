"""Message content that arrives as a list of typed blocks instead of a string.

Mistral's reasoning models (Magistral) answer with ``content`` as a list such as
``[{"type": "thinking", "thinking": [{"type": "text", "text": …}]}, {"type": "text", "text": …}]``;
OpenAI-style content parts are ``[{"type": "text", "text": …}]``. The text blocks are the reply;
thinking blocks are the model's scratchpad and are kept apart, so neither the answer parser nor
the leak detector reads them (a ``\\boxed{}`` tried out while thinking is not an answer).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

#: Block types whose ``text`` is the reply.
TEXT_BLOCKS = frozenset({"text", "output_text"})
#: Block types that hold reasoning; their payload sits under the type's own key or ``text``.
REASONING_BLOCKS = frozenset({"thinking", "reasoning", "reasoning_text"})


@dataclass(frozen=True)
class SplitContent:
    """Reply text and reasoning text of one message's content."""

    text: str | None
    reasoning: str | None


def _chunk_text(value: Any) -> str:
    """The text of a block payload: a string, a ``{"text": …}`` chunk, or a list of those."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return _chunk_text(value.get("text"))
    if isinstance(value, list):
        return "".join(_chunk_text(item) for item in value)
    return ""


def is_block_list(content: Any) -> bool:
    """True when ``content`` is a non-empty list of objects that each carry a string ``type``."""
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(block, dict) and isinstance(block.get("type"), str) for block in content)
    )


def split_content(content: Any) -> SplitContent:
    """Strings verbatim; block lists split into joined text and reasoning; other JSON as text."""
    if content is None or isinstance(content, str):
        return SplitContent(content, None)
    if not is_block_list(content):
        # Cloudflare returns structured output as a JSON object: keep it readable as text.
        return SplitContent(json.dumps(content, ensure_ascii=False), None)
    texts: list[str] = []
    thoughts: list[str] = []
    for block in content:
        kind = block["type"]
        if kind in TEXT_BLOCKS:
            texts.append(_chunk_text(block.get("text")))
        elif kind in REASONING_BLOCKS:
            thoughts.append(_chunk_text(block[kind] if kind in block else block.get("text")))
    if not texts and not thoughts:
        # Only block types we do not know (images, references): nothing may vanish silently.
        return SplitContent(json.dumps(content, ensure_ascii=False), None)
    # Text chunks are consecutive pieces of one reply, so they join without a separator.
    return SplitContent("".join(texts) if texts else None, "\n".join(thoughts) if thoughts else None)


def echo_text(content: Any) -> str | None:
    """``content`` as the ``provider_order`` echo sends it back (harness profile §2).

    A block list becomes the joined text of its ``text``/``output_text`` blocks, null when every
    block holds reasoning; other non-string JSON becomes its text. Unlike :func:`split_content`
    (what the answer parser reads), a list of only unknown blocks (an image) echoes as ``""``.
    """
    if content is None or isinstance(content, str):
        return content
    if not is_block_list(content):
        return json.dumps(content, ensure_ascii=False)
    if all(block["type"] in REASONING_BLOCKS for block in content):
        return None
    return "".join(_chunk_text(block.get("text")) for block in content if block["type"] in TEXT_BLOCKS)
