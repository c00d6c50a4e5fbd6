"""The per-sample attestation: a Merkle root over the cassette entries each stored sample used.

Every sample row of a run has a leaf: sha256 of the canonical JSON of (virtual slug, question id,
sample index, the digests of the entries it used, sorted). The manifest's ``sample_entries_root`` is
the Merkle root of those leaves, so a reviewer can check not only that the cassettes are intact
(``cassettes.root_digest``) but which recorded responses every published number came from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from oracleproto.errors import StoreError
from oracleproto.primitives.hashing import canonical_json, sha256_hex
from oracleproto.store.model_store import ModelStore
from oracleproto.transport.entry import Entry, entry_digest
from oracleproto.transport.integrity import merkle_root

#: Looks up the effective cassette entry of a key (None when it is not recorded).
EntryLookup = Callable[[str], Entry | None]
#: Looks up the digest of the effective cassette entry of a key (None when it is not recorded).
DigestLookup = Callable[[str], str | None]


def entry_digests(lookup: EntryLookup, known: DigestLookup | None = None) -> DigestLookup:
    """Digests through ``lookup``, each computed once (shared entries serve many samples).

    ``known``: a cheaper lookup of the digest itself (a store that verified it on reading), tried first.
    """
    cache: dict[str, str | None] = {}

    def digest_of(key: str) -> str | None:
        if key not in cache:
            if known is not None:
                cache[key] = known(key)
                return cache[key]
            entry = lookup(key)
            cache[key] = entry_digest(entry) if entry is not None else None
        return cache[key]

    return digest_of


def sample_leaf(model: str, question_id: str, sample: int, digests: list[str]) -> str:
    """The leaf digest of one sample."""
    return sha256_hex(canonical_json([model, question_id, sample, sorted(digests)]))


def read_sample_keys(db_paths: Mapping[str, Path]) -> dict[tuple[str, str, int], list[str]] | None:
    """(virtual slug, question, sample) → entry keys over every DB, for every stored sample.

    None when some stored sample has no record (a DB written, or partly written, by an older
    version or the earlier implementation): an attestation over part of a run would mislead.
    """
    out: dict[tuple[str, str, int], list[str]] = {}
    for slug, path in db_paths.items():
        with ModelStore.open_existing(path) as store:
            keys = store.sample_entry_keys()
            stored = store.stored_slots()
        if keys is None or not stored <= keys.keys():
            return None
        out.update({(slug, qid, i): k for (qid, i), k in keys.items()})
    return out


def sample_entries_root(
    sample_keys: Mapping[tuple[str, str, int], list[str]], digest_of: DigestLookup
) -> str:
    """The Merkle root over every sample's leaf; a key missing from the cassettes is an error."""
    leaves = []
    for (model, question_id, sample), keys in sorted(sample_keys.items()):
        digests = []
        for key in keys:
            digest = digest_of(key)
            if digest is None:
                raise StoreError(
                    f"sample {model} {question_id} #{sample} used cassette entry {key}, which the "
                    "cassettes do not hold; the recording is incomplete"
                )
            digests.append(digest)
        leaves.append(sample_leaf(model, question_id, sample, digests))
    return merkle_root(leaves)
