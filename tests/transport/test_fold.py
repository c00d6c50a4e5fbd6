"""Folding a dead writer's journal into the cassettes: full disk, stale temp copies, nothing lost."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest

from oracleproto.errors import DiskFullError, TransportError
from oracleproto.primitives.fileio import TEMP_SUFFIX
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


class _FillsUp:
    """A temp file's handle on a disk that fills after ``room`` bytes (the fold writes entry by entry)."""

    def __init__(self, handle: Any, room: int) -> None:
        self._handle, self._room = handle, room

    def write(self, chunk: Any) -> int:
        if len(chunk) > self._room:
            raise OSError(errno.ENOSPC, "No space left on device")
        self._room -= len(chunk)
        return int(self._handle.write(chunk))


def test_a_disk_filling_half_way_through_a_streamed_fold_keeps_every_file_and_names_the_size(
    journal_only: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, digest = journal_only
    fold_journals(root)  # the cassette files as a good fold writes them
    before = {p: p.read_bytes() for p in all_cassette_files(root)}
    store = CassetteStore(root, writable=True)
    changed = next(e for e in store.effective_entries() if e.channel == "llm")
    changed.requests += 1
    store.put(changed)  # the LLM file is rewritten by the next fold
    real = store_module.atomic_write_with

    def filling(path: Path, fill: Any, **kwargs: Any) -> Any:
        return real(path, lambda handle: fill(_FillsUp(handle, 4096)), **kwargs)

    monkeypatch.setattr(store_module, "atomic_write_with", filling)
    with pytest.raises(DiskFullError) as raised:
        store.close()
    monkeypatch.undo()
    assert {p: p.read_bytes() for p in all_cassette_files(root)} == before
    assert not list(root.rglob(f"*{TEMP_SUFFIX}")), "a temp copy of the half-written file was left"
    llm_file = next(p for p in before if p.parent.name == "llm")
    # Not what the fold got through before the disk filled: at least the whole file's size.
    assert raised.value.needed_bytes is not None
    assert raised.value.needed_bytes >= len(before[llm_file]) + store_module.FOLD_MARGIN_BYTES
    assert has_leftover_journal(root)  # nothing lost: the next writer folds it
    fold_journals(root)
    assert not has_leftover_journal(root)
    assert CassetteStore(root, writable=False).root_digest() != digest  # the changed count is in
