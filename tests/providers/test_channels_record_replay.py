"""All three channels through the record/replay transport: record against the simulator, then
replay with sockets blocked and get the same parsed results."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr
from pytest_socket import disable_socket, enable_socket, socket_allow_hosts

from oracleproto.context import CallContext, call_context
from oracleproto.primitives.clock import FakeClock
from oracleproto.providers import (
    WEB_SEARCH_SCHEMA,
    FilteredSearch,
    LeakDetector,
    OpenAIChatClient,
    TavilyKeyPool,
    TavilySearch,
)
from oracleproto.providers.types import ChatResponse, SearchOutcome
from oracleproto.settings.model import DetectorSettings, LLMSettings, SearchSettings
from oracleproto.sim import Simulator
from oracleproto.transport import RecordReplay

PROMPT = (
    'You are a forecaster.\n\nForecast the outcome of this event: "[Fictional demo] Will the Eldoria '
    'rail strike end by 2026-03-20?" The outcome is settled on 2026-03-20 (GMT+8).\n\n'
    "Required answer format:\nEnd your reply with exactly one of:\n\\boxed{Yes} or \\boxed{No}"
)


@contextmanager
def sockets_blocked() -> Iterator[None]:
    disable_socket()
    try:
        yield
    finally:
        enable_socket()
        socket_allow_hosts(["127.0.0.1", "::1"])


async def exercise(cassettes: Path, mode: str, base: str | None) -> tuple[list[ChatResponse], SearchOutcome]:
    clock = FakeClock()
    llm = LLMSettings.from_values(
        {"base_url": (base or "http://127.0.0.1:9") + "/v1", "send_seed": True, "models": ["sim/careful"]}
    )
    search = SearchSettings.from_values({"base_url": base or "http://127.0.0.1:9"})
    # The detector needs a key too: without one every verdict was failed:auth (a rejected key now
    # stops the run instead).
    detector = DetectorSettings.from_values({"model": "sim/detector", "api_key": "sim-llm-key-0001"})
    async with RecordReplay(cassettes, clock=clock, mode=mode) as cache:  # type: ignore[arg-type]
        llm_http = httpx.AsyncClient(transport=cache.transport("llm"))
        search_http = httpx.AsyncClient(transport=cache.transport("search"))
        detector_http = httpx.AsyncClient(transport=cache.transport("detector"))
        chat = OpenAIChatClient(llm_http, llm, clock, api_key="sim-llm-key-0001")
        pool = TavilyKeyPool([SecretStr("sim-tavily-key-0001")], clock)
        tavily = TavilySearch(search_http, search, pool, clock)
        filtered = FilteredSearch(tavily, LeakDetector(detector_http, detector, llm, clock))
        responses = []
        for sample in range(3):
            with call_context(CallContext("sim/careful::r5::c4", "q-rail", sample)):
                responses.append(
                    await chat.complete(
                        "sim/careful", [{"role": "user", "content": PROMPT}], [WEB_SEARCH_SCHEMA]
                    )
                )
        with call_context(CallContext("sim/careful::r5::c4", "q-rail", 0, 1)):
            outcome = await filtered.search("Eldoria rail strike", date(2026, 3, 19), 5)
        await tavily.aclose()
        for client in (llm_http, search_http, detector_http):
            await client.aclose()
    return responses, outcome


def comparable(response: ChatResponse) -> tuple[object, ...]:
    return (response.content, response.tool_calls, response.usage, response.response_id, response.latency_ms)


async def test_three_channels_record_then_replay_offline(tmp_path: Path) -> None:
    with Simulator() as sim:
        recorded, recorded_search = await exercise(tmp_path, "record", sim.base_url)
    assert len({r.response_id for r in recorded}) == 3, "three samples must not collapse into one entry"
    assert recorded_search.audit is not None and recorded_search.audit.n_results_raw > 0
    assert not any(v.startswith("failed:") for v in recorded_search.audit.detector_verdicts)
    with sockets_blocked():
        replayed, replayed_search = await exercise(tmp_path, "replay", None)
    assert [comparable(r) for r in replayed] == [comparable(r) for r in recorded]
    assert replayed_search == recorded_search
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == [
        "detector.yaml",
        "llm",
        "search.yaml",
    ]


async def _complete_once(cassettes: Path, mode: str, base: str, clock: FakeClock, key: str) -> object:
    llm = LLMSettings.from_values({"base_url": base + "/v1", "retry_max": 2})
    cache = RecordReplay(cassettes, clock=clock, mode=mode)  # type: ignore[arg-type]
    async with cache, httpx.AsyncClient(transport=cache.transport("llm")) as http:
        chat = OpenAIChatClient(http, llm, clock, api_key=key)
        with call_context(CallContext("m::r5::c4", "q", 0)):
            try:
                return await chat.complete("sim/careful", [{"role": "user", "content": PROMPT}], [])
            except Exception as exc:
                return exc


async def test_replayed_final_failure_is_not_retried(tmp_path: Path) -> None:
    from oracleproto.errors import CallFailedError, ErrorKind
    from oracleproto.sim import FaultConfig, SimConfig

    always_down = FaultConfig(fail_5xx=1.0)
    with Simulator(SimConfig(chat=always_down)) as sim:
        recording_clock = FakeClock()
        recorded = await _complete_once(tmp_path, "record", sim.base_url, recording_clock, "sim-llm-key-0001")
    assert isinstance(recorded, CallFailedError) and recorded.kind is ErrorKind.SERVER_5XX
    assert recording_clock.sleeps == [5.0, 15.0]
    replay_clock = FakeClock()
    with sockets_blocked():
        replayed = await _complete_once(tmp_path, "replay", "http://127.0.0.1:9", replay_clock, "x")
    assert isinstance(replayed, CallFailedError) and replayed.kind is ErrorKind.SERVER_5XX
    assert replay_clock.sleeps == [], "a replayed final outcome must not be retried or slept on"


async def test_recorded_auth_failure_goes_live_again_on_resume(tmp_path: Path) -> None:
    from oracleproto.errors import AuthError
    from oracleproto.sim import FaultConfig, SimConfig

    revoked = FaultConfig(revoked_keys=frozenset({"revoked-key-0001"}))
    with Simulator(SimConfig(chat=revoked)) as sim:
        first = await _complete_once(tmp_path, "record", sim.base_url, FakeClock(), "revoked-key-0001")
        assert isinstance(first, AuthError)
        fixed = await _complete_once(tmp_path, "record", sim.base_url, FakeClock(), "sim-llm-key-0001")
    assert isinstance(fixed, ChatResponse), "a resume with a fixed key must call live, not replay the 401"


async def _judge_once(cassettes: Path, mode: str, base: str, key: str, **cache_args: object) -> str:
    """One detector verdict through a fresh cache; the verdict label."""
    from oracleproto.providers.types import SearchResult

    clock = FakeClock()
    llm = LLMSettings.from_values({"base_url": base + "/v1", "api_key": key})
    detector = DetectorSettings.from_values({"model": "sim/detector"})
    result = SearchResult("Eldoria rail strike", "https://example.org/a", "Talks resume.", None, "2026-03-01")
    cache = RecordReplay(cassettes, clock=clock, mode=mode, **cache_args)  # type: ignore[arg-type]
    async with cache, httpx.AsyncClient(transport=cache.transport("detector")) as http:
        verdict = await LeakDetector(http, detector, llm, clock).judge(result, date(2026, 3, 10))
    return verdict.label


def _never_used(key: str) -> bool:
    return False


async def test_recorded_detector_auth_failure_is_resent_only_when_no_finished_sample_used_it(
    tmp_path: Path,
) -> None:
    from oracleproto.errors import AuthError
    from oracleproto.sim import FaultConfig, SimConfig

    revoked = FaultConfig(revoked_keys=frozenset({"revoked-key-0001"}))
    fixed = "sim-llm-key-0001"
    with Simulator(SimConfig(chat=revoked)) as sim:
        # Live, a rejected detector key stops the run (issue 28); the 401 stays in the cassette.
        with pytest.raises(AuthError, match="leak detector sim/detector"):
            await _judge_once(tmp_path, "record", sim.base_url, "revoked-key-0001")
        # Served again (a recording made before that rule: a finished sample used it), the entry
        # keeps the verdict it was recorded with.
        # A finished sample used it: the shared entry must stay as it was.
        used = await _judge_once(tmp_path, "record", sim.base_url, fixed, used_by_done=lambda key: True)
        assert used == "failed:auth"
        # Unknown who used it (no per-sample records): kept too.
        assert await _judge_once(tmp_path, "record", sim.base_url, fixed) == "failed:auth"
        # A refresh never re-sends what the refreshed run recorded (an older generation).
        unselected = await _judge_once(
            tmp_path, "refresh", sim.base_url, fixed, used_by_done=_never_used,
            should_refresh=lambda channel, ctx: False,
        )  # fmt: skip
        assert unselected == "failed:auth"
        # No finished sample used it (the run aborted on the LLM's 401): the resume calls live.
        fresh = tmp_path / "fresh"
        with pytest.raises(AuthError):
            await _judge_once(fresh, "record", sim.base_url, "revoked-key-0001")
        resent = await _judge_once(fresh, "record", sim.base_url, fixed, used_by_done=_never_used)
    assert resent in ("keep", "drop")
