"""Cassette checks without replaying: every entry against its digest, the file bytes, the root digest."""

from __future__ import annotations

from pathlib import Path

from oracleproto.errors import CassetteIntegrityError
from oracleproto.store import Manifest
from oracleproto.transport.entry import Entry, entry_digest
from oracleproto.transport.fileio import dump_entries, parse_entries, read_cassette_bytes
from oracleproto.transport.integrity import merkle_root
from oracleproto.transport.layout import JOURNAL_DIR, all_cassette_files
from oracleproto.verify.findings import Check, byte_location, failed, passed, skipped


def _check_file(path: Path, label: str) -> tuple[Check, list[Entry] | None]:
    """One file: parse + per-entry digest, then its bytes against the deterministic serialisation."""
    try:
        data = read_cassette_bytes(path)
        entries = parse_entries(data, label)
    except CassetteIntegrityError as exc:
        return failed(label, str(exc)), None
    canonical = dump_entries(entries)
    if canonical != data:
        # Every entry verified, so the difference is outside the digested content (layout, version).
        return (
            failed(
                label,
                f"{byte_location(canonical, data)}: bytes differ from the deterministic serialisation of "
                "its verified entries (edited outside any entry); restore the file",
            ),
            None,
        )
    return passed(label, f"{len(entries)} entries match their digests"), entries


def check_cassettes(
    run_root: Path, cassette_dir: Path, manifest: Manifest
) -> tuple[list[Check], dict[str, str] | None]:
    """Every cassette file and entry, then the Merkle root against ``manifest.cassettes.root_digest``.

    Also returns key → digest of each effective entry (latest generation wins), for the sample
    attestation, so the cassettes are parsed once; None when a file failed or there are none.
    """
    checks: list[Check] = []
    if manifest.cassettes is None:
        return [
            skipped("cassettes", "the manifest has no 'cassettes' entry (run not recorded by oracleproto)")
        ], None
    files = all_cassette_files(cassette_dir) if cassette_dir.is_dir() else []
    digests: list[str] = []
    effective: dict[str, str] = {}
    complete = True
    for path in files:  # generation order, so a later generation's entry replaces an earlier one
        check, found = _check_file(path, str(path.relative_to(run_root)))
        checks.append(check)
        if found is None:
            complete = False
            continue
        for entry in found:
            digest = entry_digest(entry)
            digests.append(digest)
            effective[entry.key] = digest
    journal = cassette_dir / JOURNAL_DIR
    leftovers = (
        sorted(p.name for p in journal.glob("*.jsonl") if p.stat().st_size) if journal.is_dir() else []
    )
    if leftovers:
        checks.append(
            failed(
                "cassettes journal",
                f"{journal.relative_to(run_root)} holds uncompacted entries ({', '.join(leftovers)}); "
                "the recording did not close cleanly — resume it (rerun the command that recorded it "
                f"with `--run-id {manifest.run_id}`), which folds the journal into the cassettes",
            )
        )
    recorded = manifest.cassettes.root_digest
    if not complete:
        checks.append(skipped("cassettes root digest", "not computed: a cassette file failed above"))
    elif recorded is None:
        why = (
            "the run has not finished (finished_at is null): resume it (rerun the command that "
            f"recorded it with `--run-id {manifest.run_id}`) and verify the finished run"
            if manifest.finished_at is None
            else "manifest.json cassettes.root_digest is null"
        )
        checks.append(failed("cassettes root digest", why))
    else:
        actual = merkle_root(digests)
        if actual == recorded:
            checks.append(passed("cassettes root digest", f"{len(digests)} entries, root {actual[:16]}…"))
        else:
            checks.append(
                failed(
                    "cassettes root digest",
                    f"manifest.json cassettes.root_digest is {recorded}, the {len(digests)} entries on disk "
                    f"hash to {actual} (an entry was added, removed or the manifest was edited)",
                )
            )
    return checks, effective if complete else None
