"""Record then replay through real httpx against loopback servers; replay with sockets blocked."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from pytest_socket import disable_socket, enable_socket, socket_allow_hosts

from oracleproto.context import CallContext, call_context, logical_call
from oracleproto.errors import CassetteIntegrityError, ConfigError, ReplayMissError, SampleContextError
from oracleproto.sim.loopback import LoopbackResponse, LoopbackServer
from oracleproto.transport import extensions as ext
from oracleproto.transport.entry import entry_digest
from oracleproto.transport.integrity import merkle_root
from tests.transport.helpers import CHAT_PATH, Counting, chat_body, echo_chat, make_rr


def _chat(content: str, temperature: float = 0.7) -> dict[str, object]:
    return {"model": "m", "messages": [{"role": "user", "content": content}], "temperature": temperature}


async def test_samples_get_distinct_entries_and_replay_offline(tmp_path: Path) -> None:
    server_handler = Counting(
        lambda r: LoopbackResponse(body=chat_body(f"answer {len(server_handler.requests)}"))
    )
    with LoopbackServer(server_handler) as server:
        rr = make_rr(tmp_path, "record")
        async with httpx.AsyncClient(transport=rr.transport("llm"), base_url=server.base_url) as client:
            recorded = []
            for sample in range(3):
                with call_context(CallContext("m", "q1", sample)):
                    resp = await client.post(CHAT_PATH, json=_chat("same prompt"))
                    recorded.append(resp.content)
                    assert resp.extensions[ext.FROM_CASSETTE] is False
        await rr.aclose()
    assert len(server_handler.requests) == 3
    assert len(set(recorded)) == 3  # sample identity is in the key: no collapse

    disable_socket()
    try:
        rr2 = make_rr(tmp_path, "replay")
        async with httpx.AsyncClient(transport=rr2.transport("llm"), base_url="http://127.0.0.1:9") as client:
            for sample in range(3):
                with call_context(CallContext("m", "q1", sample)):
                    resp = await client.post(CHAT_PATH, json=_chat("same prompt"))
                assert resp.content == recorded[sample]
                assert resp.extensions[ext.FROM_CASSETTE] is True
                assert len(resp.extensions[ext.ENTRY_KEY]) == 64
        await rr2.aclose()
    finally:
        enable_socket()
        socket_allow_hosts(["127.0.0.1", "::1"])


async def test_sampled_llm_call_without_context_is_refused(tmp_path: Path) -> None:
    rr = make_rr(tmp_path, "replay")
    async with httpx.AsyncClient(transport=rr.transport("llm"), base_url="http://127.0.0.1:9") as client:
        with pytest.raises(SampleContextError, match=r"temperature 0\.7.*no sample identity"):
            await client.post(CHAT_PATH, json=_chat("x"))
        body = {"model": "m", "messages": []}
        with pytest.raises(SampleContextError, match="absent"):
            await client.post(CHAT_PATH, json=body)


async def test_occurrence_counter_separates_identical_calls_in_one_trajectory(tmp_path: Path) -> None:
    handler = Counting(lambda r: LoopbackResponse(body=chat_body(str(len(handler.requests)))))
    with LoopbackServer(handler) as server:
        rr = make_rr(tmp_path, "record")
        async with httpx.AsyncClient(transport=rr.transport("llm"), base_url=server.base_url) as client:
            with call_context(CallContext("m", "q", 0)):
                a = await client.post(CHAT_PATH, json=_chat("p"))
                b = await client.post(CHAT_PATH, json=_chat("p"))
        await rr.aclose()
    assert a.extensions[ext.ENTRY_KEY] != b.extensions[ext.ENTRY_KEY]
    assert a.content != b.content


async def test_retry_then_success_is_one_entry_replayed_as_final(tmp_path: Path) -> None:
    statuses = iter([429, 503, 200])

    def handler(_: object) -> LoopbackResponse:
        status = next(statuses)
        return LoopbackResponse(status=status, body=chat_body("ok") if status == 200 else b'{"error":"busy"}')

    with LoopbackServer(handler) as server:  # type: ignore[arg-type]
        rr = make_rr(tmp_path, "record")
        async with httpx.AsyncClient(transport=rr.transport("llm"), base_url=server.base_url) as client:
            with call_context(CallContext("m", "q", 0)), logical_call() as call:
                for attempt in range(3):
                    call.attempt = attempt
                    resp = await client.post(CHAT_PATH, json=_chat("p"))
            assert resp.status_code == 200
        await rr.aclose()
    entries = rr.store.effective_entries()
    assert len(entries) == 1
    assert [a["status"] for a in entries[0].attempts] == [429, 503, 200]

    disable_socket()
    try:
        rr2 = make_rr(tmp_path, "replay")
        async with httpx.AsyncClient(transport=rr2.transport("llm"), base_url="http://127.0.0.1:9") as client:
            with call_context(CallContext("m", "q", 0)), logical_call():
                resp = await client.post(CHAT_PATH, json=_chat("p"))
        assert resp.status_code == 200
        assert json.loads(resp.content)["choices"][0]["message"]["content"] == "ok"
    finally:
        enable_socket()
        socket_allow_hosts(["127.0.0.1", "::1"])


async def test_terminal_failures_replay_as_same_status_and_exception(tmp_path: Path) -> None:
    def handler(request: object) -> LoopbackResponse:
        content = json.loads(request.body)["messages"][0]["content"]  # type: ignore[attr-defined]
        if content == "policy":
            return LoopbackResponse(status=400, body=b'{"error":{"code":"content_filter"}}')
        return LoopbackResponse(drop_connection=True)

    with LoopbackServer(handler) as server:  # type: ignore[arg-type]
        rr = make_rr(tmp_path, "record")
        async with httpx.AsyncClient(transport=rr.transport("llm"), base_url=server.base_url) as client:
            with call_context(CallContext("m", "q", 0)):
                bad = await client.post(CHAT_PATH, json=_chat("policy"))
                with pytest.raises(httpx.RemoteProtocolError) as live_exc:
                    await client.post(CHAT_PATH, json=_chat("drop"))
        await rr.aclose()
    assert bad.status_code == 400

    disable_socket()
    try:
        rr2 = make_rr(tmp_path, "replay")
        async with httpx.AsyncClient(transport=rr2.transport("llm"), base_url="http://127.0.0.1:9") as client:
            with call_context(CallContext("m", "q", 0)):
                again = await client.post(CHAT_PATH, json=_chat("policy"))
                with pytest.raises(httpx.RemoteProtocolError) as replay_exc:
                    await client.post(CHAT_PATH, json=_chat("drop"))
        assert (again.status_code, again.content) == (400, bad.content)
        assert str(replay_exc.value) == str(live_exc.value)
        # An exception has no response: it carries the entry's timing itself, live and replayed.
        [dropped] = [e for e in rr2.store.effective_entries() if e.exception is not None]
        stored = (dropped.latency_ms, dropped.recorded_at)
        assert ext.recorded_timing(exc=live_exc.value) == ext.recorded_timing(exc=replay_exc.value) == stored
        try:
            raise RuntimeError("an SDK's own error type") from replay_exc.value
        except RuntimeError as wrapped:
            assert ext.recorded_timing(exc=wrapped) == stored
        assert ext.recorded_timing(exc=RuntimeError("never went through the cache")) is None
    finally:
        enable_socket()
        socket_allow_hosts(["127.0.0.1", "::1"])


async def test_replay_miss_names_context_and_shows_json_path_diff(tmp_path: Path) -> None:
    with LoopbackServer(echo_chat) as server:
        rr = make_rr(tmp_path, "record")
        async with httpx.AsyncClient(transport=rr.transport("llm"), base_url=server.base_url) as client:
            with call_context(CallContext("m", "q7", 2, step=1)):
                await client.post(CHAT_PATH, json=_chat("old text"))
        await rr.aclose()
    rr2 = make_rr(tmp_path, "replay")
    async with httpx.AsyncClient(transport=rr2.transport("llm"), base_url=server.base_url) as client:
        with call_context(CallContext("m", "q7", 2, step=1)), pytest.raises(ReplayMissError) as err:
            await client.post(CHAT_PATH, json=_chat("new text"))
    message = str(err.value)
    assert "channel llm" in message
    assert "model 'm', question 'q7', sample 2, step 1" in message
    assert str(tmp_path) in message
    assert '$.body.messages[0].content: "old text" → "new text"' in message


async def test_hand_edited_entry_is_detected_with_file_and_entry(tmp_path: Path) -> None:
    with LoopbackServer(echo_chat) as server:
        rr = make_rr(tmp_path, "record")
        async with httpx.AsyncClient(transport=rr.transport("llm"), base_url=server.base_url) as client:
            with call_context(CallContext("m", "q", 0)):
                await client.post(CHAT_PATH, json=_chat("abc"))
        await rr.aclose()
    path = tmp_path / "llm" / "m.yaml"
    text = path.read_text()
    assert "cba" in text
    path.write_text(text.replace("cba", "xyz"))
    with pytest.raises(CassetteIntegrityError, match=r"m\.yaml, entry #0: entry [0-9a-f]{64} does not match"):
        make_rr(tmp_path, "replay")


async def test_refresh_writes_a_new_generation_and_keeps_the_old(tmp_path: Path) -> None:
    answers = iter(["first", "second"])
    with LoopbackServer(lambda r: LoopbackResponse(body=chat_body(next(answers)))) as server:
        for mode in ("record", "refresh"):
            rr = make_rr(tmp_path, mode)  # type: ignore[arg-type]
            async with httpx.AsyncClient(transport=rr.transport("llm"), base_url=server.base_url) as client:
                with call_context(CallContext("m", "q", 0)):
                    resp = await client.post(CHAT_PATH, json=_chat("p"))
            await rr.aclose()
    assert b"second" in resp.content
    assert b"first" in (tmp_path / "llm" / "m.yaml").read_bytes()
    assert b"second" in (tmp_path / "generations" / "0001" / "llm" / "m.yaml").read_bytes()
    rr3 = make_rr(tmp_path, "replay")
    assert {g: len(es) for g, es in rr3.store.entries_by_generation().items()} == {0: 1, 1: 1}
    async with httpx.AsyncClient(transport=rr3.transport("llm"), base_url=server.base_url) as client:
        with call_context(CallContext("m", "q", 0)):
            latest = await client.post(CHAT_PATH, json=_chat("p"))
    assert b"second" in latest.content


async def test_index_serves_replay_and_is_rebuilt_when_stale(tmp_path: Path) -> None:
    cassettes, cache = tmp_path / "cassettes", tmp_path / "cache"
    with LoopbackServer(echo_chat) as server:
        rr = make_rr(cassettes, "record", cache_dir=cache)
        async with httpx.AsyncClient(transport=rr.transport("llm"), base_url=server.base_url) as client:
            with call_context(CallContext("m", "q", 0)):
                live = await client.post(CHAT_PATH, json=_chat("hello"))
        await rr.aclose()
    rr2 = make_rr(cassettes, "replay", cache_dir=cache)
    assert rr2.store._loaded is False  # fresh index: no YAML parsed
    async with httpx.AsyncClient(transport=rr2.transport("llm"), base_url="http://127.0.0.1:9") as client:
        with call_context(CallContext("m", "q", 0)):
            replayed = await client.post(CHAT_PATH, json=_chat("hello"))
    assert replayed.content == live.content
    await rr2.aclose()


async def test_hit_whose_stored_request_differs_is_refused(tmp_path: Path) -> None:
    with LoopbackServer(echo_chat) as server:
        rr = make_rr(tmp_path, "record")
        async with httpx.AsyncClient(transport=rr.transport("llm"), base_url=server.base_url) as client:
            with call_context(CallContext("m", "q", 0)):
                await client.post(CHAT_PATH, json=_chat("genuine"))
        [entry] = rr.store.effective_entries()
        # Simulate a key collision / schema bug: same key, different stored request (valid digest).
        entry.request_body = entry.request_body.replace("genuine", "impostor")
        rr.store.put(entry)
        await rr.aclose()
    rr2 = make_rr(tmp_path, "replay")
    async with httpx.AsyncClient(transport=rr2.transport("llm"), base_url=server.base_url) as client:
        with call_context(CallContext("m", "q", 0)), pytest.raises(CassetteIntegrityError) as err:
            await client.post(CHAT_PATH, json=_chat("genuine"))
    assert "differs from the live one" in str(err.value)
    assert '$.body.messages[0].content: "impostor" → "genuine"' in str(err.value)


async def test_generation_diff_reports_changed_outcomes(tmp_path: Path) -> None:
    from oracleproto.transport import generation_diff

    answers = iter(["A", "B"])
    with LoopbackServer(lambda r: LoopbackResponse(body=chat_body(next(answers)))) as server:
        for mode in ("record", "refresh"):
            rr = make_rr(tmp_path, mode)  # type: ignore[arg-type]
            async with httpx.AsyncClient(transport=rr.transport("llm"), base_url=server.base_url) as client:
                with call_context(CallContext("m", "q", 0)):
                    await client.post(CHAT_PATH, json=_chat("p"))
            await rr.aclose()
    gens = make_rr(tmp_path, "replay").store.entries_by_generation()
    [(key, diff)] = generation_diff(gens[0], gens[1]).items()
    assert key == gens[1][0].key == gens[0][0].key
    assert diff == ['$.body.choices[0].message.content: "A" → "B"']
    digests = [entry_digest(e) for e in (*gens[0], *gens[1])]
    assert make_rr(tmp_path, "replay").root_digest() == merkle_root(digests)
    assert merkle_root(digests) == merkle_root(digests[::-1]) != merkle_root(digests[:1])


async def test_sync_transport_records_and_replays(tmp_path: Path) -> None:
    with LoopbackServer(echo_chat) as server:
        rr = make_rr(tmp_path, "record")
        with httpx.Client(transport=rr.sync_transport("detector"), base_url=server.base_url) as client:
            live = client.post(CHAT_PATH, json=_chat("sync", temperature=0))
        rr.close()
    disable_socket()
    try:
        rr2 = make_rr(tmp_path, "replay")
        with httpx.Client(transport=rr2.sync_transport("detector"), base_url=server.base_url) as client:
            again = client.post(CHAT_PATH, json=_chat("sync", temperature=0))
        assert again.content == live.content
        assert again.extensions[ext.FROM_CASSETTE] is True
    finally:
        enable_socket()
        socket_allow_hosts(["127.0.0.1", "::1"])


def test_unknown_mode_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError, match="unknown record/replay mode 'live'; use one of replay, record, refresh"
    ):
        make_rr(tmp_path, "live")  # type: ignore[arg-type]


async def test_record_retries_a_retryable_outcome_from_an_earlier_session(tmp_path: Path) -> None:
    statuses = iter([503, 200])
    with LoopbackServer(lambda r: LoopbackResponse(status=next(statuses), body=chat_body("x"))) as server:
        for expected in (503, 503, 200):
            mode = "replay" if expected == 503 and (tmp_path / "llm").exists() else "record"
            rr = make_rr(tmp_path, mode)  # type: ignore[arg-type]
            async with httpx.AsyncClient(transport=rr.transport("llm"), base_url=server.base_url) as client:
                with call_context(CallContext("m", "q", 0)):
                    resp = await client.post(CHAT_PATH, json=_chat("p"))
            await rr.aclose()
            assert resp.status_code == expected, mode
    [entry] = make_rr(tmp_path, "replay").store.effective_entries()
    assert entry.status == 200


def test_unknown_channel_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown channel 'web'; use one of llm, search, detector"):
        make_rr(tmp_path, "replay").transport("web")  # type: ignore[arg-type]


async def test_shared_call_waits_for_the_final_outcome_of_the_call_recording_it(tmp_path: Path) -> None:
    # Two logical calls with the same search request: while the first is between a 503 and its
    # retry, the second must not be served the 503 (replay only knows the final 200).
    statuses = iter([503, 200])

    def handler(_: object) -> LoopbackResponse:
        status = next(statuses)
        return LoopbackResponse(
            status=status, body=b'{"results": []}' if status == 200 else b'{"detail":"x"}'
        )

    between = asyncio.Event()
    seen: list[int] = []
    with LoopbackServer(handler) as server:  # type: ignore[arg-type]
        rr = make_rr(tmp_path, "record")
        async with httpx.AsyncClient(transport=rr.transport("search"), base_url=server.base_url) as client:

            async def first() -> None:
                with logical_call() as call:
                    seen.append((await client.post("/search", json={"query": "q"})).status_code)
                    between.set()
                    for _ in range(5):
                        await asyncio.sleep(0)  # let the second call arrive first
                    call.attempt = 1
                    seen.append((await client.post("/search", json={"query": "q"})).status_code)

            async def second() -> int:
                await between.wait()
                with logical_call():
                    return (await client.post("/search", json={"query": "q"})).status_code

            _, status = await asyncio.gather(first(), second())
        await rr.aclose()
    assert seen == [503, 200]
    assert status == 200
