"""verify's ``sample entries root`` check, branch by branch (issue 28 §4, found by make mutation).

The store's two readers (the per-sample entry keys of db/, the Merkle root over them) are replaced
by stand-ins, so each branch is reached on its own and its verdict and message are compared whole.
The readers themselves are tested against hand-computed roots in tests/store.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from oracleproto.errors import StoreError
from oracleproto.verify import samples
from oracleproto.verify.findings import Check

WHAT = "sample entries root"
RECORDED = "a" * 64
ACTUAL = "b" * 64
DBS = {"vendor/m": Path("db/vendor__m.db")}
DIGESTS = {"k1": "d1", "k2": "d2"}
#: Two samples; the second used two entries.
KEYS = {("vendor/m", "q1", 0): ["k1"], ("vendor/m", "q2", 0): ["k2", "k1"]}


def _manifest(root: str | None, *, finished: bool = True) -> Any:
    return SimpleNamespace(sample_entries_root=root, finished_at="2026-05-01T00:00:00Z" if finished else None)


def _check(
    monkeypatch: pytest.MonkeyPatch,
    manifest: Any,
    keys: object,
    digests: dict[str, str] | None = DIGESTS,
    root: Callable[[], str] = lambda: ACTUAL,
) -> Check:
    def read_sample_keys(db_paths: object) -> object:
        assert db_paths is DBS
        if isinstance(keys, Exception):
            raise keys
        return keys

    def sample_entries_root(sample_keys: object, digest_of: Callable[[str], str | None]) -> str:
        assert sample_keys is KEYS
        assert (digest_of("k1"), digest_of("k2"), digest_of("k3")) == ("d1", "d2", None)
        return root()

    monkeypatch.setattr(samples, "read_sample_keys", read_sample_keys)
    monkeypatch.setattr(samples, "sample_entries_root", sample_entries_root)
    return samples.check_sample_entries(manifest, DBS, digests)


def test_an_unfinished_run_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _check(monkeypatch, _manifest(None, finished=False), KEYS) == Check(
        WHAT, "skip", "the run has not finished; the root is written when it does"
    )


def test_unreadable_entry_records_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _check(monkeypatch, _manifest(RECORDED), StoreError("db/x.db: no table")) == Check(
        WHAT, "FAIL", "the per-sample entry records could not be read: db/x.db: no table"
    )


def test_records_without_a_root_fail_and_no_records_without_a_root_are_skipped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _check(monkeypatch, _manifest(None), KEYS) == Check(
        WHAT, "FAIL", "db/ records the entries each sample used; manifest.json has no root"
    )
    older = Check(WHAT, "skip", "not every sample has an entry record (recorded by an older version)")
    assert _check(monkeypatch, _manifest(None), None) == older
    assert _check(monkeypatch, _manifest(None), {}) == older


def test_a_root_without_records_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _check(monkeypatch, _manifest(RECORDED), None) == Check(
        WHAT, "FAIL", "manifest.json has a sample_entries_root; a stored sample has no entry record"
    )


def test_failed_cassettes_leave_the_root_uncomputed(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _check(monkeypatch, _manifest(RECORDED), KEYS, digests=None) == Check(
        WHAT, "skip", "not computed: the cassettes failed their checks above"
    )


def test_an_entry_missing_from_the_cassettes_fails_with_the_stores_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing() -> str:
        raise StoreError("sample vendor/m q2 #0 used cassette entry k2, which the cassettes do not hold")

    assert _check(monkeypatch, _manifest(RECORDED), KEYS, root=missing) == Check(
        WHAT, "FAIL", "sample vendor/m q2 #0 used cassette entry k2, which the cassettes do not hold"
    )


def test_the_root_passes_when_equal_and_fails_naming_both_prefixes_when_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _check(monkeypatch, _manifest(ACTUAL), KEYS) == Check(
        WHAT, "pass", "2 samples, each bound to the entries it used"
    )
    assert _check(monkeypatch, _manifest(RECORDED), KEYS) == Check(
        WHAT,
        "FAIL",
        "manifest.json sample_entries_root is aaaaaaaaaaaaaaaa…, the samples in db/ and the entries in "
        "cassettes/ give bbbbbbbbbbbbbbbb…: an entry a sample used, or a sample's entry list, was changed",
    )
