"""``store ls``: every run in a store, from its indexes (each checked against its name)."""

from __future__ import annotations

from dataclasses import dataclass

from oracleproto.objectstore.backend import Backend
from oracleproto.objectstore.errors import ObjectStoreError
from oracleproto.objectstore.resolve import load_ref, run_refs


@dataclass(frozen=True)
class ListedRun:
    """One run index as ``store ls`` shows it; ``problem`` set when the index is damaged."""

    run_id: str
    digest: str
    files: int = 0
    bytes: int = 0
    dataset: str | None = None
    cassette_root: str | None = None
    problem: str | None = None


def list_runs(backend: Backend) -> list[ListedRun]:
    """Every run index, sorted by run id then digest; a damaged one is listed with its problem."""
    out: list[ListedRun] = []
    for run_id, digest in run_refs(backend):
        try:
            index = load_ref(backend, run_id, digest).index
        except ObjectStoreError as exc:
            if exc.__class__.__name__ in ("StoreAccessDeniedError", "StoreUnavailableError"):
                raise
            out.append(ListedRun(run_id, digest, problem=str(exc)))
            continue
        out.append(
            ListedRun(
                run_id,
                digest,
                files=len(index.files),
                bytes=index.total_bytes,
                dataset=index.dataset.name,
                cassette_root=index.cassette_root,
            )
        )
    return out
