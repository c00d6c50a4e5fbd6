"""Renderer R: user prompt from a question and the template family, plus runtime protocols."""

from __future__ import annotations

from oracleproto.prompts.protocols import (
    BELIEF_PROTOCOL_TEXT,
    REFLECTION_PROTOCOL_TEXT,
    Budget,
    RuntimeProtocols,
    budget_footer_text,
)
from oracleproto.prompts.render import (
    PROTOCOL_SEPARATOR,
    outcomes_block,
    output_format,
    prompt_templates_hash,
    render_prompt,
    render_template,
)

__all__ = [
    "BELIEF_PROTOCOL_TEXT",
    "PROTOCOL_SEPARATOR",
    "REFLECTION_PROTOCOL_TEXT",
    "Budget",
    "RuntimeProtocols",
    "budget_footer_text",
    "outcomes_block",
    "output_format",
    "prompt_templates_hash",
    "render_prompt",
    "render_template",
]
