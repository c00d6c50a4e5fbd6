"""Send-time browsing barriers (paper Table 10), run on every outbound LLM request body.

They sit in front of the wire, not in the settings, so configuration drift or a caller that
builds its own tool list cannot open a provider-side browsing channel.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oracleproto.errors import BrowsingBarrierError
from oracleproto.providers.tools import WEB_SEARCH_TOOL_NAME
from oracleproto.settings.model import ONLINE_SUFFIX


def _tool_name(tool: Any) -> Any:
    if isinstance(tool, Mapping):
        function = tool.get("function")
        if isinstance(function, Mapping):
            return function.get("name")
        return tool.get("name")
    return None


def assert_no_browsing(body: Mapping[str, Any]) -> None:
    """Main-LLM barrier: no ``:online`` model, 0 or 1 tool, only ``web_search``, no ``plugins``."""
    model = str(body.get("model", ""))
    if model.endswith(ONLINE_SUFFIX):
        raise BrowsingBarrierError(
            f"model {model!r} ends in ':online' (provider-side browsing); remove the suffix"
        )
    if "plugins" in body:
        raise BrowsingBarrierError("request body carries a 'plugins' field (provider-side browsing)")
    tools = body.get("tools", [])
    if not isinstance(tools, list) or len(tools) not in (0, 1):
        count = len(tools) if isinstance(tools, list) else type(tools).__name__
        raise BrowsingBarrierError(f"request carries {count} tools; only a single 'web_search' is allowed")
    for tool in tools:
        name = _tool_name(tool)
        if name != WEB_SEARCH_TOOL_NAME:
            raise BrowsingBarrierError(f"request exposes tool {name!r}; only 'web_search' is allowed")


def assert_detector_safe(body: Mapping[str, Any]) -> None:
    """Detector barrier: no ``:online`` model and none of ``tools``, ``plugins``, ``tool_choice``."""
    model = str(body.get("model", ""))
    if model.endswith(ONLINE_SUFFIX):
        raise BrowsingBarrierError(f"detector model {model!r} ends in ':online'; remove the suffix")
    present = [field for field in ("tools", "plugins", "tool_choice") if field in body]
    if present:
        raise BrowsingBarrierError(
            f"detector request carries {', '.join(present)}; the detector gets no tools"
        )
