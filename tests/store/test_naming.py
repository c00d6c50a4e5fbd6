"""Run ids, virtual slugs, model file names and timestamps (run-layout.md naming rules)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone

import pytest

from oracleproto.errors import StoreError
from oracleproto.primitives.clock import FakeClock
from oracleproto.store import (
    format_timestamp,
    model_file_map,
    model_file_name,
    new_run_id,
    parse_timestamp,
    parse_virtual_slug,
    validate_run_id,
    virtual_slug,
)


def test_new_run_id_uses_clock_and_injected_randomness() -> None:
    clock = FakeClock(datetime(2026, 3, 1, 23, 59, 58, tzinfo=timezone(timedelta(hours=2))))
    run_id = new_run_id(clock, random.Random(7))
    # UTC, not the clock's local offset.
    assert run_id.startswith("20260301-215958-")
    assert run_id == new_run_id(clock, random.Random(7))
    assert validate_run_id(run_id) == run_id
    assert new_run_id(clock, random.Random(8)) != run_id


def test_new_run_id_pads_small_random_values() -> None:
    class Zero:
        def getrandbits(self, k: int, /) -> int:
            return 0

    assert new_run_id(FakeClock(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)), Zero()) == "20260102-030405-0000"


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "20260301-120000-0A1F",
        "20260301-120000-0a1",
        "2026031-120000-0a1f",
        "20260301_120000_0a1f",
        "20260301-120000-0a1f\n",
        "../20260301-120000-0a1f",
    ],
)
def test_invalid_run_id_is_explained(bad: str) -> None:
    with pytest.raises(
        StoreError, match=r"invalid run id .*expected UTC 'YYYYMMDD-HHMMSS-xxxx'.*omit the run id"
    ):
        validate_run_id(bad)


def test_virtual_slug_round_trip() -> None:
    slug = virtual_slug("vendor-d/Model 4 (preview)", 5, 4)
    assert slug == "vendor-d/Model 4 (preview)::r5::c4"
    assert parse_virtual_slug(slug) == ("vendor-d/Model 4 (preview)", 5, 4)
    assert parse_virtual_slug("a:b::r12::c0") == ("a:b", 12, 0)


@pytest.mark.parametrize(
    ("real", "message"),
    [
        ("x::y", "'::' is reserved"),
        ("vendor/m:online", "':online' suffix"),
        ("", "non-empty"),
        (" m", "non-empty"),
    ],
)
def test_virtual_slug_rejects_bad_real_slugs(real: str, message: str) -> None:
    with pytest.raises(StoreError, match=message):
        virtual_slug(real, 5, 4)


def test_virtual_slug_rejects_negative_cells() -> None:
    with pytest.raises(StoreError, match="r=-1, c=4; both must be >= 0"):
        virtual_slug("m", -1, 4)


@pytest.mark.parametrize("bad", ["vendor/m", "m::r5", "m::rX::c4", "::r5::c4"])
def test_parse_virtual_slug_rejects(bad: str) -> None:
    with pytest.raises(StoreError, match="not a virtual model slug"):
        parse_virtual_slug(bad)


def test_model_file_name_example_from_run_layout() -> None:
    assert model_file_name("vendor-d/Model 4 (preview)::r5::c4") == "vendor-d__Model_4__preview___r5__c4.db"


@pytest.mark.parametrize(
    ("slug", "name"),
    [
        ("openai/gpt-4.1::r5::c4", "openai__gpt-4.1__r5__c4.db"),
        ("a/b/c::r1::c1", "a__b__c__r1__c1.db"),
        ("mödel@x::r0::c0", "m_del_x__r0__c0.db"),
    ],
)
def test_model_file_name_mapping(slug: str, name: str) -> None:
    assert model_file_name(slug) == name


def test_model_file_map_detects_collisions() -> None:
    assert model_file_map(["a/b::r5::c4", "a/c::r5::c4"]) == {
        "a/b::r5::c4": "a__b__r5__c4.db",
        "a/c::r5::c4": "a__c__r5__c4.db",
    }
    with pytest.raises(
        StoreError, match=r"'v/m 1::r5::c4' and 'v/m\+1::r5::c4' both map to .*'v__m_1__r5__c4.db'"
    ):
        model_file_map(["v/m 1::r5::c4", "v/m+1::r5::c4"])
    with pytest.raises(StoreError, match="both map to"):
        model_file_map(["Org/M::r5::c4", "org/m::r5::c4"])
    with pytest.raises(StoreError, match="listed twice"):
        model_file_map(["m::r5::c4", "m::r5::c4"])


def test_timestamps_are_utc_with_microseconds() -> None:
    moment = datetime(2026, 3, 1, 14, 0, 0, 5, tzinfo=timezone(timedelta(hours=2)))
    text = format_timestamp(moment)
    assert text == "2026-03-01T12:00:00.000005+00:00"
    assert parse_timestamp(text) == moment
    assert parse_timestamp("2026-03-01T12:00:00") == datetime(2026, 3, 1, 12, tzinfo=UTC)
    with pytest.raises(StoreError, match="has no timezone"):
        format_timestamp(datetime(2026, 3, 1))
    with pytest.raises(StoreError, match="invalid timestamp 'yesterday'"):
        parse_timestamp("yesterday")
