"""Runtime protocols: constructors, texts, fingerprints, settings mapping, validation."""

from __future__ import annotations

from dataclasses import replace

import pytest

from oracleproto.errors import ConfigError
from oracleproto.primitives.hashing import sha256_16
from oracleproto.prompts import (
    BELIEF_PROTOCOL_TEXT,
    REFLECTION_PROTOCOL_TEXT,
    Budget,
    ProtocolBlock,
    ProtocolLayout,
    RuntimeProtocols,
    budget_footer_text,
)
from oracleproto.settings.model import ReactSettings

FINGERPRINT_KEYS = {"reflection_protocol_hash", "belief_protocol_hash", "budget_footer_hash"}


def test_none_has_no_blocks_and_null_fingerprints() -> None:
    protocols = RuntimeProtocols.none()
    assert protocols.blocks() == []
    assert protocols.fingerprints() == dict.fromkeys(FINGERPRINT_KEYS)


def test_default_is_the_papers_run_footer_and_reflection() -> None:
    protocols = RuntimeProtocols.default(6, 4)
    assert protocols.blocks() == [REFLECTION_PROTOCOL_TEXT, budget_footer_text(Budget(6, 4))]
    prints = protocols.fingerprints()
    assert prints["reflection_protocol_hash"] == sha256_16(REFLECTION_PROTOCOL_TEXT)
    assert prints["budget_footer_hash"] == sha256_16(budget_footer_text(Budget(6, 4)))
    assert prints["belief_protocol_hash"] is None


def test_all_adds_the_belief_block() -> None:
    protocols = RuntimeProtocols.all(6, 4)
    assert protocols.blocks()[1] == BELIEF_PROTOCOL_TEXT
    assert protocols.fingerprints()["belief_protocol_hash"] == sha256_16(BELIEF_PROTOCOL_TEXT)
    assert all(len(v or "") == 16 for v in protocols.fingerprints().values())


def test_budget_footer_announces_t_and_c_and_its_hash_tracks_them() -> None:
    footer = budget_footer_text(Budget(12, 8))
    assert "at most 12 message rounds" in footer
    assert "at most 8 web_search calls" in footer
    hashes = {
        RuntimeProtocols.default(t, c).fingerprints()["budget_footer_hash"] for t, c in [(12, 8), (6, 4)]
    }
    assert len(hashes) == 2
    reflection = {
        RuntimeProtocols.default(t, c).fingerprints()["reflection_protocol_hash"]
        for t, c in [(12, 8), (6, 4)]
    }
    assert len(reflection) == 1


def test_reflection_scaffold_has_the_six_stages() -> None:
    for stage in (
        "1. Decompose",
        "2. Plan retrieval",
        "3. Reflect",
        "4. Cross-validate",
        "5. Contrarian",
        "6. State",
    ):
        assert stage in REFLECTION_PROTOCOL_TEXT
    assert "at least three" in REFLECTION_PROTOCOL_TEXT
    assert "low, medium, high" in REFLECTION_PROTOCOL_TEXT


def test_belief_text_shows_the_block_the_parser_reads() -> None:
    assert '<belief>{"A": 0.7, "B": 0.3}</belief>' in BELIEF_PROTOCOL_TEXT


def test_protocols_are_frozen() -> None:
    protocols = RuntimeProtocols.none()
    with pytest.raises(AttributeError):
        protocols.reflection = True  # type: ignore[misc]


@pytest.mark.parametrize(
    ("steps", "searches", "message"), [(0, 4, "max_steps (T) must be > 0"), (6, -1, "(C) must be >= 0")]
)
def test_bad_budget_is_a_config_error(steps: int, searches: int, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        RuntimeProtocols.default(steps, searches)


def test_zero_searches_is_a_valid_budget() -> None:
    assert "at most 0 web_search calls" in (RuntimeProtocols.default(3, 0).budget_footer_text or "")


def test_from_settings_follows_the_switches() -> None:
    react = ReactSettings.model_validate(
        {
            "max_steps": 9,
            "max_search_calls": 2,
            "reflection_protocol": True,
            "budget_footer": True,
            "belief_protocol": False,
        }
    )
    same(RuntimeProtocols.from_settings(react), RuntimeProtocols.default(9, 2))
    react_off = ReactSettings.model_validate(
        {"reflection_protocol": False, "budget_footer": False, "belief_protocol": True}
    )
    same(RuntimeProtocols.from_settings(react_off), RuntimeProtocols(belief=True))


def same(a: RuntimeProtocols, b: RuntimeProtocols) -> None:
    """The same prompt text and the same fingerprints."""
    assert a.append_to("TEMPLATE") == b.append_to("TEMPLATE")
    assert a.fingerprints() == b.fingerprints()
    assert a.order() == b.order()


def test_a_profile_frames_its_blocks_and_hashes_them_as_it_says() -> None:
    """Per-block separator and terminator, the text used when nothing may be searched, framed hashes."""
    layout = ProtocolLayout(
        (
            ProtocolBlock(
                "budget", "T={{max_steps}} C={{max_search_calls}}", "\n\n--\n", "\n", "T={{max_steps}} only"
            ),
            ProtocolBlock("reflection", "Think.", None, "\n"),
        ),
        separator="\n-\n",
        suffix="",
    )
    protocols = RuntimeProtocols(reflection=True, budget=Budget(6, 4), layout=layout, limits=Budget(6, 4))
    assert protocols.append_to("Q") == "Q\n\n--\nT=6 C=4\n\n-\nThink.\n"
    assert protocols.with_search_calls(0).append_to("Q") == "Q\n\n--\nT=6 only\n\n-\nThink.\n"
    framed = replace(protocols, block_hash="framed", budget_hash="none").fingerprints()
    assert framed["reflection_protocol_hash"] == sha256_16("\n-\nThink.\n")
    assert framed["budget_footer_hash"] is None
    plain = protocols.fingerprints()
    assert plain["reflection_protocol_hash"] == sha256_16("Think.")
    assert plain["budget_footer_hash"] == sha256_16("T=6 C=4")
