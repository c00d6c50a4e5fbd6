"""The replay index is built file by file and serves what the parsed cassette set would, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from oracleproto.errors import CassetteIntegrityError
from oracleproto.primitives.fileio import atomic_write
from oracleproto.transport.entry import Entry
from oracleproto.transport.entry_stream import stream_entries
from oracleproto.transport.fileio import dump_entries, parse_entries
from oracleproto.transport.index import CacheIndex, fingerprint
from oracleproto.transport.layout import all_cassette_files, generation_dir
from oracleproto.transport.replay_index import is_ready, rebuild_for_replay
from oracleproto.transport.stats import ChannelStats, cassette_stats, channel_stats
from oracleproto.transport.store import CassetteStore
from oracleproto.verify.demo import find_demo_run
from tests.transport.helpers import chat_body, make_rr


def _entry(
    key: str, channel: str, *, generation: int, text: str, cost: float | None, requests: int = 1
) -> Entry:
    llm = channel == "llm"
    return Entry(
        key=key,
        channel=channel,  # type: ignore[arg-type]
        request_meta={
            "v": 1,
            "channel": channel,
            "method": "POST",
            "host": "loopback",
            "path": "/x",
            "query": [],
        },
        request_body="{}",
        context={"model": "m", "question_id": key[:2], "sample": 0, "step": 0} if llm else None,
        occurrence=0 if llm else None,
        method="POST",
        uri="http://loopback/x",
        request_headers={},
        status=200,
        reason="OK",
        response_headers={},
        body=chat_body(text, prompt_tokens=len(text), cost=cost),
        exception=None,
        latency_ms=3,
        recorded_at=f"2026-01-0{generation + 1}T00:00:00Z",
        requests=requests,
        generation=generation,
    )


def _write(root: Path, generation: int, rel: str, entries: list[Entry]) -> None:
    atomic_write(generation_dir(root, generation) / rel, dump_entries(entries))


def _multi_generation_set(root: Path) -> None:
    """Three files in generation 0, two in generation 2; generation 2 overrides some keys."""
    # Costs whose float sum depends on the order they are added in (the key order is the contract).
    _write(
        root,
        0,
        "llm/m_a.yaml",
        [_entry(f"a{i}", "llm", generation=0, text=f"a-{i}", cost=0.1 * i) for i in range(5)],
    )
    _write(
        root,
        0,
        "llm/m_b.yaml",
        [_entry(f"b{i}", "llm", generation=0, text=f"b-{i}", cost=1e-17) for i in range(4)],
    )
    _write(
        root,
        0,
        "search.yaml",
        [_entry(f"s{i}", "search", generation=0, text=f"s-{i}", cost=None, requests=3) for i in range(3)],
    )
    _write(
        root,
        2,
        "llm/m_a.yaml",
        [
            _entry("a1", "llm", generation=2, text="a-1 again", cost=0.3),
            _entry("a9", "llm", generation=2, text="new", cost=2.5),
        ],
    )
    _write(
        root,
        2,
        "search.yaml",
        [_entry("s0", "search", generation=2, text="s-0 again", cost=None, requests=7)],
    )


def _check_same_as_parsed(cassettes: Path, cache: Path, workers: int | None = None) -> None:
    parsed = CassetteStore(cassettes, writable=False)
    index = CacheIndex(cache)
    try:
        rebuild_for_replay(index, cassettes, fingerprint(cassettes), workers=workers)
        assert is_ready(index, fingerprint(cassettes))
        summary = index.summary()
        assert summary is not None and summary["root_digest"] == parsed.root_digest()
        streamed = {name: ChannelStats(**fields) for name, fields in summary["channels"].items()}
        expected = channel_stats(parsed.effective_entries())
        assert streamed == expected and list(streamed) == list(expected)
        for entry in parsed.effective_entries():
            assert index.get(entry.key) == entry
    finally:
        index.close()
    # A replay of the set is served from that index, with the same root digest and statistics.
    rr = make_rr(cassettes, "replay", cache_dir=cache)
    assert not rr.store.loaded and rr.root_digest() == parsed.root_digest()
    assert cassette_stats(cassettes, store=rr.store).channels == cassette_stats(cassettes).channels
    assert not rr.store.loaded
    rr.close()


def test_streamed_build_equals_the_parsed_set_over_generations(tmp_path: Path) -> None:
    cassettes = tmp_path / "cassettes"
    _multi_generation_set(cassettes)
    _check_same_as_parsed(cassettes, tmp_path / "cache")
    index = CacheIndex(tmp_path / "cache")
    try:
        overridden, kept, only_new = index.get("a1"), index.get("a2"), index.get("a9")
        assert overridden is not None and overridden.generation == 2 and b"a-1 again" in overridden.body
        assert kept is not None and kept.generation == 0 and only_new is not None
        search = index.get("s0")
        assert search is not None and search.requests == 7
    finally:
        index.close()


def test_streamed_build_equals_the_parsed_demo(tmp_path: Path) -> None:
    _check_same_as_parsed(find_demo_run() / "cassettes", tmp_path / "cache")


def test_corrupt_entry_in_the_second_file_fails_and_leaves_nothing_trusted(tmp_path: Path) -> None:
    cassettes = tmp_path / "cassettes"
    _multi_generation_set(cassettes)
    good = fingerprint(cassettes)
    cache = tmp_path / "cache"
    index = CacheIndex(cache)
    rebuild_for_replay(index, cassettes, good)
    assert is_ready(index, good)
    second = all_cassette_files(cassettes)[1]
    assert second.name == "m_b.yaml"
    pristine = second.read_bytes()
    second.write_bytes(pristine.replace(b"b-2", b"B-2"))  # still valid YAML; the digest no longer matches
    bad = fingerprint(cassettes)
    with pytest.raises(
        CassetteIntegrityError, match=r"m_b\.yaml, entry #2: entry b2 does not match its digest"
    ):
        rebuild_for_replay(index, cassettes, bad)
    # The build cut short is trusted for neither the new bytes nor the old ones.
    assert not index.is_fresh(bad) and not index.is_fresh(good) and index.summary() is None
    index.close()
    with pytest.raises(CassetteIntegrityError, match="does not match its digest"):
        make_rr(cassettes, "replay", cache_dir=cache)
    second.write_bytes(pristine)
    _check_same_as_parsed(cassettes, cache)  # restored: rebuilt, and trusted again


def _streamed(data: bytes, where: str) -> list[Entry]:
    out: list[Entry] = []
    assert stream_entries(data, where, out.append) == len(out)
    return out


def test_streamed_read_equals_the_list_read_on_the_demo() -> None:
    for path in all_cassette_files(find_demo_run() / "cassettes"):
        data = path.read_bytes()
        streamed, listed = _streamed(data, str(path)), parse_entries(data, str(path))
        assert streamed == listed and [e.digest for e in streamed] == [e.digest for e in listed]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"- 1\n", "not a cassette"),
        (b"interactions: {a: 1}\n", "not a cassette"),
        (b"interactions: [\n", "not valid YAML"),
        (b"interactions: &x []\n", "refused: anchor"),
    ],
)
def test_streamed_read_refuses_what_the_list_read_refuses(text: bytes, message: str) -> None:
    with pytest.raises(CassetteIntegrityError, match=message):
        parse_entries(text, "f.yaml")
    with pytest.raises(CassetteIntegrityError, match=message):
        _streamed(text, "f.yaml")


def test_streamed_read_refuses_a_duplicate_key(tmp_path: Path) -> None:
    one = _entry("k1", "search", generation=0, text="x", cost=None)
    data = dump_entries([one])
    doubled = data.replace(b"interactions:\n", b"").replace(b"version: 1\n", b"")
    text = b"interactions:\n" + doubled + doubled + b"version: 1\n"
    for read in (parse_entries, _streamed):
        with pytest.raises(CassetteIntegrityError, match=r"entry #1: duplicate of entry #0 \(key k1\)"):
            read(text, "f.yaml")
