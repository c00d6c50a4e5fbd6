"""Folding a dead writer's journal into the cassettes: full disk, stale temp copies, nothing lost."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest

from oracleproto.errors import DiskFullError, TransportError
from oracleproto.transport import store as store_module
from oracleproto.transport.entry import entry_digest, to_json_line
from oracleproto.transport.fileio import read_entries
from oracleproto.transport.integrity import merkle_root
from oracleproto.transport.layout import JOURNAL_DIR, all_cassette_files
from oracleproto.transport.store import CassetteStore, fold_journals, has_leftover_journal, rebuild_index
from oracleproto.verify.demo import find_demo_run


@pytest.fixture
def journal_only(tmp_path: Path) -> tuple[Path, str]:
    """A cassette dir whose every entry is in a dead writer's journal; the root digest they make."""
    demo = find_demo_run() / "cassettes"
    entries = read_entries(demo / "search.yaml") + read_entries(demo / "llm" / "sim__hasty__r5__c4.yaml")
    root = tmp_path / "cassettes"
    (root / JOURNAL_DIR).mkdir(parents=True)
    lines = "".join(to_json_line(e) + "\n" for e in entries)
    (root / JOURNAL_DIR / "4242-deadbeef.jsonl").write_text(lines, encoding="utf-8")
    return root, merkle_root([entry_digest(e) for e in entries])


def test_a_full_disk_during_the_fold_says_how_much_to_free_and_loses_nothing(
    journal_only: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, digest = journal_only
    journal_bytes = (root / JOURNAL_DIR / "4242-deadbeef.jsonl").stat().st_size

    def full(path: Path, fill: Any, **_: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store_module, "atomic_write_with", full)
    with pytest.raises(DiskFullError) as raised:
        fold_journals(root)
    message = str(raised.value)
    assert message.startswith(f"no space left on the device holding {root} while folding the crash journal")
    assert "free at least that much on that filesystem" in message
    assert f"every recorded entry stays in {root / JOURNAL_DIR} until a fold succeeds" in message
    assert raised.value.needed_bytes is not None and raised.value.needed_bytes > journal_bytes
    assert has_leftover_journal(root)

    monkeypatch.undo()  # space freed: the next fold takes the journal over
    fold_journals(root)
    assert not has_leftover_journal(root)
    assert CassetteStore(root, writable=False).root_digest() == digest


def test_the_fold_removes_temp_copies_a_killed_fold_left(journal_only: tuple[Path, str]) -> None:
    root, digest = journal_only
    stale = root / "llm" / ".sim__careful__r5__c4.yaml.k1ll3d.tmp"
    stale.parent.mkdir()
    stale.write_bytes(b"interactions: [half a file")
    fold_journals(root)
    assert not stale.exists()
    assert all_cassette_files(root) and CassetteStore(root, writable=False).root_digest() == digest


def test_rebuild_index_folds_a_journal_and_refuses_a_folder_without_entries(
    journal_only: tuple[Path, str], tmp_path: Path
) -> None:
    root, digest = journal_only
    assert rebuild_index(root, tmp_path / "cache") == len(
        CassetteStore(root, writable=False).effective_entries()
    )
    assert not has_leftover_journal(root) and CassetteStore(root, writable=False).root_digest() == digest
    with pytest.raises(TransportError, match=r"no cassette entries .* nothing to index"):
        rebuild_index(tmp_path / "empty", tmp_path / "cache2")
