"""Settings: paper env names, sections, :online rejection, key checks, redacted snapshot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oracleproto.errors import ConfigError
from oracleproto.primitives.hashing import sha256_hex
from oracleproto.runner.setting_roles import ROLES, SECTIONS
from oracleproto.settings.model import Settings, load_settings

PAPER_VARS = [
    "MODEL_DISPLAY_NAMES",
    "LLM_BASE_URL",
    "LLM_API_KEY",
    "MODELS",
    "MODEL_TRAINING_CUTOFFS",
    "TAVILY_API_KEY",
    "LEAK_DETECTOR_MODEL",
    "LEAK_DETECTOR_BASE_URL",
    "ENABLE_SEARCH_LEAK_FILTER",
    "WRITE_MESSAGES_TRACE",
]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for name in PAPER_VARS:
        monkeypatch.delenv(name, raising=False)


def test_defaults_follow_the_paper() -> None:
    s = load_settings(None)
    assert s.llm.temperature == 0.7 and s.llm.top_p == 1.0 and s.llm.max_tokens == 12_000
    assert s.llm.timeout_s == 240
    assert s.llm.reasoning_model_patterns == ["o1", "o3", "o4", "r1", "qwq"]
    assert s.llm.backoff_rate_limit_s == [10, 30, 60, 120, 300]
    assert s.search.max_results == 5 and s.search.search_depth == "basic"
    assert s.search.result_max_chars == 8000 and not s.search.include_answer
    assert s.detector.temperature == 0 and s.detector.max_tokens == 512
    assert s.detector.fail_action == "drop"
    assert (s.react.max_steps, s.react.max_search_calls, s.run.sampling_n) == (6, 4, 3)
    assert s.run.mode == "replay"


def test_paper_env_names_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MODELS", "vendor/a, vendor/b")
    monkeypatch.setenv("MODEL_TRAINING_CUTOFFS", "vendor/a=2026-02,vendor/b=2025-09-29")
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-first-key-1234,tvly-second-key-5678")
    monkeypatch.setenv("ENABLE_SEARCH_LEAK_FILTER", "false")
    monkeypatch.setenv("WRITE_MESSAGES_TRACE", "false")
    s = load_settings(None)
    assert s.llm.models == ["vendor/a", "vendor/b"]
    assert s.llm.training_cutoffs == {"vendor/a": "2026-02", "vendor/b": "2025-09-29"}
    assert len(s.search.api_keys) == 2
    assert not s.detector.enabled and not s.run.write_messages_trace


def test_env_file_is_read(tmp_path: Path) -> None:
    env = tmp_path / "custom.env"
    env.write_text("MODELS=vendor/x\nLEAK_DETECTOR_MODEL=vendor/judge\n")
    s = load_settings(env)
    assert s.llm.models == ["vendor/x"] and s.detector.model == "vendor/judge"


@pytest.mark.parametrize(
    ("var", "value", "needle"),
    [
        ("MODELS", "vendor/a:online", "MODELS: 'vendor/a:online' ends in ':online'"),
        ("LEAK_DETECTOR_MODEL", "vendor/j:online", "LEAK_DETECTOR_MODEL: 'vendor/j:online'"),
        ("MODELS", "vendor/a::r5::c4", "contains '::'"),
    ],
)
def test_online_and_grid_slugs_rejected_at_startup(
    monkeypatch: pytest.MonkeyPatch, var: str, value: str, needle: str
) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(ConfigError, match="invalid settings") as info:
        load_settings(None)
    assert needle in str(info.value)


def test_bad_value_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_TEMPERATURE", "hot")
    with pytest.raises(ConfigError) as info:
        load_settings(None)
    assert (
        "LLM_TEMPERATURE: Input should be a valid number, unable to parse string as a number (got 'hot')"
        in str(info.value)
    )


def test_answer_parser_defaults_to_algorithm2_and_is_in_the_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANSWER_PARSER", raising=False)
    s = load_settings(None)
    assert s.react.answer_parser == "algorithm2"
    assert s.snapshot()["react"]["answer_parser"] == "algorithm2"
    monkeypatch.setenv("ANSWER_PARSER", "strict")
    strict = load_settings(None)
    assert strict.react.answer_parser == "strict"
    assert strict.snapshot()["react"]["answer_parser"] == "strict"


@pytest.mark.parametrize("value", ["lenient", "Algorithm 2", ""])
def test_an_unknown_answer_parser_names_the_variable_and_the_modes(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("ANSWER_PARSER", value)
    with pytest.raises(ConfigError) as info:
        load_settings(None)
    assert f"ANSWER_PARSER: Input should be 'algorithm2' or 'strict' (got {value!r})" in str(info.value)


def test_replay_needs_no_keys() -> None:
    load_settings(None).validate_static()


def test_live_mode_rejects_missing_and_placeholder_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MODELS", "vendor/a")
    monkeypatch.setenv("LLM_API_KEY", "your-api-key-here")
    with pytest.raises(ConfigError) as info:
        load_settings(None).validate_for_live()
    message = str(info.value)
    assert "LLM_API_KEY looks like a placeholder" in message
    assert "TAVILY_API_KEY is empty" in message
    assert "LEAK_DETECTOR_MODEL is empty" in message
    assert "your-api-key-here" not in message


def test_live_mode_accepts_real_looking_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MODELS", "vendor/a")
    monkeypatch.setenv("LLM_API_KEY", "sk-live-0123456789abcdef")
    monkeypatch.setenv("TAVILY_API_KEY", "fake-tavily-key-0123")
    monkeypatch.setenv("LEAK_DETECTOR_MODEL", "vendor/judge")
    load_settings(None).validate_for_live()


def test_snapshot_redacts_every_key(monkeypatch: pytest.MonkeyPatch) -> None:
    llm_key = "sk-live-SECRET-0123456789"
    tavily = "tvly-SECRET-A-111,tvly-SECRET-B-222"
    monkeypatch.setenv("LLM_API_KEY", llm_key)
    monkeypatch.setenv("TAVILY_API_KEY", tavily)
    snap = load_settings(None).snapshot()
    text = json.dumps(snap)
    assert "SECRET" not in text
    assert snap["llm"]["api_key"] == f"sk-l…{sha256_hex(llm_key)[:12]}"
    # The pool is one redaction, so the snapshot does not reveal how many keys there are.
    assert snap["search"]["api_keys"] == f"tvly…{sha256_hex(tavily)[:12]}"


def test_every_setting_of_every_section_has_a_resume_identity_role() -> None:
    # A new setting must say whether a resume may change it (oracleproto/runner/setting_roles.py).
    assert set(SECTIONS) == set(Settings.model_fields)
    for name, cls in SECTIONS.items():
        fields = set(cls.model_fields)  # type: ignore[attr-defined]
        missing = sorted(fields - set(ROLES[name]))
        assert not missing, f"add a role for {name}.{missing} to ROLES in oracleproto/runner/setting_roles.py"
        assert set(ROLES[name]) <= fields, f"ROLES[{name!r}] names settings that do not exist"


def test_snapshot_redacts_credentials_in_base_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_BASE_URL", "https://proxy-user:SECRETPASS@proxy.example:8443/v1?api_key=SECRETQ")
    monkeypatch.setenv("LEAK_DETECTOR_BASE_URL", "http://[::1]:9/v1?token=SECRETT&api-version=2")
    snap = load_settings(None).snapshot()
    assert "SECRET" not in json.dumps(snap)
    assert snap["llm"]["base_url"] == "https://[REDACTED]@proxy.example:8443/v1?api_key=[REDACTED]"
    assert snap["detector"]["base_url"] == "http://[::1]:9/v1?token=[REDACTED]&api-version=2"


@pytest.mark.parametrize("source", ["env", ".env"])
@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TAVILY_API_KEY", "[tvly-fake-SECRET-0123456789ab-cdef"),
        ("TAVILY_API_KEY", '["tvly-fake-SECRET-0123456789ab-cdef", 7]'),
        ("TAVILY_API_KEY", '["tvly-fake-SECRET-0123456789ab-cdef", ["tvly-fake-SECRET-0123456789ab-cdef"]]'),
    ],
)
def test_a_validation_error_never_echoes_a_secret(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, source: str, name: str, value: str
) -> None:
    env_file: Path | None = None
    if source == "env":
        monkeypatch.setenv(name, value)
    else:
        env_file = tmp_path / "planted.env"
        env_file.write_text(f"{name}='{value}'\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(env_file)
    message = str(info.value)
    assert f"  - {name}" in message and "(value not shown: it is a secret)" in message
    assert "SECRET" not in message and "0123456789ab" not in message


def test_a_key_inside_a_base_url_is_refused_without_echo(monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-live-SECRET-0123456789"
    monkeypatch.setenv("LLM_BASE_URL", f"https://gateway.example/v1/{key}")
    monkeypatch.setenv("MODELS", "vendor/a")
    monkeypatch.setenv("LLM_API_KEY", key)
    monkeypatch.setenv("TAVILY_API_KEY", "fake-tavily-key-0123")
    monkeypatch.setenv("LEAK_DETECTOR_MODEL", "vendor/judge")
    with pytest.raises(ConfigError) as info:
        load_settings(None).validate_for_live()
    message = str(info.value)
    assert "LLM_BASE_URL contains the value of LLM_API_KEY" in message
    assert "https://gateway.example/v1/[REDACTED]" in message and "SECRET" not in message


def test_display_names_read_as_json_or_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODEL_DISPLAY_NAMES", '{"deepseek/deepseek-v3.2-exp": "DeepSeek-V3.2-Exp, 2025"}')
    assert load_settings(None).analysis.display_names == {
        "deepseek/deepseek-v3.2-exp": "DeepSeek-V3.2-Exp, 2025"
    }
    monkeypatch.setenv("MODEL_DISPLAY_NAMES", "vendor/a=Model A, vendor/b = Model B")
    assert load_settings(None).analysis.display_names == {"vendor/a": "Model A", "vendor/b": "Model B"}


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("vendor/a=Same,vendor/b=Same", "'vendor/a', 'vendor/b' are all named 'Same'"),
        ("vendor/a::r5::c4=A", "name the real model slug, without '::rR::cC'"),
        ("vendor/a=", "'vendor/a': the display name is empty"),
        ("vendor/a=A::B", "contains '::', reserved for grid cells"),
        ("vendor/a", "expected key=value"),
    ],
)
def test_bad_display_names_are_refused_at_startup(
    monkeypatch: pytest.MonkeyPatch, value: str, needle: str
) -> None:
    monkeypatch.setenv("MODEL_DISPLAY_NAMES", value)
    with pytest.raises(ConfigError) as info:
        load_settings(None)
    assert "MODEL_DISPLAY_NAMES" in str(info.value) and needle in str(info.value)


@pytest.mark.parametrize(("raw", "expected"), [("", None), ("  ", None), ("0.008", 0.008), ("0", 0.0)])
def test_tavily_credit_price_reads_empty_as_unset(
    monkeypatch: pytest.MonkeyPatch, raw: str, expected: float | None
) -> None:
    monkeypatch.setenv("TAVILY_USD_PER_CREDIT", raw)
    assert load_settings(None).analysis.tavily_usd_per_credit == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [("-1", "greater than or equal to 0"), ("nan", "finite number"), ("cheap", "valid number")],
)
def test_a_bad_tavily_credit_price_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, raw: str, message: str
) -> None:
    monkeypatch.setenv("TAVILY_USD_PER_CREDIT", raw)
    with pytest.raises(ConfigError, match="TAVILY_USD_PER_CREDIT") as info:
        load_settings(None)
    assert message in str(info.value)
