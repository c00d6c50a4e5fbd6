"""``request_sharing``: identical search/detector requests share entries (default) or not ("none")."""

from __future__ import annotations

import asyncio
import json
from datetime import date
from pathlib import Path

import httpx
import pytest

from oracleproto.context import CallContext, call_context, logical_call
from oracleproto.errors import ConfigError, ReplayMissError
from oracleproto.primitives.clock import FakeClock
from oracleproto.providers.detector import LeakDetector
from oracleproto.providers.filtered import FilteredSearch
from oracleproto.providers.types import SearchOutcome, SearchResult
from oracleproto.settings.model import DetectorSettings, LLMSettings
from oracleproto.transport import extensions as ext
from oracleproto.transport.diff import generation_diff
from oracleproto.transport.keys import canonical_request, context_dict, entry_key
from oracleproto.transport.recorder import RecordReplay
from oracleproto.transport.shared_keys import shared_key
from oracleproto.transport.store import CassetteStore
from tests.transport.helpers import CHAT_PATH, chat_body, make_rr
from tests.transport.sharing_helpers import (
    BASE,
    DETECT,
    SEARCH,
    Calls,
    Provider,
    SyncProvider,
    tag_of,
    two_identical_per_channel,
)

CHANNELS = ("search", "detector")


async def _record(cassettes: Path, provider: Provider, **kwargs: object) -> Calls:
    """Record the two-sample workload and close the session (its entries folded into the files)."""
    rr = make_rr(cassettes, "record", inner=provider, **kwargs)
    calls = await two_identical_per_channel(rr)
    await rr.aclose()
    return calls


async def _replay(cassettes: Path, **kwargs: object) -> Calls:
    rr = make_rr(cassettes, "replay", **kwargs)
    try:
        return await two_identical_per_channel(rr)
    finally:
        rr.close()


async def test_none_gives_every_call_its_own_entry_and_replays_each_its_own(tmp_path: Path) -> None:
    provider = Provider()
    rr = make_rr(tmp_path, "record", inner=provider, request_sharing="none")
    recorded = await two_identical_per_channel(rr)
    recording = rr.session_stats()
    await rr.aclose()

    # Every search and detector call went live: 2 samples × (1 llm + 2 searches + 2 judgements).
    assert provider.arrivals("/search") == 4
    assert provider.arrivals(CHAT_PATH) == 2 + 4
    tags = {key: tag_of(body) for key, body in recorded.items() if key[1] != "llm"}
    assert len(set(tags.values())) == 8  # no call was served another call's response
    for channel in CHANNELS:
        assert recording[channel] == {
            "requests": 4,
            "from_cassette": 0,
            "live": 4,
            "distinct_keys": 4,
            "waited": 0,
        }
    entries = [e for e in rr.store.effective_entries() if e.channel != "llm"]
    assert len(entries) == 8
    slots = sorted((e.channel, e.context["sample"], e.occurrence) for e in entries if e.context)
    assert slots == sorted((c, s, o) for c in CHANNELS for s in (0, 1) for o in (0, 1))
    assert all(e.requests == 1 for e in entries)
    # The same files as the default: one per channel (llm per model).
    names = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.yaml"))
    assert names == ["detector.yaml", "llm/m.yaml", "search.yaml"]

    rr2 = make_rr(tmp_path, "replay", request_sharing="none")
    replayed = await two_identical_per_channel(rr2)
    replaying = rr2.session_stats()
    rr2.close()
    assert replayed == recorded  # each call served its own recorded entry, in order
    for channel in CHANNELS:
        assert replaying[channel] == {
            "requests": 4,
            "from_cassette": 4,
            "live": 0,
            "distinct_keys": 4,
            "waited": 0,
        }


async def test_default_still_shares_one_entry_and_one_live_call(tmp_path: Path) -> None:
    provider = Provider()
    rr = make_rr(tmp_path, "record", inner=provider)
    assert rr.request_sharing == "identical_search_and_detector"
    recorded = await two_identical_per_channel(rr)
    stats = rr.session_stats()
    await rr.aclose()
    assert provider.arrivals("/search") == 1
    assert provider.arrivals(CHAT_PATH) == 2 + 1  # the two llm samples, one judgement
    assert stats["detector"]["distinct_keys"] == stats["search"]["distinct_keys"] == 1
    assert stats["detector"]["requests"] == stats["search"]["requests"] == 4
    for channel, body in (("search", SEARCH), ("detector", DETECT)):
        [entry] = [e for e in rr.store.effective_entries() if e.channel == channel]
        assert entry.occurrence is None and entry.requests == 4
        path = "/search" if channel == "search" else CHAT_PATH
        assert entry.key == shared_key(channel, "POST", BASE + path, json.dumps(body).encode()).key  # type: ignore[arg-type]
    assert len({recorded[(s, "search", i)] for s in (0, 1) for i in (0, 1)}) == 1

    # Recording with the default named explicitly writes the same bytes.
    other = tmp_path / "explicit"
    rr = make_rr(other, "record", inner=Provider(), request_sharing="identical_search_and_detector")
    await two_identical_per_channel(rr)
    await rr.aclose()
    assert (other / "search.yaml").read_bytes() == (tmp_path / "search.yaml").read_bytes()
    assert (other / "detector.yaml").read_bytes() == (tmp_path / "detector.yaml").read_bytes()


