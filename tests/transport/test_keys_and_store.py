"""Pure key projection, cassette format (golden), crash journal recovery."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from oracleproto.context import CallContext
from oracleproto.errors import CassetteIntegrityError
from oracleproto.transport.entry import Entry
from oracleproto.transport.fileio import dump_entries, parse_entries
from oracleproto.transport.keys import (
    KEY_SCHEMA_VERSION,
    canonical_request,
    context_dict,
    entry_key,
    normalise_host,
    normalise_path,
)
from oracleproto.transport.store import CassetteStore


def _body(**extra: object) -> bytes:
    return json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], **extra}).encode()


def test_projection_normalises_url_and_drops_transport_only_fields() -> None:
    a = canonical_request(
        "search", "post", "https://API.tavily.com:443//search/?api_key=tvly-x&b=1", _body(api_key="k")
    )
    b = canonical_request("search", "POST", "https://api.tavily.com/search?b=1", _body(timeout=30))
    assert a == b
    assert a["host"] == "api.tavily.com" and a["path"] == "/search" and a["query"] == [["b", "1"]]
    assert a["v"] == KEY_SCHEMA_VERSION == 1


def test_stream_and_model_change_the_key() -> None:
    plain = canonical_request("llm", "POST", "https://x/v1/chat/completions", _body())
    streamed = canonical_request("llm", "POST", "https://x/v1/chat/completions", _body(stream=True))
    assert entry_key(plain, None, None) != entry_key(streamed, None, None)
    assert plain["model"] == "m"


def test_loopback_ports_are_normalised() -> None:
    assert normalise_host("http://127.0.0.1:51234/x") == normalise_host("http://localhost:9/x") == "loopback"
    assert normalise_host("http://example.org:8080/") == "example.org:8080"
    assert normalise_path("http://h/") == "/"


def test_context_and_occurrence_change_the_key() -> None:
    proj = canonical_request("llm", "POST", "https://x/c", _body())
    keys = {
        entry_key(proj, context_dict(CallContext("m", "q", s, step)), occ)
        for s in range(3)
        for step in range(2)
        for occ in range(2)
    }
    assert len(keys) == 12
    assert entry_key(proj, None, None) == entry_key(proj, None, None)


def _entry(key: str, body: bytes = b'{"ok":true}') -> Entry:
    return Entry(
        key=key,
        channel="search",
        request_meta={"host": "api.tavily.com", "path": "/search"},
        request_body='{"query":"q"}',
        context=None,
        occurrence=None,
        method="POST",
        uri="https://api.tavily.com/search",
        request_headers={"content-type": ["application/json"]},
        status=200,
        reason="OK",
        response_headers={"content-type": ["application/json"]},
        body=body,
        exception=None,
        latency_ms=12,
        recorded_at="2026-01-01T00:00:00.000000+00:00",
        attempts=[
            {
                "attempt": 0,
                "status": 200,
                "exception": None,
                "latency_ms": 12,
                "recorded_at": "2026-01-01T00:00:00.000000+00:00",
            }
        ],
    )


def test_cassette_format_is_pinned(snapshot: SnapshotAssertion) -> None:
    data = dump_entries([_entry("b" * 64, b'\n   \n{"padded": true}'), _entry("a" * 64, b"\xff\xfebinary")])
    assert data.decode() == snapshot
    parsed = parse_entries(data, "memory")
    assert [e.key for e in parsed] == ["a" * 64, "b" * 64]
    assert parsed[0].body == b"\xff\xfebinary"
    assert parsed[1].body == b'\n   \n{"padded": true}'


def test_malformed_cassette_is_named() -> None:
    with pytest.raises(CassetteIntegrityError, match=r"memory: not a cassette"):
        parse_entries(b"just: text\n", "memory")
    with pytest.raises(CassetteIntegrityError, match=r"memory, entry #0: malformed entry"):
        parse_entries(b"interactions:\n- request: {}\n", "memory")


def _crash_after_put(root: str) -> None:
    store = CassetteStore(Path(root), writable=True)
    store.put(_entry("c" * 64))
    store.put(_entry("d" * 64))
    os._exit(0)  # like kill -9: no close, no compaction


def test_killed_writer_loses_nothing_completed(tmp_path: Path) -> None:
    proc = multiprocessing.get_context("fork").Process(target=_crash_after_put, args=(str(tmp_path),))
    proc.start()
    proc.join(60)
    [journal] = list((tmp_path / ".journal").glob("*.jsonl"))
    with open(journal, "ab") as handle:
        handle.write(b'{"torn": ')  # an in-flight write cut short
    assert not (tmp_path / "search.yaml").exists()
    store = CassetteStore(tmp_path, writable=True)
    store.close()
    assert [e.key for e in CassetteStore(tmp_path, writable=False).effective_entries()] == [
        "c" * 64,
        "d" * 64,
    ]
    assert not journal.exists()
