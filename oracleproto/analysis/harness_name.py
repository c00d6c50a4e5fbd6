"""The harness profile a run's requests were built from, as its reports name it.

Read from the first model's ``run_meta.config_snapshot`` (every DB of a run carries the same one;
``verify`` checks that). A run recorded before harness profiles names none, and its reports stay
as they were.
"""

from __future__ import annotations

import json
from typing import Any

from oracleproto.analysis.reader import RunData

#: The config-snapshot key (``runner/run_texts.py`` writes it).
PROFILE_KEY = "harness_profile"


def run_harness_profile(run: RunData) -> dict[str, str] | None:
    """``{"name", "fingerprint"}`` of the run's harness profile, or None when it names none."""
    if not run.models:
        return None
    raw = run.models[0].run_meta.get("config_snapshot")
    try:
        snapshot: Any = json.loads(str(raw)) if raw not in (None, "") else {}
    except json.JSONDecodeError:
        return None  # the answer parser's reader reports a damaged snapshot
    found = snapshot.get(PROFILE_KEY) if isinstance(snapshot, dict) else None
    if not isinstance(found, dict):
        return None
    name, fingerprint = found.get("name"), found.get("fingerprint")
    if not isinstance(name, str) or not isinstance(fingerprint, str):
        return None
    return {"name": name, "fingerprint": fingerprint}