async def test_a_per_call_key_is_the_schema_key_with_context_and_occurrence(tmp_path: Path) -> None:
    rr = make_rr(tmp_path, "record", inner=Provider(), request_sharing="none")
    ctx = CallContext("m", "q", 2, step=3)
    async with httpx.AsyncClient(transport=rr.transport("search"), base_url=BASE) as client:
        with call_context(ctx):
            first = await client.post("/search", json=SEARCH)
            second = await client.post("/search", json=SEARCH)
    await rr.aclose()
    projection = canonical_request("search", "POST", BASE + "/search", json.dumps(SEARCH).encode())
    assert first.extensions[ext.ENTRY_KEY] == entry_key(projection, context_dict(ctx), 0)
    assert second.extensions[ext.ENTRY_KEY] == entry_key(projection, context_dict(ctx), 1)


async def test_requests_without_a_sample_context_stay_shared_under_none(tmp_path: Path) -> None:
    provider = Provider()
    rr = make_rr(tmp_path, "record", inner=provider, request_sharing="none")
    async with httpx.AsyncClient(transport=rr.transport("detector"), base_url=BASE) as client:
        bodies = [(await client.post(CHAT_PATH, json=DETECT)).content for _ in range(3)]
    await rr.aclose()
    assert provider.arrivals(CHAT_PATH) == 1 and len(set(bodies)) == 1
    [entry] = rr.store.effective_entries()
    assert (entry.context, entry.occurrence, entry.requests) == (None, None, 3)


async def test_sync_transport_keys_per_call_under_none(tmp_path: Path) -> None:
    provider = Provider()
    rr = make_rr(tmp_path, "record", inner_sync=SyncProvider(provider), request_sharing="none")
    with (
        httpx.Client(transport=rr.sync_transport("search"), base_url=BASE) as client,
        call_context(CallContext("m", "q", 0)),
    ):
        bodies = [client.post("/search", json=SEARCH).content for _ in range(2)]
    rr.close()
    assert provider.arrivals("/search") == 2 and len(set(bodies)) == 2
    assert sorted(e.occurrence for e in rr.store.effective_entries()) == [0, 1]  # type: ignore[type-var]


def test_unknown_request_sharing_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError, match="unknown request_sharing 'all'; use one of identical_search_and_detector, none"
    ):
        make_rr(tmp_path, "replay", request_sharing="all")


class Reversed(httpx.AsyncBaseTransport):
    """A detector that answers the first request of each pair only once the second is answered.

    So a recording's completion order is the reverse of the order the requests were sent.
    """

    def __init__(self) -> None:
        self.sent = 0
        self.completed: list[int] = []
        self._second_answered = asyncio.Event()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        n = self.sent
        self.sent += 1
        if n % 2 == 0:
            await self._second_answered.wait()
            self._second_answered.clear()
        else:
            self._second_answered.set()
        self.completed.append(n)
        verdict = "drop" if n % 2 == 0 else "keep"  # the two copies of a page get different verdicts
        return httpx.Response(200, content=chat_body(json.dumps({"verdict": verdict, "reason": f"sent {n}"})))


