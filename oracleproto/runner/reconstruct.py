"""Rebuild the settings of a recorded run from its config snapshot (for offline replay).

The snapshot holds every setting that shapes a request (keys redacted, locations removed), so a
reviewer replays with exactly the recorded configuration and no ``.env``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oracleproto.errors import StoreError
from oracleproto.scoring.parser_mode import BEFORE_THE_SETTING
from oracleproto.settings.model import (
    AnalysisSettings,
    DetectorSettings,
    LLMSettings,
    ReactSettings,
    RunSettings,
    SearchSettings,
    Settings,
)

_SECTIONS: dict[str, type[Any]] = {
    "llm": LLMSettings,
    "search": SearchSettings,
    "detector": DetectorSettings,
    "react": ReactSettings,
    "run": RunSettings,
    "analysis": AnalysisSettings,
}
#: Redacted secrets are dropped: replay never needs a key.
_SECRET_FIELDS = {"llm": ("api_key",), "search": ("api_keys",), "detector": ("api_key",)}


def settings_from_snapshot(snapshot: dict[str, Any], *, where: Path) -> Settings:
    """The recorded settings, secrets removed, in replay mode; ``where`` names the source DB."""
    sections: dict[str, Any] = {}
    for name, cls in _SECTIONS.items():
        values = dict(snapshot.get(name) or {})
        if name not in snapshot and name != "analysis":
            raise StoreError(f"{where}: run_meta.config_snapshot has no {name!r} section; cannot replay")
        for secret in _SECRET_FIELDS.get(name, ()):
            values.pop(secret, None)
        if name == "run":
            values["mode"] = "replay"
        if name == "react" and "answer_parser" not in values:
            # Recorded before ANSWER_PARSER existed: replay with the mode that produced it.
            values["answer_parser"] = BEFORE_THE_SETTING
        try:
            sections[name] = cls.from_values(values)
        except ValueError as exc:
            raise StoreError(f"{where}: run_meta.config_snapshot[{name!r}] is not valid: {exc}") from exc
    return Settings(**sections)
