"""A run with PROTOCOLS_FILE and LEAK_DETECTOR_PROMPT_FILE: what it sends, stores, fingerprints, replays."""

from __future__ import annotations

import asyncio
import json
import random
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from oracleproto.analysis.reader import read_run
from oracleproto.errors import ConfigError, StoreError
from oracleproto.primitives.clock import SystemClock
from oracleproto.primitives.hashing import sha256_16
from oracleproto.prompts import BUDGET_FOOTER_TEXT, REFLECTION_PROTOCOL_TEXT, load_protocol_file
from oracleproto.providers.detector_template import BUILTIN_DETECTOR_PROMPT_HASH, DetectorTemplate
from oracleproto.runner.execute import RunSummary
from oracleproto.runner.identity import config_snapshot
from oracleproto.runner.replay import replay_run
from oracleproto.runner.run_texts import (
    DETECTOR_TEMPLATE_KEY,
    PROTOCOLS_KEY,
    load_run_texts,
    recorded_run_texts,
    with_protocol_switches,
)
from oracleproto.settings.model import (
    AnalysisSettings,
    DetectorSettings,
    LLMSettings,
    ReactSettings,
    RunSettings,
    SearchSettings,
    Settings,
)
from oracleproto.sim.harness import SimRunSpec, simulated_settings
from oracleproto.sim.server import SimConfig, Simulator
from oracleproto.transport import CassetteStore
from tests.runner.conftest import record_with

RUN_ID = "20260302-090000-7e57"
SEPARATOR = "\n\n~~~\n"
BELIEF = 'Put {"A": p, "B": q} in <belief>…</belief> before the box.'
BUDGET = "Budget {{max_steps}}/{{max_search_calls}} — {braces} stay."
REFLECTION = "Check every claim twice; plan {{max_steps}} rounds."
BLOCKS = [
    {"name": "belief", "text": BELIEF},
    {"name": "budget", "text": BUDGET},
    {"name": "reflection", "text": REFLECTION},
]
PROTOCOLS = {"separator": SEPARATOR, "suffix": "\n", "blocks": BLOCKS}
DETECTOR = (
    "Audit for leaks past {{cutoff_date}}; one JSON line with verdict and reason.\n"
    "title: {{title}}\nurl: {{url}}\npublished_date: {{published_date}}\n"
    "content: {{content}}\nraw_content: {{raw_content}}\n"
)


def with_files(settings: Settings, protocols: Path | None, detector: Path | None) -> Settings:
    """``settings`` with the two file settings set (the ENABLE_* switches left at their defaults)."""
    react = ReactSettings.from_values({"protocols_file": protocols})
    values = {**settings.detector.model_dump(), "prompt_file": detector}
    return settings.model_copy(update={"react": react, "detector": DetectorSettings.from_values(values)})


def run(settings: Settings, runs_root: Path) -> RunSummary:
    return record_with(settings, runs_root, RUN_ID)


@dataclass(frozen=True)
class Recorded:
    """A finished one-model, one-sample run recorded with both files, and its settings."""

    root: Path
    protocols: Path
    detector: Path
    settings: Settings

    @property
    def run_dir(self) -> Path:
        return self.root / "runs" / RUN_ID


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    root = tmp_path_factory.mktemp("run-texts")
    protocols = root / "protocols.json"
    protocols.write_text(json.dumps(PROTOCOLS), encoding="utf-8")
    detector = root / "detector.txt"
    detector.write_text(DETECTOR, encoding="utf-8")
    spec = SimRunSpec(models=1, samples=1, runs_root=root / "runs")
    with Simulator(SimConfig(seed=0)) as sim:
        settings = with_files(simulated_settings(sim, spec), protocols, detector)
        run(settings, root / "runs")
    # The simulator is gone: a resume that got past the checks would fail to connect.
    return Recorded(root, protocols, detector, settings)


def run_meta(run_dir: Path) -> dict[str, Any]:
    [db] = (run_dir / "db").glob("*.db")
    with sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True) as conn:
        conn.row_factory = sqlite3.Row
        row = dict(conn.execute("SELECT * FROM run_meta").fetchone())
        prompts = [
            r[0] for r in conn.execute("SELECT user_prompt FROM run_results WHERE user_prompt IS NOT NULL")
        ]
        beliefs = [
            r[0] for r in conn.execute("SELECT s0_belief_parse_ok FROM run_results WHERE s0_error IS NULL")
        ]
    conn.close()
    row["config_snapshot"] = json.loads(row["config_snapshot"])
    row["prompts"] = prompts
    row["beliefs"] = beliefs
    return row