async def test_concurrent_identical_judgements_are_numbered_in_the_order_they_are_sent(
    tmp_path: Path,
) -> None:
    """The agent starts a search's judgements with ``asyncio.gather`` in result order; the second
    finishes first while recording, yet replay serves each judgement what it got when recorded."""
    provider = Reversed()
    rr = make_rr(tmp_path, "record", inner=provider, request_sharing="none")
    async with httpx.AsyncClient(transport=rr.transport("detector"), base_url=BASE) as client:

        async def judge() -> str:
            with logical_call():
                return str(tag_of((await client.post(CHAT_PATH, json=DETECT)).content))

        with call_context(CallContext("m", "q", 0, step=1)):
            recorded = await asyncio.gather(judge(), judge())
    await rr.aclose()
    assert provider.completed == [1, 0]
    assert recorded == ["sent 0", "sent 1"]
    by_occurrence = {e.occurrence: tag_of(e.body) for e in rr.store.effective_entries()}
    assert by_occurrence == {0: "sent 0", 1: "sent 1"}

    rr2 = make_rr(tmp_path, "replay", request_sharing="none")
    async with httpx.AsyncClient(transport=rr2.transport("detector"), base_url=BASE) as client:

        async def again() -> str:
            with logical_call():
                return str(tag_of((await client.post(CHAT_PATH, json=DETECT)).content))

        with call_context(CallContext("m", "q", 0, step=1)):
            assert await asyncio.gather(again(), again()) == recorded
    rr2.close()


class TwoCopies:
    """A search tool whose results list one page twice (the detector judges both copies)."""

    async def search(self, query: str, end_date: date, max_results: int) -> SearchOutcome:
        page = SearchResult("Page", "https://example.org/p", "text", None, "2025-01-01")
        return SearchOutcome(query, end_date, (page, page), None, ("2025-01-01",) * 2, None, None, 0)


async def test_the_leak_filter_gets_the_same_verdict_per_copy_in_record_and_replay(tmp_path: Path) -> None:
    """Through the real detector and filter: the copies are judged concurrently (``asyncio.gather``
    in result order) and get different verdicts; replay gives each copy its recorded verdict."""

    async def verdicts(rr: RecordReplay) -> tuple[str, ...]:
        llm = LLMSettings(_env_file=None, base_url=BASE + "/v1")  # type: ignore[call-arg]
        settings = DetectorSettings(_env_file=None, model="aux/det")  # type: ignore[call-arg]
        async with httpx.AsyncClient(transport=rr.transport("detector")) as client:
            tool = FilteredSearch(TwoCopies(), LeakDetector(client, settings, llm, FakeClock()))  # type: ignore[arg-type]
            with call_context(CallContext("m", "q", 0, step=2)):
                outcome = await tool.search("query", date(2025, 3, 1), 5)
        assert outcome.audit is not None
        return outcome.audit.detector_verdicts

    provider = Reversed()
    rr = make_rr(tmp_path, "record", inner=provider, request_sharing="none")
    recorded = await verdicts(rr)
    await rr.aclose()
    assert provider.completed == [1, 0] and recorded == ("drop", "keep")
    rr2 = make_rr(tmp_path, "replay", request_sharing="none")
    assert await verdicts(rr2) == recorded
    rr2.close()


async def test_a_retry_keeps_its_own_occurrence_while_an_identical_call_is_in_flight(tmp_path: Path) -> None:
    provider = Provider()
    provider.failing[(CHAT_PATH, 0)] = 503
    rr = make_rr(tmp_path, "record", inner=provider, request_sharing="none")
    second_sent = asyncio.Event()
    async with httpx.AsyncClient(transport=rr.transport("detector"), base_url=BASE) as client:

        async def first() -> list[int]:
            with logical_call() as call:
                statuses = [(await client.post(CHAT_PATH, json=DETECT)).status_code]
                await second_sent.wait()  # the identical call took occurrence 1 meanwhile
                call.attempt = 1
                statuses.append((await client.post(CHAT_PATH, json=DETECT)).status_code)
                return statuses

        async def second() -> int:
            with logical_call():
                response = await client.post(CHAT_PATH, json=DETECT)
                second_sent.set()
                return response.status_code

        with call_context(CallContext("m", "q", 0)):
            statuses, status = await asyncio.gather(first(), second())
    await rr.aclose()
    assert (statuses, status) == ([503, 200], 200)
    entries = {e.occurrence: e for e in rr.store.effective_entries()}
    assert [a["status"] for a in entries[0].attempts] == [503, 200]  # the retry updated its own entry
    assert [a["status"] for a in entries[1].attempts] == [200]
    assert rr._call_occurrences == {}  # forgotten when the calls ended


