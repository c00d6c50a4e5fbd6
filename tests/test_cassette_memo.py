"""The suite's per-worker cassette memo parses each content once and reads back what the parse gave."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

from oracleproto.errors import CassetteIntegrityError
from oracleproto.transport import entry_stream
from oracleproto.transport.fileio import dump_entries, parse_entries
from oracleproto.transport.safe_yaml import MAX_ENTRY_CHARS, UnsafeYamlError, load_untrusted
from tests.cassette_memo import ENV_VAR, CassetteMemo
from tests.transport.test_keys_and_store import _entry

CASSETTE = dump_entries([_entry("a" * 64), _entry("b" * 64, b"y" * 300)])


class _Parser:
    """``load_untrusted`` that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(
        self, data: bytes, *, max_entry_chars: int, on_item: Callable[[Any], None] | None = None
    ) -> Any:
        self.calls += 1
        return load_untrusted(data, max_entry_chars=max_entry_chars, on_item=on_item)


def _streamed(read: Callable[..., Any], data: bytes) -> tuple[Any, list[Any]]:
    items: list[Any] = []
    document = read(data, max_entry_chars=MAX_ENTRY_CHARS, on_item=items.append)
    return document, items


def test_the_same_bytes_are_parsed_once_and_read_back_as_the_parse_gave_them() -> None:
    parser = _Parser()
    memo = CassetteMemo(parser)
    parsed = _streamed(load_untrusted, CASSETTE)
    first = _streamed(memo, CASSETTE)
    second = _streamed(memo, CASSETTE)
    assert parser.calls == 1
    assert first == second == parsed
    assert parsed[0]["interactions"] == [None, None]  # a streamed read keeps no item in the document
    whole = memo(CASSETTE, max_entry_chars=MAX_ENTRY_CHARS)  # the whole document: another key
    assert parser.calls == 2
    assert whole == load_untrusted(CASSETTE) and whole["interactions"] == parsed[1]


def test_each_reader_gets_objects_of_its_own() -> None:
    memo = CassetteMemo(_Parser())
    document, items = _streamed(memo, CASSETTE)
    items[0]["request"]["body"] = "changed by a reader"
    document["version"] = "changed"
    again_document, again_items = _streamed(memo, CASSETTE)
    assert again_items == _streamed(load_untrusted, CASSETTE)[1]
    assert again_document["version"] != "changed"


def test_the_entry_cap_is_part_of_the_key() -> None:
    parser = _Parser()
    memo = CassetteMemo(parser)
    _streamed(memo, CASSETTE)
    with pytest.raises(UnsafeYamlError, match="over the entry limit of 400"):
        memo(CASSETTE, max_entry_chars=400, on_item=lambda item: None)
    assert parser.calls == 2


def test_bytes_that_fail_are_parsed_again_every_time() -> None:
    parser = _Parser()
    memo = CassetteMemo(parser)
    for _ in range(2):
        with pytest.raises(UnsafeYamlError, match="alias"):
            memo(b"a: &x [1]\nb: *x\n", max_entry_chars=MAX_ENTRY_CHARS)
    assert parser.calls == 2


def test_a_reader_refusing_an_item_is_stopped_at_that_item_on_a_hit_too() -> None:
    memo = CassetteMemo(_Parser())
    _streamed(memo, CASSETTE)
    seen: list[Any] = []

    def refuse_the_second(item: Any) -> None:
        seen.append(item)
        if len(seen) == 2:
            raise CassetteIntegrityError("refused")

    with pytest.raises(CassetteIntegrityError):
        memo(CASSETTE, max_entry_chars=MAX_ENTRY_CHARS, on_item=refuse_the_second)
    assert seen == _streamed(load_untrusted, CASSETTE)[1]


def test_the_least_recently_used_go_first_beyond_the_cap() -> None:
    parser = _Parser()
    others = [dump_entries([_entry(c * 64)]) for c in "cde"]
    sizes = []
    for data in others:
        probe = CassetteMemo(_Parser())
        _streamed(probe, data)
        sizes.append(probe.kept_bytes)
    memo = CassetteMemo(parser, cap_bytes=sizes[0] + sizes[1] + sizes[2] // 2)
    _streamed(memo, others[0])
    _streamed(memo, others[1])
    _streamed(memo, others[0])  # now the most recently used
    _streamed(memo, others[2])  # pushes out others[1]
    assert parser.calls == 3 and memo.kept_bytes <= memo.cap_bytes
    _streamed(memo, others[0])
    assert parser.calls == 3
    _streamed(memo, others[1])
    assert parser.calls == 4


def test_the_suite_reads_cassettes_through_the_memo_unless_it_is_turned_off(
    _cassette_memo: CassetteMemo,
) -> None:
    installed = entry_stream.load_untrusted is _cassette_memo
    assert installed == (os.environ.get(ENV_VAR, "1") != "0")
    assert parse_entries(CASSETTE, "m.yaml") == parse_entries(CASSETTE, "m.yaml")


def test_an_unmarked_test_reads_back(_cassette_memo: CassetteMemo, monkeypatch: pytest.MonkeyPatch) -> None:
    parser = _Parser()
    monkeypatch.setattr(_cassette_memo, "parse", parser)
    unique = dump_entries([_entry("f" * 64, b"only in this test")])
    assert _streamed(_cassette_memo, unique) == _streamed(_cassette_memo, unique)
    assert parser.calls == 1


@pytest.mark.yaml_parsed
def test_a_marked_test_parses_for_real(_cassette_memo: CassetteMemo, monkeypatch: pytest.MonkeyPatch) -> None:
    parser = _Parser()
    monkeypatch.setattr(_cassette_memo, "parse", parser)
    assert _streamed(_cassette_memo, CASSETTE) == _streamed(_cassette_memo, CASSETTE)
    assert parser.calls == 2
