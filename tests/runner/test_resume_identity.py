"""Resume refuses changed settings, before writing anything; scheduling changes and rotated keys resume."""

from __future__ import annotations

import asyncio
import json
import random
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from oracleproto.dataset.demo import demo_db_path
from oracleproto.errors import StoreError
from oracleproto.primitives.clock import SystemClock
from oracleproto.providers.detector import detector_prompt_hash
from oracleproto.runner.execute import RunOptions, RunSummary, execute_run
from oracleproto.runner.identity import config_snapshot
from oracleproto.runner.resume_guard import settings_changes
from oracleproto.runner.setting_roles import ROLES, SECTIONS
from oracleproto.settings.model import DetectorSettings, ReactSettings, Settings
from oracleproto.sim.harness import SimRunSpec, simulated_settings
from oracleproto.sim.server import SimConfig, Simulator
from oracleproto.store import RunDir

RUN_ID = "20260301-120000-0a1f"


@dataclass(frozen=True)
class Recorded:
    """A finished one-model, one-sample run and the settings it was recorded with."""

    runs_root: Path
    settings: Settings

    @property
    def run_dir(self) -> Path:
        return self.runs_root / RUN_ID


def _run(settings: Settings, runs_root: Path, *, source_db: Path | None = None) -> RunSummary:
    options = RunOptions(
        settings=settings,
        source_db=source_db or demo_db_path(),
        runs_root=runs_root,
        mode="record",
        run_id=RUN_ID,
        progress=False,
    )
    return asyncio.run(execute_run(options, clock=SystemClock(), rand=random.Random(0)))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """Recorded as ``oracleproto sim run --models 1 --samples 1 --no-report`` records it."""
    runs_root = tmp_path_factory.mktemp("resume-id") / "runs"
    spec = SimRunSpec(models=1, samples=1, runs_root=runs_root)
    with Simulator(SimConfig(seed=0)) as sim:
        settings = simulated_settings(sim, spec)
        _run(settings, runs_root)
    # The simulator is gone: a resume that got past the check would fail to connect, not pass.
    return Recorded(runs_root, settings)


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for folders)."""
    return {
        str(p.relative_to(root)): p.read_bytes() if p.is_file() else None for p in sorted(root.rglob("*"))
    }


def defaults() -> Settings:
    """Every section at its defaults, the environment ignored."""
    return Settings(**{name: cls.from_values({}) for name, cls in SECTIONS.items()})  # type: ignore[attr-defined]


def changed(settings: Settings, section: str, field: str, value: Any) -> Settings:
    """``settings`` with one field of one section replaced (validated, as if set in the environment)."""
    return with_section(settings, section, {field: value})


def with_section(settings: Settings, section: str, updates: dict[str, Any]) -> Settings:
    """``settings`` with fields of one section replaced, validated."""
    current = getattr(settings, section)
    part = type(current).from_values({**current.model_dump(), **updates})
    return settings.model_copy(update={section: part})


# (section, field, new value, the line the refusal must print). The recording used the
# simulator's settings: detector on (model sim/detector), seed sent, grid R=5 C=4, n=1.
IDENTITY_CASES: list[tuple[str, str, Any, str]] = [
    ("llm", "base_url", "https://api.example.test/v1", "LLM_BASE_URL: loopback/v1 → api.example.test/v1"),
    ("llm", "temperature", 0.1, "LLM_TEMPERATURE: 0.7 → 0.1"),
    ("llm", "top_p", 0.5, "LLM_TOP_P: 1.0 → 0.5"),
    ("llm", "max_tokens", 100, "LLM_MAX_TOKENS: 12000 → 100"),
    (
        "llm",
        "reasoning_model_patterns",
        ["careful"],
        "LLM_REASONING_MODEL_PATTERNS: o1,o3,o4,r1,qwq → careful",
    ),
    ("llm", "max_completion_tokens_models", ["sim/careful"], "MODEL_MAX_TOKENS_PARAM: (empty) → sim/careful"),
    ("llm", "send_seed", False, "LLM_SEND_SEED: true → false"),
    (
        "llm",
        "models",  # a model needs its cutoff: both change
        {
            "models": ["sim/careful", "sim/hasty"],
            "training_cutoffs": {"sim/careful": "2026-01", "sim/hasty": "2025-12"},
        },
        "MODELS: sim/careful → sim/careful,sim/hasty",
    ),
    (
        "llm",
        "training_cutoffs",
        {"sim/careful": "2025-06"},
        "MODEL_TRAINING_CUTOFFS: sim/careful=2026-01-31 → sim/careful=2025-06-30",
    ),
    (
        "search",
        "base_url",
        "https://search.example.test",
        "TAVILY_BASE_URL: loopback/ → search.example.test/",
    ),
    ("search", "search_depth", "advanced", "TAVILY_SEARCH_DEPTH: basic → advanced"),
    ("search", "include_answer", True, "TAVILY_INCLUDE_ANSWER: false → true"),
    ("search", "include_raw_content", False, "TAVILY_INCLUDE_RAW_CONTENT: true → false"),
    ("search", "result_max_chars", 100, "SEARCH_RESULT_MAX_CHARS: 8000 → 100"),
    ("search", "date_filter", "off", "SEARCH_DATE_FILTER: on → off"),
    ("detector", "enabled", False, "ENABLE_SEARCH_LEAK_FILTER: true → false"),
    ("detector", "model", "other/detector", "LEAK_DETECTOR_MODEL: sim/detector → other/detector"),
    (
        "detector",
        "base_url",
        "https://det.example.test/v1",
        "LEAK_DETECTOR_BASE_URL: loopback/v1 → det.example.test/v1",
    ),
    ("detector", "temperature", 0.5, "LEAK_DETECTOR_TEMPERATURE: 0.0 → 0.5"),
    ("detector", "max_tokens", 10, "LEAK_DETECTOR_MAX_TOKENS: 512 → 10"),
    ("detector", "fail_action", "keep", "LEAK_DETECTOR_FAIL_ACTION: drop → keep"),
    ("react", "max_steps", 3, "REACT_MAX_STEPS: 6 → 3"),
    ("react", "force_final_answer_lookahead", 1, "REACT_FORCE_FINAL_ANSWER_LOOKAHEAD: 2 → 1"),
    ("react", "budget_exceeded_drop_tools", False, "REACT_BUDGET_EXCEEDED_DROP_TOOLS: true → false"),
    ("react", "min_search_calls", 1, "REACT_MIN_SEARCH_CALLS: 0 → 1"),
    ("react", "max_nudges", 1, "REACT_MAX_NUDGES: 2 → 1"),
    ("react", "final_answer_retry", True, "REACT_FINAL_ANSWER_RETRY: false → true"),
    ("react", "reflection_protocol", False, "ENABLE_REFLECTION_PROTOCOL: true → false"),
    ("react", "budget_footer", False, "ENABLE_BUDGET_FOOTER: true → false"),
    ("react", "belief_protocol", True, "ENABLE_BELIEF_PROTOCOL: false → true"),
    ("react", "answer_parser", "strict", "ANSWER_PARSER: algorithm2 → strict"),
    ("run", "sampling_n", 2, "SAMPLING_N: 1 → 2"),
    ("run", "delta_days", 5, "PREDICTION_CUTOFF_DELTA_DAYS: 1 → 5"),
    ("run", "write_messages_trace", False, "WRITE_MESSAGES_TRACE: true → false"),
    ("run", "question_types", ["yes_no"], "QUESTION_TYPES: (unset) → yes_no"),
    ("run", "choice_types", ["single"], "CHOICE_TYPES: (unset) → single"),
    (
        "run",
        "question_limit",
        3,
        "questions selected (SOURCE_DB / SOURCE_TABLE / QUESTION_LIMIT, run --limit): "
        "16 questions → 3 questions",
    ),
    ("run", "grid_r_list", [3], "GRID_R_LIST: 5 → 3"),
    ("run", "grid_c_list", [2], "GRID_C_LIST: 4 → 2"),
    ("analysis", "convention", "reference-v4", "ANALYSIS_CONVENTION: paper → reference-v4"),
    ("analysis", "bootstrap_samples", 10, "ANALYSIS_BOOTSTRAP_N: 1000 → 10"),
    ("analysis", "seed", 1, "ANALYSIS_SEED: 20260430 → 1"),
    ("analysis", "tavily_usd_per_credit", 0.005, "TAVILY_USD_PER_CREDIT: 0.008 → 0.005"),
]


def test_every_identity_setting_has_a_refusal_case() -> None:
    covered = {(section, field) for section, field, _, _ in IDENTITY_CASES}
    identity = {
        (section, field)
        for section, fields in ROLES.items()
        for field, role in fields.items()
        if role in ("identity", "endpoint", "manifest") and field != "source_table"
    }
    assert identity - covered == set()


@pytest.mark.parametrize(("section", "field", "value", "line"), IDENTITY_CASES, ids=lambda v: str(v)[:40])
def test_a_resume_with_a_changed_identity_setting_is_refused_and_writes_nothing(
    recorded: Recorded, section: str, field: str, value: Any, line: str
) -> None:
    settings = with_section(recorded.settings, section, value if field == "models" else {field: value})
    before = tree(recorded.runs_root)
    with pytest.raises(StoreError) as refused:
        _run(settings, recorded.runs_root)
    message = str(refused.value)
    assert line in message, message
    assert f"run {RUN_ID} cannot be resumed" in message
    assert "start a new run (leave out --run-id, or give a new run id)" in message
    assert tree(recorded.runs_root) == before


def test_every_changed_setting_is_listed_once(recorded: Recorded) -> None:
    settings = changed(recorded.settings, "run", "delta_days", 5)
    settings = changed(settings, "llm", "temperature", 0.1)
    settings = changed(settings, "detector", "fail_action", "keep")
    settings = changed(settings, "react", "reflection_protocol", False)
    with pytest.raises(StoreError) as refused:
        _run(settings, recorded.runs_root)
    listed = [line.strip() for line in str(refused.value).splitlines() if " → " in line]
    assert listed == [
        "LLM_TEMPERATURE: 0.7 → 0.1",
        "LEAK_DETECTOR_FAIL_ACTION: drop → keep",
        "ENABLE_REFLECTION_PROTOCOL: true → false",
        "PREDICTION_CUTOFF_DELTA_DAYS: 1 → 5",
    ]


def test_a_changed_dataset_file_is_refused(recorded: Recorded, tmp_path: Path) -> None:
    other = tmp_path / "demo-copy.db"
    shutil.copyfile(demo_db_path(), other)
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (x TEXT)")  # same questions, other bytes
    conn.close()
    before = tree(recorded.runs_root)
    with pytest.raises(StoreError, match=r"SOURCE_DB \(sha256 of the dataset file\): [0-9a-f]{12}… → "):
        _run(recorded.settings, recorded.runs_root, source_db=other)
    assert tree(recorded.runs_root) == before


def test_scheduling_changes_a_rotated_key_and_a_restarted_simulator_resume(
    recorded: Recorded, tmp_path: Path
) -> None:
    runs_root = tmp_path / "runs"
    shutil.copytree(recorded.runs_root, runs_root)
    settings = recorded.settings
    for section, field, value in [
        ("llm", "api_key", "rotated-llm-key-0002"),
        ("search", "api_keys", ["rotated-tavily-key-0002", "second-tavily-key-0003"]),
        ("detector", "api_key", "rotated-detector-key-9"),
        ("llm", "base_url", "http://localhost:1/v1/"),  # another loopback port: the same cassette keys
        ("llm", "max_concurrency", 1),
        ("llm", "timeout_s", 1.0),
        ("llm", "retry_max", 0),
        ("llm", "backoff_rate_limit_s", [1.0]),
        ("search", "max_concurrency", 1),
        ("search", "key_cooldown_s", 1.0),
        ("search", "max_results", 9),  # the grid's R applies
        ("react", "max_search_calls", 9),  # the grid's C applies
        ("detector", "retry_max", 0),
        ("run", "runs_root", Path("elsewhere")),
    ]:
        settings = changed(settings, section, field, value)
    summary = _run(settings, runs_root)
    assert summary.slots_run == 0 and summary.slots_done_before == summary.slots_total


def test_a_detector_setting_is_not_compared_while_the_detector_is_off() -> None:
    base = defaults()
    off = changed(base, "detector", "enabled", False)
    other_model = changed(off, "detector", "model", "other/detector")
    assert settings_changes(config_snapshot(off), config_snapshot(other_model)) == []


def test_a_setting_the_stored_snapshot_lacks_is_not_a_difference() -> None:
    base = defaults()
    stored = config_snapshot(base)
    del stored["run"]["delta_days"]
    del stored["analysis"]
    fresh = config_snapshot(changed(changed(base, "run", "delta_days", 5), "analysis", "seed", 3))
    assert settings_changes(stored, fresh) == []


def test_the_earlier_implementations_flat_snapshot_is_compared_by_variable_name() -> None:
    # run-layout.md: that implementation's snapshot is its flat settings dict (upper-case names,
    # values as it held them) plus the paper's leak_detector_* keys; most of our settings are absent.
    stored = {
        "MODELS": "vendor/m",
        "PREDICTION_CUTOFF_DELTA_DAYS": 1,
        "LLM_TEMPERATURE": "0.7",
        "LLM_API_KEY": "sk-a…0123456789ab",
        "GRID_R_LIST": "5",
        "leak_detector_enabled": True,
        "leak_detector_model": "vendor/detector",
        "leak_detector_prompt_hash": detector_prompt_hash(),
        "SOMETHING_WE_DO_NOT_HAVE": "x",
        "LEAK_DETECTOR_FAIL_ACTION": "not a value we know",
    }
    base = defaults()
    same = changed(base, "detector", "model", "vendor/detector")
    assert settings_changes(stored, config_snapshot(same)) == []
    other = changed(changed(same, "run", "delta_days", 5), "llm", "temperature", 0.1)
    other = changed(other, "detector", "model", "vendor/other")
    assert [str(c) for c in settings_changes(stored, config_snapshot(other))] == [
        "LLM_TEMPERATURE: 0.7 → 0.1",
        "LEAK_DETECTOR_MODEL: vendor/detector → vendor/other",
        "PREDICTION_CUTOFF_DELTA_DAYS: 1 → 5",
    ]
    stored["leak_detector_prompt_hash"] = "0123456789abcdef"  # another detector template
    [change] = settings_changes(stored, config_snapshot(same))
    assert str(change) == (
        f"LEAK_DETECTOR_PROMPT_FILE (sha256-16 of the detector prompt template): 0123456789abcdef → "
        f"{detector_prompt_hash()}"
    )


def test_a_run_whose_snapshot_predates_our_fields_resumes(recorded: Recorded, tmp_path: Path) -> None:
    runs_root = tmp_path / "runs"
    shutil.copytree(recorded.runs_root, runs_root)
    [db] = (runs_root / RUN_ID / "db").glob("*.db")
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE run_meta SET config_snapshot = ?", (json.dumps({"MODELS": "sim/careful"}),))
    conn.close()
    summary = _run(changed(recorded.settings, "run", "delta_days", 5), runs_root)
    assert summary.slots_run == 0


def test_a_snapshot_that_predates_answer_parser_reads_as_strict() -> None:
    # oracleproto parsed strictly before ANSWER_PARSER existed; its snapshot has the react section.
    stored = config_snapshot(defaults())
    del stored["react"]["answer_parser"]
    [change] = settings_changes(stored, config_snapshot(defaults()))
    assert str(change) == "ANSWER_PARSER: strict → algorithm2"
    assert (
        settings_changes(stored, config_snapshot(changed(defaults(), "react", "answer_parser", "strict")))
        == []
    )


def test_a_snapshot_that_predates_search_date_filter_reads_as_on() -> None:
    # Every run before SEARCH_DATE_FILTER sent the cutoff as end_date (the committed demo too).
    stored = config_snapshot(defaults())
    del stored["search"]["date_filter"]
    assert settings_changes(stored, config_snapshot(defaults())) == []
    [change] = settings_changes(stored, config_snapshot(changed(defaults(), "search", "date_filter", "off")))
    assert str(change) == "SEARCH_DATE_FILTER: on → off"


def test_the_earlier_implementations_snapshot_reads_as_algorithm2() -> None:
    # The earlier implementation ran the paper's parser (Algorithm 2); its flat snapshot may name it.
    strict = config_snapshot(changed(defaults(), "react", "answer_parser", "strict"))
    assert settings_changes({"MODELS": "vendor/m"}, config_snapshot(defaults())) == []
    assert [str(c) for c in settings_changes({"MODELS": "vendor/m"}, strict)] == [
        "ANSWER_PARSER: algorithm2 → strict"
    ]
    assert settings_changes({"MODELS": "vendor/m", "ANSWER_PARSER": "strict"}, strict) == []


def test_a_run_recorded_before_answer_parser_resumes_only_in_strict_mode(
    recorded: Recorded, tmp_path: Path
) -> None:
    runs_root = tmp_path / "runs"
    shutil.copytree(recorded.runs_root, runs_root)
    [db] = (runs_root / RUN_ID / "db").glob("*.db")
    with sqlite3.connect(db) as conn:
        [(text,)] = conn.execute("SELECT config_snapshot FROM run_meta").fetchall()
        snapshot = json.loads(text)
        del snapshot["react"]["answer_parser"]
        conn.execute("UPDATE run_meta SET config_snapshot = ?", (json.dumps(snapshot),))
    conn.close()
    before = tree(runs_root)
    with pytest.raises(StoreError, match="ANSWER_PARSER: strict → algorithm2"):
        _run(recorded.settings, runs_root)
    assert tree(runs_root) == before
    summary = _run(changed(recorded.settings, "react", "answer_parser", "strict"), runs_root)
    assert summary.slots_run == 0


def test_a_directory_of_another_tool_is_refused_and_left_untouched(
    recorded: Recorded, tmp_path: Path
) -> None:
    foreign = tmp_path / "runs" / RUN_ID
    (foreign / "db").mkdir(parents=True)
    (foreign / "db" / "theirs.sqlite").write_bytes(b"not ours")
    (foreign / "notes.txt").write_text("someone else's\n", encoding="utf-8")
    before = tree(tmp_path)
    with pytest.raises(StoreError) as refused:
        _run(recorded.settings, tmp_path / "runs")
    message = str(refused.value)
    assert "is not an oracleproto run directory (no manifest.json; it holds db, notes.txt)" in message
    assert "nothing was written to it" in message
    assert tree(tmp_path) == before  # no .lock, no cassettes/, no logs/


def test_a_start_interrupted_before_its_manifest_is_ours(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, RUN_ID)
    (run.root / ".lock").write_text("123\n", encoding="utf-8")
    (run.cassettes_dir / "search.yaml").write_text("interactions: []\nversion: 1\n", encoding="utf-8")
    assert run.existing_manifest() is None
    (run.logs_dir / f"{RUN_ID}.log").write_text("{}\n", encoding="utf-8")
    with pytest.raises(StoreError, match="it holds logs"):
        run.existing_manifest()


def test_a_refused_resume_of_sim_run_exits_2_with_the_message(recorded: Recorded) -> None:
    before = tree(recorded.runs_root)
    entry = "from oracleproto.cli.main import main; main()"
    args = ["sim", "run", "--runs-root", str(recorded.runs_root), "--run-id", RUN_ID]
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            entry,
            *args,
            "--models",
            "1",
            "--samples",
            "2",
            "--no-report",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert f"error: run {RUN_ID} cannot be resumed" in result.stderr
    assert "  SAMPLING_N: 1 → 2\n" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert tree(recorded.runs_root) == before


# --- PROTOCOLS_FILE and LEAK_DETECTOR_PROMPT_FILE: the path is a location, the content identity ----

PROTOCOLS = {
    "separator": "\n\n---\n",
    "blocks": [
        {"name": "budget", "text": "At most {{max_steps}} rounds, {{max_search_calls}} searches."},
        {"name": "reflection", "text": "Check each fact twice."},
    ],
}


def with_texts(settings: Settings, protocols: Path | None, detector: Path | None = None) -> Settings:
    """``settings`` with the two file settings (the ENABLE_* switches at their defaults)."""
    react = ReactSettings.from_values({"protocols_file": protocols})
    values = {**settings.detector.model_dump(), "prompt_file": detector}
    return settings.model_copy(update={"react": react, "detector": DetectorSettings.from_values(values)})


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def recorded_with_file(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """A one-sample run recorded with a protocols file (budget first, another separator)."""
    root = tmp_path_factory.mktemp("resume-texts")
    protocols = write_json(root / "protocols.json", PROTOCOLS)
    spec = SimRunSpec(models=1, samples=1, runs_root=root / "runs")
    with Simulator(SimConfig(seed=0)) as sim:
        settings = with_texts(simulated_settings(sim, spec), protocols)
        _run(settings, spec.runs_root)
    return Recorded(spec.runs_root, settings)


def refused_lines(settings: Settings, runs_root: Path) -> list[str]:
    """The change lines of a refused resume, after checking that nothing was written."""
    before = tree(runs_root)
    with pytest.raises(StoreError) as refused:
        _run(settings, runs_root)
    assert tree(runs_root) == before
    return [line.strip() for line in str(refused.value).splitlines() if " → " in line]


def test_a_resume_with_a_changed_protocols_file_is_refused(
    recorded_with_file: Recorded, tmp_path: Path
) -> None:
    # Same texts, another separator: no protocol hash moves, the layout fingerprint does.
    changed_file = write_json(tmp_path / "p.json", {**PROTOCOLS, "separator": "\n\n"})
    lines = refused_lines(with_texts(recorded_with_file.settings, changed_file), recorded_with_file.runs_root)
    [line] = lines
    assert line.startswith(
        "PROTOCOLS_FILE (sha256-16 of the protocol texts, order, separator and suffix): "
    ), line
    # Another text: one line for the file, not a second one for the reflection hash it moved.
    blocks = [PROTOCOLS["blocks"][0], {"name": "reflection", "text": "Check each fact three times."}]
    other_text = write_json(tmp_path / "q.json", {**PROTOCOLS, "blocks": blocks})
    [line] = refused_lines(with_texts(recorded_with_file.settings, other_text), recorded_with_file.runs_root)
    assert line.startswith("PROTOCOLS_FILE (")


def test_a_resume_without_the_protocols_file_is_refused(recorded_with_file: Recorded) -> None:
    lines = refused_lines(with_texts(recorded_with_file.settings, None), recorded_with_file.runs_root)
    assert any(line.startswith("PROTOCOLS_FILE (") and line.endswith("→ built-in texts") for line in lines)


def test_a_built_in_run_resumed_with_a_protocols_file_is_refused(recorded: Recorded, tmp_path: Path) -> None:
    same_blocks = write_json(tmp_path / "p.json", PROTOCOLS)
    lines = refused_lines(with_texts(recorded.settings, same_blocks), recorded.runs_root)
    assert [line.split(":")[0] for line in lines] == [
        "PROTOCOLS_FILE (sha256-16 of the protocol texts, order, separator and suffix)"
    ], lines
    assert lines[0].split(": ", 1)[1].startswith("built-in texts → ")


def test_a_resume_with_another_detector_prompt_file_is_refused(recorded: Recorded, tmp_path: Path) -> None:
    detector = tmp_path / "detector.txt"
    detector.write_text("Leaks after {{cutoff_date}}?\ncontent: {{content}}\n", encoding="utf-8")
    [line] = refused_lines(with_texts(recorded.settings, None, detector), recorded.runs_root)
    assert line.startswith(
        f"LEAK_DETECTOR_PROMPT_FILE (sha256-16 of the detector prompt template): {detector_prompt_hash()} → "
    ), line
