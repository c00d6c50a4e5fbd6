"""Canonical JSON and the hash helpers shared by the hash chain and the cache keys."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """Serialise ``value`` as compact JSON with sorted keys, non-ASCII kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_hex(data: bytes | str) -> str:
    """Full sha256 hex digest of bytes, or of a string encoded as UTF-8."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def sha256_16(text: str) -> str:
    """First 16 hex chars of sha256(text): the protocol fingerprint of run-layout.md."""
    return sha256_hex(text)[:16]


def redact_secret(secret: str) -> str:
    """The paper's key redaction: first 4 characters + sha256-12 of the whole key."""
    return f"{secret[:4]}…{sha256_hex(secret)[:12]}"