def test_the_manifest_and_run_meta_carry_the_files_fingerprints(recorded: Recorded) -> None:
    manifest = json.loads((recorded.run_dir / "manifest.json").read_text(encoding="utf-8"))
    meta = run_meta(recorded.run_dir)
    assert manifest["reflection_protocol_hash"] == meta["reflection_protocol_hash"] == sha256_16(REFLECTION)
    assert manifest["belief_protocol_hash"] == meta["belief_protocol_hash"] == sha256_16(BELIEF)
    assert meta["reflection_protocol_text"] == REFLECTION  # unformatted, so it matches its hash
    assert meta["belief_protocol_text"] == BELIEF
    snapshot = meta["config_snapshot"]
    layout = load_protocol_file(recorded.protocols)
    assert snapshot[PROTOCOLS_KEY] == {**PROTOCOLS, "hash": layout.fingerprint()}
    assert snapshot["leak_detector_prompt_hash"] == sha256_16(DETECTOR)
    assert snapshot[DETECTOR_TEMPLATE_KEY] == DETECTOR
    # The paths are locations: a replay elsewhere, or a resume from another folder, is the same run.
    assert "protocols_file" not in snapshot["react"] and "prompt_file" not in snapshot["detector"]
    # The file decides which protocols are on; the recorded switches say the same.
    assert snapshot["react"]["belief_protocol"] is True
    assert (snapshot["react"]["reflection_protocol"], snapshot["react"]["budget_footer"]) == (True, True)


def test_every_prompt_is_the_template_then_the_files_blocks(recorded: Recorded) -> None:
    prompts = run_meta(recorded.run_dir)["prompts"]
    assert prompts
    filled = ("Budget 6/4 — {braces} stay.", "Check every claim twice; plan 6 rounds.")
    tail = f"{SEPARATOR}{BELIEF}{SEPARATOR}{filled[0]}{SEPARATOR}{filled[1]}\n"
    for prompt in prompts:
        assert prompt.endswith(tail), prompt[-300:]
        assert REFLECTION_PROTOCOL_TEXT not in prompt


def test_belief_is_on_for_the_agent_and_for_analysis(recorded: Recorded) -> None:
    meta = run_meta(recorded.run_dir)
    # The agent parsed a belief block for every answered sample (NULL would mean "protocol off").
    assert meta["beliefs"] and all(ok is not None for ok in meta["beliefs"])
    # Analysis decides the probabilistic family by this hash.
    [model] = read_run(recorded.run_dir).models
    assert model.run_meta.get("belief_protocol_hash") == sha256_16(BELIEF)


def test_every_detector_request_carries_the_files_text(recorded: Recorded) -> None:
    entries = CassetteStore(recorded.run_dir / "cassettes", writable=False).effective_entries()
    detector = [e for e in entries if e.channel == "detector"]
    assert detector, "the recording made no detector call"
    for entry in detector:
        [message] = json.loads(entry.request_body)["messages"]
        assert message["content"].startswith("Audit for leaks past 20")
        assert "\ntitle: " in message["content"] and "{{" not in message["content"]


def test_the_replay_needs_neither_file_and_reproduces_the_run(recorded: Recorded, tmp_path: Path) -> None:
    moved = tmp_path / "moved"
    moved.mkdir()
    for path in (recorded.protocols, recorded.detector):
        path.rename(moved / path.name)  # the recording's files are gone: replay reads the snapshot
    try:
        report = asyncio.run(
            replay_run(
                recorded.run_dir, tmp_path / "out", clock=SystemClock(), rand=random.Random(1), progress=False
            )
        )
    finally:
        for path in (recorded.protocols, recorded.detector):
            (moved / path.name).rename(path)
    assert report.ok, [c for c in report.checks if not c.ok]
    assert (
        report.summary.traffic["detector"]["from_cassette"]
        == report.summary.traffic["detector"]["requests"]
        > 0
    )


def test_a_resume_with_the_same_contents_elsewhere_resumes(recorded: Recorded, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(recorded.root / "runs", runs)
    protocols = tmp_path / "copy.toml"
    lines = [f"separator = {json.dumps(SEPARATOR)}", 'suffix = "\\n"']
    for block in BLOCKS:
        lines += ["[[blocks]]", f"name = {json.dumps(block['name'])}", f"text = {json.dumps(block['text'])}"]
    protocols.write_text("\n".join(lines) + "\n", encoding="utf-8")
    detector = tmp_path / "other-name.txt"
    detector.write_text(DETECTOR, encoding="utf-8")
    summary = run(with_files(recorded.settings, protocols, detector), runs)
    assert summary.slots_run == 0 and summary.slots_done_before == summary.slots_total


# --- the pieces --------------------------------------------------------------------------------


def _defaults(**react: Any) -> Settings:
    """Every section at its defaults (the environment ignored), ``react`` fields set."""
    return Settings(
        llm=LLMSettings.from_values({}),
        search=SearchSettings.from_values({}),
        detector=DetectorSettings.from_values({}),
        react=ReactSettings.from_values(react),
        run=RunSettings.from_values({}),
        analysis=AnalysisSettings.from_values({}),
    )


def _file(tmp_path: Path, blocks: list[dict[str, str]], **extra: str) -> Path:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"blocks": blocks, **extra}), encoding="utf-8")
    return path


