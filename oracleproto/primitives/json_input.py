"""JSON read from files and databases others may have written: nesting too deep is a decode error.

``json.loads`` raises ``RecursionError`` on an array or object nested some thousands deep, which
the callers' ``except json.JSONDecodeError`` (or ``ValueError``) clauses do not expect: a crafted
manifest or attestation would end a command with a traceback. :func:`load_json` turns it into a
``json.JSONDecodeError`` saying what it is, so every reader refuses such a file the way it refuses
any other text that is not JSON.
"""

from __future__ import annotations

import json
from typing import Any


def load_json(data: str | bytes) -> Any:
    """``json.loads(data)``; nesting too deep raises ``json.JSONDecodeError`` like other bad JSON."""
    try:
        return json.loads(data)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply to read", "", 0) from None
