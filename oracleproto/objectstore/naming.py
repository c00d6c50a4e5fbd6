"""Names inside a store: objects by the SHA-256 of their bytes, runs by id and index digest.

    <prefix>/objects/sha256/ab/abcdef…            one file's bytes (write-once)
    <prefix>/runs/<run_id>/<index sha256>.json     a run's index (write-once; its name is its digest)

The two-character fan-out keeps a file:// store's folders small. A run id may hold several indexes:
a run re-sealed after a change (``cassettes gc --apply``) and pushed again is another index, and
both stay (nothing in a store is ever overwritten).
"""

from __future__ import annotations

import re

from oracleproto.objectstore.errors import ObjectStoreError

SHA256_RE = re.compile(r"[0-9a-f]{64}")
OBJECTS = "objects/sha256"
RUNS = "runs"
INDEX_SUFFIX = ".json"
_REF_RE = re.compile(r"runs/(\d{8}-\d{6}-[0-9a-f]{4})/([0-9a-f]{64})\.json")


def object_key(sha256: str) -> str:
    """The store name of the object whose bytes hash to ``sha256``."""
    if not SHA256_RE.fullmatch(sha256):
        raise ObjectStoreError(f"{sha256!r} is not a full lower-case sha256 hex digest")
    return f"{OBJECTS}/{sha256[:2]}/{sha256}"


def index_key(run_id: str, digest: str) -> str:
    """The store name of a run's index."""
    return f"{RUNS}/{run_id}/{digest}{INDEX_SUFFIX}"


def parse_index_key(key: str) -> tuple[str, str] | None:
    """``runs/<run_id>/<digest>.json`` → (run id, digest); None for anything else under ``runs/``."""
    match = _REF_RE.fullmatch(key)
    return (match.group(1), match.group(2)) if match else None
