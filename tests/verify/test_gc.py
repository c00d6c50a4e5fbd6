"""``oracleproto cassettes gc``: entries no stored sample used are listed, then removed on --apply."""

from __future__ import annotations

import asyncio
import fcntl
import random
import shutil
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from oracleproto.analysis.postrun import write_run_analysis
from oracleproto.cli.main import cli
from oracleproto.context import CallContext, call_context
from oracleproto.errors import StoreError, TransportError
from oracleproto.primitives.clock import FakeClock
from oracleproto.providers import OpenAIChatClient
from oracleproto.runner.replay import replay_run
from oracleproto.settings.model import LLMSettings
from oracleproto.sim import Simulator
from oracleproto.sim.harness import SIM_LLM_KEY
from oracleproto.store import RunDir
from oracleproto.transport import RecordReplay
from oracleproto.verify import verify_run
from oracleproto.verify.attest import write_attestation
from oracleproto.verify.gc import apply_gc, plan_gc
from tests.runner.conftest import SimRecorder


async def _stray_call(cassettes: Path, base_url: str) -> None:
    """One main-LLM call for a sample the run never stored (as a session with other settings leaves)."""
    clock = FakeClock()
    llm = LLMSettings.from_values({"base_url": base_url + "/v1", "send_seed": True})
    cache = RecordReplay(cassettes, clock=clock, mode="record")
    async with cache, httpx.AsyncClient(transport=cache.transport("llm")) as http:
        chat = OpenAIChatClient(http, llm, clock, api_key=SIM_LLM_KEY)
        with call_context(CallContext("sim/careful::r5::c4", "demo-01", 7)):
            await chat.complete("sim/careful", [{"role": "user", "content": "a prompt nobody kept"}], [])


@pytest.fixture(scope="module")
def garbage_template(tmp_path_factory: pytest.TempPathFactory) -> RunDir:
    """A sealed run holding one entry no stored sample used (recorded once: each test changes a copy)."""
    run = SimRecorder()(
        tmp_path_factory.mktemp("gc") / "runs", models=1, samples=1, detector=False, analysis=True
    ).run
    with Simulator() as sim:
        asyncio.run(_stray_call(run.cassettes_dir, sim.base_url))
    write_attestation(run.root)
    return run


@pytest.fixture
def run_with_garbage(garbage_template: RunDir, tmp_path: Path) -> RunDir:
    run = RunDir.at(tmp_path / "runs", garbage_template.run_id)
    shutil.copytree(garbage_template.root, run.root)
    return run


def gc(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["cassettes", "gc", *args])
    return result.exit_code, result.output + str(result.exception or "")


def test_gc_lists_then_removes_exactly_the_unused_entry(run_with_garbage: RunDir, tmp_path: Path) -> None:
    run = run_with_garbage
    plan = plan_gc(run.root)
    assert [(e.channel, e.context and e.context["sample"]) for e in plan.unreachable] == [("llm", 7)]
    code, out = gc(str(run.root))
    assert code == 0, out
    assert f"1 of {plan.kept + 1} entries in generation 0 are used by no stored sample" in out
    assert "sim/careful::r5::c4 demo-01 s7 t0" in out and "rerun with --apply" in out
    assert plan_gc(run.root).unreachable == plan.unreachable  # the dry run changed nothing
    assert not verify_run(run.root).ok  # the stray entry is not covered by the manifest

    code, out = gc(str(run.root), "--apply")

    assert code == 0, out
    assert "removed 1 entries; manifest.json cassettes.root_digest and attestation.json updated" in out
    assert plan_gc(run.root).unreachable == ()
    report = verify_run(run.root)
    assert report.ok, report.failures  # root digest and attestation re-sealed, samples untouched
    replay = replay_run(
        run.root, tmp_path / "replayed", clock=FakeClock(), rand=random.Random(0), progress=False,
        after=lambda replayed, settings, plots: write_run_analysis(replayed.root, settings.analysis, plots),
    )  # fmt: skip
    replayed = asyncio.run(replay)
    assert replayed.ok, [c for c in replayed.checks if not c.ok]


def test_gc_refuses_an_unfinished_run(run_with_garbage: RunDir) -> None:
    run = run_with_garbage
    manifest = run.load_manifest()
    run.write_manifest(manifest.model_copy(update={"finished_at": None}))
    with pytest.raises(StoreError, match="has not finished: its unfinished samples' entries would look"):
        plan_gc(run.root)


def test_gc_never_rewrites_around_a_live_writers_journal(run_with_garbage: RunDir) -> None:
    run = run_with_garbage
    journal = run.cassettes_dir / ".journal"
    journal.mkdir(exist_ok=True)
    live = journal / "99-abcd.jsonl"
    live.write_text('{"key": "pending"}\n', encoding="utf-8")
    before = sorted(p.read_bytes() for p in run.cassettes_dir.rglob("*.yaml"))
    # Locked as a live recorder holds its journal: gc cannot fold it, so it must not rewrite.
    with live.open("rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        with pytest.raises(TransportError, match="not yet folded into the cassettes; resume it"):
            apply_gc(plan_gc(run.root))
    assert sorted(p.read_bytes() for p in run.cassettes_dir.rglob("*.yaml")) == before


def test_gc_names_a_corrupt_journal_instead_of_folding_it(run_with_garbage: RunDir) -> None:
    run = run_with_garbage
    journal = run.cassettes_dir / ".journal"
    journal.mkdir(exist_ok=True)
    (journal / "99-abcd.jsonl").write_text('{"key": "pending"}\n{"key": "x"}\n', encoding="utf-8")
    before = sorted(p.read_bytes() for p in run.cassettes_dir.rglob("*.yaml"))
    with pytest.raises(TransportError, match=r"99-abcd\.jsonl, line 1"):
        plan_gc(run.root)
    assert sorted(p.read_bytes() for p in run.cassettes_dir.rglob("*.yaml")) == before
