"""The replay fast paths keep every byte: one-pass keys, loaded digests, the index hot path."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.context import CallContext, call_context
from oracleproto.primitives.hashing import canonical_json, sha256_hex
from oracleproto.sim.loopback import LoopbackServer
from oracleproto.transport.entry import _json_safe, entry_digest, interaction_digest, to_interaction
from oracleproto.transport.index import CacheIndex, fingerprint
from oracleproto.transport.keys import entry_key, entry_key_from_json, projection_json, request_fingerprint
from oracleproto.transport.replay_index import replay_index_dir
from oracleproto.transport.stats import cassette_stats
from oracleproto.transport.store import CassetteStore
from tests.transport.helpers import CHAT_PATH, echo_chat, make_rr

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(
    body=_json,
    model=st.none() | st.text(max_size=6),
    sample=st.integers(0, 5),
    occ=st.none() | st.integers(0, 3),
)
def test_one_pass_key_equals_the_schema_key(
    body: Any, model: str | None, sample: int, occ: int | None
) -> None:
    projection = {
        "v": 1,
        "channel": "llm",
        "method": "POST",
        "host": "loopback",
        "path": "/v1/chat/completions",
        "query": [["a", "b"]],
        "model": model,
        "body": body,
    }
    text, body_json = projection_json(projection)
    assert text == canonical_json(projection)
    assert body_json == canonical_json(body)
    assert sha256_hex(text) == request_fingerprint(projection)
    for ctx in (None, {"model": "m", "question_id": "q", "sample": sample, "step": 0}):
        assert entry_key_from_json(text, ctx, occ) == entry_key(projection, ctx, occ)


def _chat(text: str) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": text}], "temperature": 1.0}


async def _record(cassettes: Path, prompts: list[str]) -> None:
    with LoopbackServer(echo_chat) as server:
        rr = make_rr(cassettes, "record")
        async with httpx.AsyncClient(transport=rr.transport("llm"), base_url=server.base_url) as client:
            for i, prompt in enumerate(prompts):
                with call_context(CallContext("m", f"q{i}", 0)):
                    await client.post(CHAT_PATH, json=_chat(prompt))
        await rr.aclose()


def test_digest_with_bytes_matches_the_tree_copy() -> None:
    interaction = {
        "oracleproto": {"digest": "x", "k": [1, {"b": b"\x00\xff"}]},
        "response": {"body": b"\x89"},
    }
    meta = {k: v for k, v in interaction["oracleproto"].items() if k != "digest"}
    expected = sha256_hex(canonical_json(_json_safe({**interaction, "oracleproto": meta})))
    assert interaction_digest(interaction) == expected
    assert base64.b64encode(b"\x89").decode() in canonical_json(_json_safe(interaction))


async def test_loaded_digest_is_reused_and_dropped_on_put(tmp_path: Path) -> None:
    await _record(tmp_path, ["one", "two"])
    store = CassetteStore(tmp_path, writable=True)
    entry = store.effective_entries()[0]
    assert entry.digest == entry_digest(entry) == to_interaction(entry)["oracleproto"]["digest"]
    loaded = entry.digest
    entry.requests += 1
    store.put(entry)  # a changed entry must not keep the digest it was loaded with
    # put keeps the changed entry's own digest (issue 18: the fold reuses it instead of hashing
    # again); to_interaction always computes it afresh.
    assert entry.digest != loaded
    assert entry.digest == entry_digest(entry) == to_interaction(entry)["oracleproto"]["digest"]
    store.close()


async def test_replay_from_index_parses_no_yaml_and_gives_the_same_root(tmp_path: Path) -> None:
    cassettes = tmp_path / "cassettes"
    await _record(cassettes, ["alpha", "beta", "gamma"])
    expected_root = CassetteStore(cassettes, writable=False).root_digest()
    expected_stats = cassette_stats(cassettes)
    cache = replay_index_dir(tmp_path / "cache", fingerprint(cassettes))

    cold = make_rr(cassettes, "replay", cache_dir=cache)
    # No index yet: the cassettes were streamed into it, and this replay is served from it too.
    assert not cold.store.loaded and cold.store.root_digest() == expected_root
    await cold.aclose()

    warm = make_rr(cassettes, "replay", cache_dir=cache)
    assert not warm.store.loaded
    async with httpx.AsyncClient(transport=warm.transport("llm"), base_url="http://127.0.0.1:9") as client:
        with call_context(CallContext("m", "q1", 0)):
            replayed = await client.post(CHAT_PATH, json=_chat("beta"))
    assert b"ateb" in replayed.content  # the recorded answer (the loopback reversed the prompt)
    assert warm.store.root_digest() == expected_root
    stats = cassette_stats(cassettes, store=warm.store)
    assert stats.channels == expected_stats.channels
    assert not warm.store.loaded  # root digest and statistics came from the index summary
    await warm.aclose()


async def test_index_folder_follows_the_cassette_bytes(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    await _record(a, ["same"])
    await _record(b, ["other"])
    root = tmp_path / "cache"
    assert replay_index_dir(root, fingerprint(a)) != replay_index_dir(root, fingerprint(b))
    # A stale index (other bytes) is rebuilt, never trusted.
    shared = root / "one"
    make_rr(a, "replay", cache_dir=shared).close()
    rr = make_rr(b, "replay", cache_dir=shared)
    assert rr.store.root_digest() == CassetteStore(b, writable=False).root_digest()
    index = CacheIndex(shared)
    assert index.is_fresh(fingerprint(b)) and not index.is_fresh(fingerprint(a))
    index.close()
    rr.close()
