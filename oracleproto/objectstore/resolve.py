"""Which run index a user means: a run id, an index digest (or its first characters), or a file.

The index's bytes are checked against the digest that names them before they are parsed, so a
tampered or truncated index is refused by name. An index given as a file (a paper may publish it
beside its numbers) needs no listing at all: it names every object by digest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from oracleproto.objectstore.backend import Backend
from oracleproto.objectstore.errors import ObjectStoreError
from oracleproto.objectstore.index import MAX_INDEX_BYTES, RunIndex, parse_index
from oracleproto.objectstore.naming import RUNS, index_key, parse_index_key
from oracleproto.primitives.hashing import sha256_hex
from oracleproto.store.naming import RUN_ID_RE

_DIGEST_PREFIX = re.compile(r"[0-9a-f]{8,64}")


@dataclass(frozen=True)
class ResolvedIndex:
    """A verified, parsed run index and its digest."""

    index: RunIndex
    digest: str
    data: bytes


def run_refs(backend: Backend, run_id: str | None = None) -> list[tuple[str, str]]:
    """(run id, index digest) of every run index in the store (of one run id when given)."""
    prefix = f"{RUNS}/{run_id}/" if run_id else f"{RUNS}/"
    found = (parse_index_key(key) for key in backend.list_keys(prefix))
    return sorted(ref for ref in found if ref is not None)


def load_ref(backend: Backend, run_id: str, digest: str) -> ResolvedIndex:
    key = index_key(run_id, digest)
    data = backend.get_small(key, MAX_INDEX_BYTES)
    if data is None:
        raise ObjectStoreError(
            f"store {backend.location}: no run index {key}; `oracleproto store ls` lists them"
        )
    index = parse_index(data, f"store {backend.location}: {key}", digest=digest)
    if index.run_id != run_id:
        raise ObjectStoreError(
            f"store {backend.location}: {key} describes run {index.run_id}, not {run_id}: "
            "the index was misplaced "
            "or crafted; refusing it"
        )
    return ResolvedIndex(index, digest, data)


def _one(backend: Backend, refs: list[tuple[str, str]], ref: str) -> tuple[str, str]:
    if not refs:
        raise ObjectStoreError(
            f"store {backend.location} holds no run {ref!r}; `oracleproto store ls` lists the runs it holds"
        )
    if len(refs) > 1:
        listed = "\n".join(f"  - {run} index {digest}" for run, digest in refs[:20])
        raise ObjectStoreError(
            f"{ref!r} matches {len(refs)} run indexes in store {backend.location} (a run pushed again after "
            f"a change keeps both):\n{listed}\npass the index digest of the one you mean (enough of it to be "
            "unique)"
        )
    return refs[0]


def resolve_index(backend: Backend, ref: str) -> ResolvedIndex:
    """``ref`` → the verified index it names."""
    path = Path(ref)
    if ref.endswith(".json") and path.is_file():
        data = path.read_bytes()[: MAX_INDEX_BYTES + 1]
        index = parse_index(data, str(path))
        return ResolvedIndex(index, sha256_hex(data), data)
    if RUN_ID_RE.fullmatch(ref):
        return load_ref(backend, *_one(backend, run_refs(backend, ref), ref))
    if _DIGEST_PREFIX.fullmatch(ref):
        matches = [(run, digest) for run, digest in run_refs(backend) if digest.startswith(ref)]
        return load_ref(backend, *_one(backend, matches, ref))
    raise ObjectStoreError(
        f"{ref!r}: expected a run id (YYYYMMDD-HHMMSS-xxxx), an index digest (8 to 64 lower-case hex "
        "characters, as `oracleproto store ls` prints them) or a run index file (.json)"
    )
