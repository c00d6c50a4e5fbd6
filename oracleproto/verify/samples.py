"""Check the per-sample attestation: the manifest's ``sample_entries_root`` against db/ and cassettes/."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from oracleproto.errors import OracleprotoError
from oracleproto.store import Manifest
from oracleproto.store.sample_entries import read_sample_keys, sample_entries_root
from oracleproto.verify.findings import Check, failed, passed, skipped

WHAT = "sample entries root"


def check_sample_entries(
    manifest: Manifest, db_paths: Mapping[str, Path], digests: Mapping[str, str] | None
) -> Check:
    """Recompute the Merkle root over the entries each stored sample used and compare it.

    ``digests`` are the effective entries' digests from the cassette check (None when it failed).
    """
    recorded = manifest.sample_entries_root
    if manifest.finished_at is None:
        return skipped(WHAT, "the run has not finished; the root is written when it does")
    try:
        keys = read_sample_keys(db_paths)
    except OracleprotoError as exc:
        return failed(WHAT, f"the per-sample entry records could not be read: {exc}")
    if recorded is None:
        if keys:
            return failed(WHAT, "db/ records the entries each sample used; manifest.json has no root")
        return skipped(WHAT, "not every sample has an entry record (recorded by an older version)")
    if keys is None:
        return failed(WHAT, "manifest.json has a sample_entries_root; a stored sample has no entry record")
    if digests is None:
        return skipped(WHAT, "not computed: the cassettes failed their checks above")
    try:
        actual = sample_entries_root(keys, digests.get)
    except OracleprotoError as exc:
        return failed(WHAT, str(exc))
    if actual == recorded:
        return passed(WHAT, f"{len(keys)} samples, each bound to the entries it used")
    return failed(
        WHAT,
        f"manifest.json sample_entries_root is {recorded[:16]}…, the samples in db/ and the entries in "
        f"cassettes/ give {actual[:16]}…: an entry a sample used, or a sample's entry list, was changed",
    )
