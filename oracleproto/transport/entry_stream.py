"""Reading a cassette file one entry at a time: what a streamed index build holds is one entry.

``fileio.parse_entries`` collects a file's entries into a list through it (the store keeps them
all anyway); :func:`stream_entries` parses the bytes with every check — untrusted YAML, every digest
and type verified, a key at most once per file — and hands each entry on as soon as its YAML
item ends, so the Python objects of a file never exist all at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from oracleproto.errors import CassetteIntegrityError
from oracleproto.transport import safe_yaml
from oracleproto.transport.entry import Entry, from_interaction
from oracleproto.transport.safe_yaml import UnsafeYamlError, load_untrusted


def stream_entries(data: bytes, where: str, sink: Callable[[Entry], None]) -> int:
    """Parse and verify a cassette file's entries, passing each to ``sink`` in file order; the count.

    Raises ``CassetteIntegrityError`` naming ``where`` (and the entry) on the first problem; entries
    before it have already been passed on, so a caller building something from them must not trust
    it until this returns.
    """
    seen: dict[str, int] = {}

    def item(raw: Any) -> None:
        i = len(seen)
        entry = from_interaction(raw, f"{where}, entry #{i}")
        first = seen.setdefault(entry.key, i)
        if first != i:
            raise CassetteIntegrityError(
                f"{where}, entry #{i}: duplicate of entry #{first} (key {entry.key}); a cassette file holds "
                "each key once — restore the file from the original recording or re-record it"
            )
        sink(entry)

    try:
        doc = load_untrusted(data, max_entry_chars=safe_yaml.MAX_ENTRY_CHARS, on_item=item)
    except UnsafeYamlError as exc:
        raise CassetteIntegrityError(
            f"{where}: refused: {exc}; oracleproto does not write such files, so this one was crafted or "
            "damaged — restore it from the original recording or re-record it"
        ) from exc
    except (yaml.YAMLError, RecursionError) as exc:
        raise CassetteIntegrityError(f"{where}: not valid YAML ({exc}); restore or re-record it") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("interactions"), list):
        raise CassetteIntegrityError(f"{where}: not a cassette (no 'interactions' list)")
    return len(seen)
