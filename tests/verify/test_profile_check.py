"""verify's ``harness profile`` check, branch by branch (issue 28 §4, found by make mutation).

The snapshot reader and the fingerprint are replaced by stand-ins, so each branch is reached on
its own and its verdict and message are compared whole (the profile code has its own tests).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from oracleproto.errors import ConfigError
from oracleproto.verify import profile_check
from oracleproto.verify.findings import Check

WHAT = "harness profile"
#: The first DB's snapshot is the one read; the second's would name another profile.
FIRST, SECOND = "db/vendor__a.db", "db/vendor__b.db"


def _metas(first: dict[str, Any]) -> dict[str, Any]:
    return {
        FIRST: SimpleNamespace(config_snapshot=first),
        SECOND: SimpleNamespace(config_snapshot={"harness_profile": {"name": "other"}}),
    }


def _manifest(name: str | None, fingerprint: str = "") -> Any:
    recorded = None if name is None else SimpleNamespace(name=name, fingerprint=fingerprint)
    return SimpleNamespace(harness_profile=recorded)


@pytest.fixture
def stand_ins(monkeypatch: pytest.MonkeyPatch) -> None:
    def recorded_run_texts(snapshot: dict[str, Any]) -> Any:
        if "broken" in snapshot:
            raise ConfigError("config_snapshot.harness_profile is not a profile")
        name = snapshot.get("harness_profile", {}).get("name", "builtin")
        return SimpleNamespace(profile=SimpleNamespace(name=name))

    monkeypatch.setattr(profile_check, "recorded_run_texts", recorded_run_texts)
    monkeypatch.setattr(profile_check, "profile_fingerprint", lambda profile: f"fp-{profile.name}")


@pytest.mark.usefixtures("stand_ins")
def test_an_unreadable_snapshot_profile_fails_naming_the_db() -> None:
    check = profile_check.check_harness_profile(_manifest(None), _metas({"broken": 1}))
    assert check == Check(WHAT, "FAIL", f"{FIRST}: config_snapshot.harness_profile is not a profile")


@pytest.mark.usefixtures("stand_ins")
def test_a_run_recorded_before_profiles_passes_unless_the_manifest_names_one() -> None:
    assert profile_check.check_harness_profile(_manifest(None), _metas({})) == Check(
        "harness profile: built-in, recorded before harness profiles", "pass", ""
    )
    assert profile_check.check_harness_profile(_manifest("earlier-v1", "fp-x"), _metas({})) == Check(
        WHAT, "FAIL", f"manifest.json names profile earlier-v1 but {FIRST}'s snapshot names none"
    )


@pytest.mark.usefixtures("stand_ins")
def test_a_snapshot_profile_the_manifest_does_not_name_fails() -> None:
    snapshot = {"harness_profile": {"name": "earlier-v1"}}
    assert profile_check.check_harness_profile(_manifest(None), _metas(snapshot)) == Check(
        WHAT, "FAIL", f"{FIRST}'s snapshot names profile earlier-v1 but manifest.json names none"
    )


@pytest.mark.usefixtures("stand_ins")
def test_name_and_fingerprint_must_both_agree() -> None:
    metas = _metas({"harness_profile": {"name": "earlier-v1"}})
    export = "`oracleproto profile export RUN` writes it out"
    assert profile_check.check_harness_profile(_manifest("earlier-v1", "fp-earlier-v1"), metas) == Check(
        "harness profile: earlier-v1 (fp-earlier-v1)", "pass", export
    )
    assert profile_check.check_harness_profile(_manifest("earlier-v1", "fp-edited"), metas) == Check(
        WHAT,
        "FAIL",
        f"manifest.json says earlier-v1 (fp-edited), {FIRST}'s snapshot makes earlier-v1 (fp-earlier-v1)",
    )
    assert profile_check.check_harness_profile(_manifest("paper", "fp-earlier-v1"), metas).detail == (
        f"manifest.json says paper (fp-earlier-v1), {FIRST}'s snapshot makes earlier-v1 (fp-earlier-v1)"
    )
