"""``request_sharing`` in what reads recordings: statistics, the CLI, the replay index, the refresh audit."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.refresh.classify import slot_of
from oracleproto.transport.stats import cassette_stats
from oracleproto.transport.store import CassetteStore
from tests.transport.helpers import CHAT_PATH, make_rr
from tests.transport.sharing_helpers import BASE, Provider, two_identical_per_channel


async def _record(cassettes: Path, sharing: str) -> None:
    rr = make_rr(cassettes, "record", inner=Provider(), request_sharing=sharing)
    await two_identical_per_channel(rr)
    await rr.aclose()


async def test_stats_say_what_is_shared_under_each_setting(tmp_path: Path) -> None:
    shared, none = tmp_path / "shared", tmp_path / "none"
    await _record(shared, "identical_search_and_detector")
    await _record(none, "none")

    for channel in ("search", "detector"):
        before = cassette_stats(shared, 2).channels[channel]
        assert (before.entries, before.requests, before.per_call) == (1, 4, 0)
        assert before.sharing_text() == "dedup ratio 4.00"
        after = cassette_stats(none, 2).channels[channel]
        assert (after.entries, after.requests, after.per_call) == (4, 4, 4)
        assert (
            after.sharing_text()
            == "dedup ratio 1.00, nothing shared (request_sharing none: every call its own entry)"
        )
    # The sample-collapse check looks at main-LLM keys only: the per-call search and detector
    # entries (step 0, occurrence 0, one per sample) neither satisfy nor break it.
    assert cassette_stats(shared, 2).collapse_violations == cassette_stats(none, 2).collapse_violations == []
    assert cassette_stats(none, 3).collapse_violations == ["m × q: 2 distinct main-LLM key(s) for 3 samples"]

    text = CliRunner().invoke(cli, ["cassettes", "stats", str(none), "--samples", "2"])
    assert text.exit_code == 0, text.output
    assert (
        "search: 4 entries (distinct keys), 4 requests, dedup ratio 1.00, nothing shared "
        "(request_sharing none: every call its own entry)\n" in text.output
    )
    assert "sample-collapse check: ok (2 distinct keys per model × question)" in text.output
    default = CliRunner().invoke(cli, ["cassettes", "stats", str(shared), "--samples", "2"])
    assert "search: 1 entries (distinct keys), 4 requests, dedup ratio 4.00\n" in default.output
    for path, per_call in ((none, 4), (shared, 0)):
        out = CliRunner().invoke(cli, ["cassettes", "stats", str(path), "--json"]).output
        doc = json.loads(out)
        assert doc["channels"]["detector"]["per_call_entries"] == per_call


async def test_calls_without_a_sample_context_are_reported_as_the_shared_rest(tmp_path: Path) -> None:
    await _record(tmp_path, "none")
    rr = make_rr(tmp_path, "record", inner=Provider(), request_sharing="none")
    async with httpx.AsyncClient(transport=rr.transport("detector"), base_url=BASE) as client:
        for _ in range(2):
            await client.post(CHAT_PATH, json={"model": "judge", "messages": [], "temperature": 0})
    await rr.aclose()
    detector = cassette_stats(tmp_path).channels["detector"]
    assert (detector.entries, detector.requests, detector.per_call) == (5, 6, 4)
    assert detector.sharing_text() == (
        "dedup ratio 1.20, 4 of 5 entries per call (request_sharing none), the rest shared"
    )


async def test_replay_from_the_index_under_none(tmp_path: Path) -> None:
    cassettes, cache = tmp_path / "cassettes", tmp_path / "cache"
    await _record(cassettes, "none")
    parsed = cassette_stats(cassettes)
    rr = make_rr(cassettes, "replay", cache_dir=cache, request_sharing="none")
    assert not rr.store.loaded
    replayed = await two_identical_per_channel(rr)
    # Served from the index: per-call entries are kept as recent entries (each is served once),
    # never in the memo of shared entries, which they would push out.
    assert not rr.store._memo and len(rr.store._recent_per_call) == 8
    assert cassette_stats(cassettes, store=rr.store).channels == parsed.channels  # the index summary
    assert not rr.store.loaded
    rr.close()
    rr = make_rr(cassettes, "replay", request_sharing="none")
    assert await two_identical_per_channel(rr) == replayed
    rr.close()

    shared = tmp_path / "shared"
    await _record(shared, "identical_search_and_detector")
    rr = make_rr(shared, "replay", cache_dir=tmp_path / "cache2")
    await two_identical_per_channel(rr)
    assert len(rr.store._memo) == 2 and not rr.store._recent_per_call
    rr.close()


async def test_ls_names_the_owner_of_a_per_call_entry(tmp_path: Path) -> None:
    shared, none = tmp_path / "shared", tmp_path / "none"
    await _record(shared, "identical_search_and_detector")
    await _record(none, "none")
    lines = CliRunner().invoke(cli, ["cassettes", "ls", str(none)]).output.splitlines()
    searches = sorted(line.split("  g0  ", 1)[1] for line in lines if " search " in line)
    assert searches == ["m q s0 t0", "m q s0 t0", "m q s1 t0", "m q s1 t0"]
    lines = CliRunner().invoke(cli, ["cassettes", "ls", str(shared)]).output.splitlines()
    [search] = [line for line in lines if " search " in line]
    assert search.endswith("first asked by m q s0 t0")


async def test_refresh_audit_pairs_per_call_entries_within_their_sample(tmp_path: Path) -> None:
    shared, none = tmp_path / "shared", tmp_path / "none"
    await _record(shared, "identical_search_and_detector")
    await _record(none, "none")
    [search] = [e for e in CassetteStore(shared, writable=False).effective_entries() if e.channel == "search"]
    assert slot_of(search) == ("search", "same query")  # unchanged for shared entries
    slots = sorted(
        slot_of(e) for e in CassetteStore(none, writable=False).effective_entries() if e.channel == "search"
    )
    assert slots == [("search", "same query", "m", "q", s, 0, o) for s in (0, 1) for o in (0, 1)]
