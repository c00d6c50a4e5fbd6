"""A recorder's later folds reuse what its last fold wrote, and never a stale text (issue 18)."""

from __future__ import annotations

import dataclasses
import hashlib
import io
from pathlib import Path
from typing import Any

import pytest

from oracleproto.transport import fold_memo
from oracleproto.transport import store as store_module
from oracleproto.transport.entry import Entry
from oracleproto.transport.fileio import dump_entries, read_entries
from oracleproto.transport.store import CassetteStore, remove_entries
from oracleproto.verify.demo import find_demo_run


@pytest.fixture
def demo_entries() -> list[Entry]:
    entries = read_entries(find_demo_run() / "cassettes" / "search.yaml")
    assert len(entries) >= 6
    return entries


def _fresh(entry: Entry) -> Entry:
    return dataclasses.replace(entry, digest=None)


def _reference(store: CassetteStore) -> bytes:
    """The file as a fold that parses and renders everything writes it (digests recomputed)."""
    return dump_entries(_fresh(e) for e in store.effective_entries())


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    rendered: list[str] = []
    real = fold_memo.entry_fragment

    def counted(entry: Entry) -> str:
        rendered.append(entry.key)
        return real(entry)

    monkeypatch.setattr(fold_memo, "entry_fragment", counted)
    return rendered


def _no_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(path: Path) -> Any:
        raise AssertionError(f"the fold parsed {path} although it holds exactly what it wrote")

    monkeypatch.setattr(store_module, "read_entries", refused)


def test_a_second_fold_copies_unchanged_entries_and_writes_a_re_stored_one_anew(
    tmp_path: Path, demo_entries: list[Entry], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = CassetteStore(tmp_path, writable=True)
    first, later = demo_entries[:4], demo_entries[4:]
    for entry in first:
        store.put(_fresh(entry))
    store.compact()
    path = tmp_path / "search.yaml"
    changed = store.get(first[1].key)
    assert changed is not None
    old_text = dump_entries([changed])[len("interactions:\n") : -len("version: 1\n")]
    assert old_text in path.read_bytes()

    rendered = _counting(monkeypatch)
    _no_parse(monkeypatch)
    changed.requests += 7  # changed in place and stored again, as the recorder does on a hit
    store.put(changed)
    for entry in later:
        store.put(_fresh(entry))
    store.compact()

    # Only the staged entries were rendered; the file is what a full rewrite writes.
    assert sorted(rendered) == sorted([changed.key, *(e.key for e in later)])
    data = path.read_bytes()
    assert data == _reference(store)
    # A stale memo would have copied the entry's old text (requests before the change).
    assert old_text not in data
    assert f"requests: {changed.requests}\n".encode() in data
    store.close()
    assert read_entries(path) == store.effective_entries()


def test_a_fold_after_another_writer_changed_the_file_merges_it_again(
    tmp_path: Path, demo_entries: list[Entry]
) -> None:
    ours = CassetteStore(tmp_path, writable=True)
    for entry in demo_entries[:3]:
        ours.put(_fresh(entry))
    ours.compact()

    other = CassetteStore(tmp_path, writable=True)  # another process recording into the same run
    other.put(_fresh(demo_entries[3]))
    other.close()
    ours.put(_fresh(demo_entries[4]))
    ours.compact()

    keys = [e.key for e in read_entries(tmp_path / "search.yaml")]
    assert keys == sorted(e.key for e in demo_entries[:5])  # the other writer's entry is kept
    ours.close()


def test_a_fold_after_entries_were_removed_does_not_bring_them_back(
    tmp_path: Path, demo_entries: list[Entry]
) -> None:
    store = CassetteStore(tmp_path, writable=True)
    for entry in demo_entries[:4]:
        store.put(_fresh(entry))
    store.compact()
    gone = demo_entries[0].key
    assert remove_entries(tmp_path, 0, {gone}) == 1

    store.put(_fresh(demo_entries[4]))
    store.compact()
    keys = {e.key for e in read_entries(tmp_path / "search.yaml")}
    assert gone not in keys and demo_entries[4].key in keys
    store.close()


def _written(entries: list[Entry], reuse: dict[str, bytes] | None = None) -> tuple[bytes, fold_memo.Written]:
    out = io.BytesIO()
    written = fold_memo.write_reusing(out, entries, reuse)
    assert written is not None
    return out.getvalue(), written


def test_write_reusing_without_reuse_writes_dump_entries(demo_entries: list[Entry]) -> None:
    data, written = _written(demo_entries)
    assert data == dump_entries(demo_entries)
    assert written.sha256 == hashlib.sha256(data).hexdigest()
    assert fold_memo.rendered_size(demo_entries) == len(data)
    for entry in demo_entries:
        start, end = written.spans[entry.key]
        assert data[start:end] == dump_entries([entry])[len("interactions:\n") : -len("version: 1\n")]
    empty, nothing = _written([])
    assert empty == dump_entries([]) and nothing.spans == {}
    assert fold_memo.write_reusing(io.BytesIO(), demo_entries, remember=False) is None


def test_write_reusing_takes_the_given_text_of_a_key_as_is(demo_entries: list[Entry]) -> None:
    data, written = _written(demo_entries)
    first = demo_entries[0].key
    reused = fold_memo.reusable(data, written, staged=[e.key for e in demo_entries[1:]])
    assert set(reused) == {first}
    again, _ = _written(demo_entries, {first: bytes(reused[first])})
    assert again == data
    marked, _ = _written(demo_entries, {first: b"- marked\n"})
    assert b"- marked\n" in marked and marked != data
