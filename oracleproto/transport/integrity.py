"""Merkle-style root digest over a set of entry digests."""

from __future__ import annotations

from collections.abc import Iterable

from oracleproto.primitives.hashing import sha256_hex

#: Root of an empty cassette set (sha256 of the empty string).
EMPTY_ROOT = sha256_hex(b"")


def merkle_root(digests: Iterable[str]) -> str:
    """Binary Merkle root over the sorted, de-duplicated leaf digests (odd node carried up)."""
    level = sorted(set(digests))
    if not level:
        return EMPTY_ROOT
    level = [sha256_hex(f"leaf:{d}") for d in level]
    while len(level) > 1:
        nxt = [sha256_hex(f"node:{level[i]}{level[i + 1]}") for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]