async def test_replay_misses_name_the_sample_the_occurrence_and_the_other_setting(tmp_path: Path) -> None:
    await _record(tmp_path / "shared", Provider())
    await _record(tmp_path / "none", Provider(), request_sharing="none")

    async def search_once(cassettes: Path, sample: int, times: int = 1, **kwargs: object) -> str:
        rr = make_rr(cassettes, "replay", **kwargs)
        async with httpx.AsyncClient(transport=rr.transport("search"), base_url=BASE) as client:
            with call_context(CallContext("m", "q", sample)), pytest.raises(ReplayMissError) as err:
                for _ in range(times):
                    await client.post("/search", json=SEARCH)
        rr.close()
        return str(err.value)

    message = await search_once(tmp_path / "shared", 1, request_sharing="none")
    assert (
        "model 'm', question 'q', sample 1, step 0, keyed per call (request_sharing none), occurrence 0"
        in message
    )
    assert (
        "recorded with request_sharing identical_search_and_detector; replay it with that setting" in message
    )

    message = await search_once(tmp_path / "none", 1)
    assert "keyed by the request alone (shared across samples), occurrence None" in message
    assert "recorded per call (4 entries" in message and "recorded with request_sharing none" in message

    message = await search_once(tmp_path / "none", 1, times=3, request_sharing="none")
    assert "recorded for this sample and step at occurrence(s) 0, 1; this call is occurrence 2" in message

    message = await search_once(tmp_path / "none", 7, request_sharing="none")
    assert "sample 7, step 0" in message and "recorded only for another sample context" in message


async def test_resume_under_none_reruns_only_the_redone_samples_failed_calls(tmp_path: Path) -> None:
    provider = Provider()
    # Sample 1's judgements (the 2nd and 3rd detector arrivals after sample 0's llm + 2 judgements
    # and sample 1's llm call) are refused: an auth failure that does not stop the run.
    provider.failing[(CHAT_PATH, 4)] = 401
    provider.failing[(CHAT_PATH, 5)] = 401
    rr = make_rr(tmp_path, "record", inner=provider, request_sharing="none")
    first = await two_identical_per_channel(rr)
    await rr.aclose()
    assert [tag_of(first[(1, "detector", i)]).split(":")[-1] for i in (0, 1)] == ["4", "5"]

    # The resumed session redoes sample 1 only; which entries done samples used is unknown (None).
    again = Provider("v2")
    rr = make_rr(tmp_path, "record", inner=again, request_sharing="none")
    redone = await two_identical_per_channel(rr, samples=(1,))
    stats = rr.session_stats()
    await rr.aclose()
    # Its llm call and searches replay; only its two failed judgements go live again.
    assert [r.url.path for r in again.requests] == [CHAT_PATH, CHAT_PATH]
    assert stats["detector"]["live"] == 2 and stats["search"]["live"] == 0
    assert redone[(1, "search", 0)] == first[(1, "search", 0)]
    assert {tag_of(redone[(1, "detector", i)]) for i in (0, 1)} == {
        "v2:/v1/chat/completions:0",
        "v2:/v1/chat/completions:1",
    }

    replayed = await _replay(tmp_path, request_sharing="none")
    assert {k: v for k, v in replayed.items() if k[0] == 0} == {k: v for k, v in first.items() if k[0] == 0}
    assert {k: v for k, v in replayed.items() if k[0] == 1} == redone


async def test_refresh_under_none_rerecords_each_selected_call_once(tmp_path: Path) -> None:
    rr = make_rr(tmp_path, "record", inner=Provider(), request_sharing="none")
    first = await two_identical_per_channel(rr)
    await rr.aclose()

    def sample_zero(channel: str, ctx: dict[str, object] | None) -> bool:
        return ctx is not None and ctx["sample"] == 0

    provider = Provider("v2")
    rr = make_rr(tmp_path, "refresh", inner=provider, request_sharing="none", should_refresh=sample_zero)
    refreshed = await two_identical_per_channel(rr)
    await rr.aclose()
    # Sample 0's five calls went live, each once; sample 1 was served its own earlier entries.
    assert provider.arrivals("/search") == 2 and provider.arrivals(CHAT_PATH) == 3
    assert {k: v for k, v in refreshed.items() if k[0] == 1} == {k: v for k, v in first.items() if k[0] == 1}
    assert all(tag_of(v).startswith("v2:") for k, v in refreshed.items() if k[0] == 0 and k[1] != "llm")
    generations = CassetteStore(tmp_path, writable=False).entries_by_generation()
    assert {g: len(es) for g, es in generations.items()} == {0: 10, 1: 10}  # the new one is complete
    changed = generation_diff(generations[0], generations[1])
    owners = sorted(
        (e.channel, e.occurrence) for e in generations[1] if e.key in changed and e.channel != "llm"
    )
    assert owners == [("detector", 0), ("detector", 1), ("search", 0), ("search", 1)]
    assert all(e.context is not None and e.context["sample"] == 0 for e in generations[1] if e.key in changed)

    assert await _replay(tmp_path, request_sharing="none") == refreshed
