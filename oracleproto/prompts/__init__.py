"""Renderer R: user prompt from a question and the template family, plus runtime protocols."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oracleproto._lazy import export_dir, load_export

if TYPE_CHECKING:
    from oracleproto.prompts.layout import BUILTIN_LAYOUT, ProtocolBlock, ProtocolLayout, layout_from_data
    from oracleproto.prompts.protocol_file import load_protocol_file
    from oracleproto.prompts.protocol_texts import BUDGET_FOOTER_TEXT
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

# Each public name and the module that defines it, imported on first use (PEP 562).
_EXPORTS = {
    "BUILTIN_LAYOUT": "oracleproto.prompts.layout",
    "ProtocolBlock": "oracleproto.prompts.layout",
    "ProtocolLayout": "oracleproto.prompts.layout",
    "layout_from_data": "oracleproto.prompts.layout",
    "load_protocol_file": "oracleproto.prompts.protocol_file",
    "BUDGET_FOOTER_TEXT": "oracleproto.prompts.protocol_texts",
    "BELIEF_PROTOCOL_TEXT": "oracleproto.prompts.protocols",
    "REFLECTION_PROTOCOL_TEXT": "oracleproto.prompts.protocols",
    "Budget": "oracleproto.prompts.protocols",
    "RuntimeProtocols": "oracleproto.prompts.protocols",
    "budget_footer_text": "oracleproto.prompts.protocols",
    "PROTOCOL_SEPARATOR": "oracleproto.prompts.render",
    "outcomes_block": "oracleproto.prompts.render",
    "output_format": "oracleproto.prompts.render",
    "prompt_templates_hash": "oracleproto.prompts.render",
    "render_prompt": "oracleproto.prompts.render",
    "render_template": "oracleproto.prompts.render",
}

__all__ = [
    "BELIEF_PROTOCOL_TEXT",
    "BUDGET_FOOTER_TEXT",
    "BUILTIN_LAYOUT",
    "PROTOCOL_SEPARATOR",
    "REFLECTION_PROTOCOL_TEXT",
    "Budget",
    "ProtocolBlock",
    "ProtocolLayout",
    "RuntimeProtocols",
    "budget_footer_text",
    "layout_from_data",
    "load_protocol_file",
    "outcomes_block",
    "output_format",
    "prompt_templates_hash",
    "render_prompt",
    "render_template",
]


def __getattr__(name: str) -> Any:
    return load_export(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return export_dir(globals(), _EXPORTS)
