"""Dataset links of the run hash chain (run-layout.md "Hash chain")."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from oracleproto.primitives.hashing import canonical_json, sha256_hex

_CHUNK = 1 << 20


def source_db_hash(path: Path | str) -> str:
    """sha256 hex of the source DB file bytes."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def metadata_hash(features_json_text: str) -> str:
    """sha256 hex of ``features_json`` re-serialised canonically; of the raw string if not JSON."""
    try:
        value = json.loads(features_json_text)
    except json.JSONDecodeError:
        return sha256_hex(features_json_text)
    return sha256_hex(canonical_json(value))