def test_an_empty_file_variable_means_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROTOCOLS_FILE", "")
    monkeypatch.setenv("LEAK_DETECTOR_PROMPT_FILE", " ")
    assert ReactSettings(_env_file=None).protocols_file is None
    assert DetectorSettings(_env_file=None).prompt_file is None


def test_switches_at_their_defaults_follow_the_file(tmp_path: Path) -> None:
    path = _file(tmp_path, [{"name": "belief", "text": "B"}])
    settings = _defaults(protocols_file=path)
    effective = with_protocol_switches(settings, load_run_texts(settings))
    react = effective.react
    assert (react.reflection_protocol, react.belief_protocol, react.budget_footer) == (False, True, False)


def test_a_switch_set_against_the_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _file(tmp_path, [{"name": "budget", "text": "B"}])
    monkeypatch.setenv("ENABLE_REFLECTION_PROTOCOL", "true")
    monkeypatch.setenv("PROTOCOLS_FILE", str(path))
    react = ReactSettings(_env_file=None)
    settings = _defaults().model_copy(update={"react": react})
    with pytest.raises(ConfigError) as refused:
        with_protocol_switches(settings, load_run_texts(settings))
    message = str(refused.value)
    assert (
        f"PROTOCOLS_FILE {path}: ENABLE_REFLECTION_PROTOCOL=true, but the file has no reflection block"
        in message
    )
    assert "unset the switch (the file decides) or edit the file's blocks" in message
    # A switch set to what the file says is fine.
    monkeypatch.setenv("ENABLE_REFLECTION_PROTOCOL", "false")
    react = ReactSettings(_env_file=None)
    settings = _defaults().model_copy(update={"react": react})
    assert not with_protocol_switches(settings, load_run_texts(settings)).react.reflection_protocol


def test_the_snapshot_keeps_texts_only_when_they_are_not_built_in(tmp_path: Path) -> None:
    plain = config_snapshot(_defaults())
    assert PROTOCOLS_KEY not in plain and DETECTOR_TEMPLATE_KEY not in plain
    assert plain["leak_detector_prompt_hash"] == BUILTIN_DETECTOR_PROMPT_HASH
    builtin_file = _file(
        tmp_path,
        [
            {"name": "reflection", "text": REFLECTION_PROTOCOL_TEXT},
            {"name": "budget", "text": BUDGET_FOOTER_TEXT},
        ],
    )
    # The built-in texts from a file: the same prompts, the same snapshot as without the file.
    assert config_snapshot(_defaults(protocols_file=builtin_file)) == plain
    custom = _file(tmp_path, [{"name": "budget", "text": BUDGET_FOOTER_TEXT}], suffix="\n")
    assert config_snapshot(_defaults(protocols_file=custom))[PROTOCOLS_KEY]["suffix"] == "\n"


@pytest.mark.parametrize("which", ["protocols", "detector"])
def test_a_bad_file_stops_the_run_before_anything_is_written(
    recorded: Recorded, tmp_path: Path, which: str
) -> None:
    bad = _file(tmp_path, [{"name": "budget", "text": "{{foo}}"}])
    if which == "protocols":
        settings, message = with_files(recorded.settings, bad, None), r"unknown placeholder \{\{foo\}\}"
    else:
        settings, message = with_files(recorded.settings, None, bad), "not a usable detector prompt template"
    with pytest.raises(ConfigError, match=message):
        run(settings, tmp_path / "runs")
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s[PROTOCOLS_KEY].update(suffix="tampered"), "does not match its recorded hash"),
        (
            lambda s: s[PROTOCOLS_KEY].update(blocks=[{"name": "nope", "text": "x"}]),
            "unknown block name 'nope'",
        ),
        (
            lambda s: s.update({DETECTOR_TEMPLATE_KEY: DETECTOR + "x"}),
            "is not the fingerprint of the detector",
        ),
        (
            lambda s: s.update({DETECTOR_TEMPLATE_KEY: "no fields"}),
            "is not a usable detector prompt template",
        ),
    ],
    ids=["layout-hash", "layout-invalid", "detector-hash", "detector-invalid"],
)
def test_an_altered_recorded_snapshot_is_refused(recorded: Recorded, change: Any, message: str) -> None:
    snapshot = json.loads(json.dumps(run_meta(recorded.run_dir)["config_snapshot"]))
    assert recorded_run_texts(snapshot).detector == DetectorTemplate(DETECTOR)
    change(snapshot)
    with pytest.raises(StoreError, match=message):
        recorded_run_texts(snapshot)


def test_a_recorded_switch_that_contradicts_the_recorded_layout_is_refused(recorded: Recorded) -> None:
    snapshot = run_meta(recorded.run_dir)["config_snapshot"]
    texts = recorded_run_texts(snapshot)
    react = ReactSettings.from_values({**snapshot["react"], "belief_protocol": False})
    settings = _defaults().model_copy(update={"react": react})
    with pytest.raises(StoreError, match="ENABLE_BELIEF_PROTOCOL=false, but the file lists a belief block"):
        with_protocol_switches(settings, texts, recorded=True)
