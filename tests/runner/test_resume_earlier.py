"""A run the earlier implementation wrote is never resumed: refused before a byte is written."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.dataset.demo import demo_db_path
from oracleproto.errors import StoreError
from oracleproto.primitives.clock import SystemClock
from oracleproto.runner.execute import RunOptions, execute_run
from oracleproto.runner.identity import resolve_identity
from oracleproto.runner.manifest_build import build_manifest
from oracleproto.runner.plan import build_plan
from oracleproto.runner.resume_guard import resume_changes
from oracleproto.runner.setting_roles import SECTIONS
from oracleproto.settings.model import Settings
from oracleproto.store import CassettesInfo, RunDir
from tests.earlier_layout import CUTOFFS, RUN_ID, write_earlier_run

#: The earlier run's configuration, as one would set it to "continue" that run.
ENV = {
    "MODELS": ",".join(CUTOFFS),
    "MODEL_TRAINING_CUTOFFS": ",".join(f"{slug}={day}" for slug, day in CUTOFFS.items()),
    "SAMPLING_N": "2",
    "GRID_R_LIST": "5",
    "GRID_C_LIST": "4",
    "LLM_BASE_URL": "https://api.example.test/v1",
    "LLM_API_KEY": "sk-test-abcdefgh",
    "TAVILY_API_KEY": "tvly-test-abcdefgh",
    "ENABLE_SEARCH_LEAK_FILTER": "false",
}


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for folders)."""
    return {
        str(p.relative_to(root)): p.read_bytes() if p.is_file() else None for p in sorted(root.rglob("*"))
    }


def matching_settings() -> Settings:
    """Settings equal to the earlier run's in every identity setting it recorded."""
    values: dict[str, dict[str, Any]] = {
        "llm": {
            "models": list(CUTOFFS),
            "training_cutoffs": dict(CUTOFFS),
            "base_url": ENV["LLM_BASE_URL"],
            "api_key": ENV["LLM_API_KEY"],
        },
        "search": {"api_keys": [ENV["TAVILY_API_KEY"]]},
        "detector": {"enabled": False},
        "run": {"sampling_n": 2, "grid_r_list": [5], "grid_c_list": [4]},
    }
    return Settings(**{name: cls.from_values(values.get(name, {})) for name, cls in SECTIONS.items()})  # type: ignore[attr-defined]


@pytest.fixture
def runs_root(tmp_path: Path) -> Path:
    """A runs root holding one finished earlier-implementation run (no analysis: not needed here)."""
    write_earlier_run(tmp_path / "runs", analysis=False)
    return tmp_path / "runs"


def test_only_the_layout_rule_refuses_it(runs_root: Path) -> None:
    # The settings match what the earlier run recorded, so the identity check alone would let the
    # resume in: it would then create .lock and cassettes/ and add recorded samples to unrecorded ones.
    settings = matching_settings()
    identity = resolve_identity(settings, demo_db_path())
    plan = build_plan(
        identity.questions,
        real_models=settings.llm.models,
        training_cutoffs=identity.training_cutoffs,
        r_list=settings.run.grid_r_list,
        c_list=settings.run.grid_c_list,
        sampling_n=settings.run.sampling_n,
        delta_days=settings.run.delta_days,
    )
    fresh = build_manifest(
        RUN_ID,
        identity,
        plan,
        settings,
        started_at=datetime.now(UTC),
        finished_at=None,
        cassettes=CassettesInfo(dir="cassettes", mode="record"),
    )
    run = RunDir.at(runs_root, RUN_ID)
    existing = run.existing_manifest()
    assert existing is not None and existing.earlier_implementation
    assert resume_changes(run, existing, fresh, identity.config_snapshot) == []

    before = tree(runs_root)
    options = RunOptions(
        settings=settings,
        source_db=demo_db_path(),
        runs_root=runs_root,
        mode="record",
        run_id=RUN_ID,
        progress=False,
    )
    with pytest.raises(StoreError) as refused:
        asyncio.run(execute_run(options, clock=SystemClock(), rand=random.Random(0)))
    message = str(refused.value)
    assert f"run {RUN_ID} was written by the earlier implementation of the paper" in message
    assert "oracleproto does not resume it" in message and "Nothing was written" in message
    assert f"`oracleproto verify {RUN_ID}`" in message
    assert tree(runs_root) == before  # no .lock, no cassettes/, no log line, no manifest rewrite


@pytest.mark.parametrize("mode", [["--record"], []], ids=["record", "replay"])
def test_run_with_its_run_id_exits_2_and_leaves_nothing(
    runs_root: Path, tmp_path: Path, mode: list[str]
) -> None:
    before = tree(runs_root)
    args = ["run", *mode, "--run-id", RUN_ID, "--runs-root", str(runs_root), "--no-progress"]
    result = CliRunner().invoke(cli, [*args, "--env-file", str(tmp_path / "absent.env")], env=ENV)
    assert result.exit_code == 2, result.output
    assert "was written by the earlier implementation of the paper" in result.output
    assert "Traceback" not in result.output
    assert tree(runs_root) == before
    assert not (runs_root / RUN_ID / ".lock").exists() and not (runs_root / RUN_ID / "cassettes").exists()
