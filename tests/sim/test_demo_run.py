"""Whole demo runs through the real runner: skill shows in the scores, and leaks would too."""

from __future__ import annotations

import json
import random
from pathlib import Path

from oracleproto.dataset.demo import demo_db_path
from oracleproto.primitives.clock import SystemClock
from oracleproto.runner.execute import RunOptions, execute_run
from oracleproto.sim.harness import SimRunSpec, simulated_settings
from oracleproto.sim.server import SimConfig, Simulator
from oracleproto.store import ModelStore

N = 3
DEMO_IDS = [f"demo-{i:02d}" for i in range(1, 17)]
OUTCOME = "Outcome confirmed on"


async def _run(tmp: Path, personas: tuple[str, ...], *, detector: bool, honour_end_date: bool) -> Path:
    # One training cutoff before every demo question, so all personas answer the same 16 × n slots.
    spec = SimRunSpec(
        samples=N, runs_root=tmp, detector=detector, personas=personas, training_cutoff="2025-11"
    )
    with Simulator(SimConfig(seed=0, honour_end_date=honour_end_date)) as sim:
        options = RunOptions(
            settings=simulated_settings(sim, spec), source_db=demo_db_path(), runs_root=tmp, progress=False
        )
        summary = await execute_run(options, clock=SystemClock(), rand=random.Random(0))
    assert summary.slots_run == len(personas) * len(DEMO_IDS) * N and not summary.errors
    return summary.run.root


def _scores(root: Path, persona: str) -> tuple[float, int]:
    """(accuracy, search results shown to the model that state the outcome) of one persona's samples."""
    with ModelStore.open_existing(root / "db" / f"sim__{persona}__r5__c4.db") as store:
        results = [store.read_sample(q, j) for q in DEMO_IDS for j in range(N)]
    assert all(r is not None for r in results)
    correct = sum(bool(r.correct) for r in results if r is not None)
    leaked = sum(
        OUTCOME in item["content"]
        for r in results
        if r is not None
        for m in r.messages_trace or []
        if m.get("role") == "tool"
        for item in json.loads(str(m["content"])).get("results", [])
    )
    return correct / len(results), leaked


async def test_personas_differ_in_skill_on_the_demo(tmp_path: Path) -> None:
    personas = ("careful", "hasty", "sloppy", "random", "oracle")
    root = await _run(tmp_path, personas, detector=True, honour_end_date=True)
    accuracy = {p: _scores(root, p)[0] for p in personas}
    assert accuracy["careful"] > accuracy["hasty"] > accuracy["sloppy"] > accuracy["random"], accuracy
    assert accuracy["oracle"] == max(accuracy.values()), accuracy
    # Chance on the demo's mix of formats is about 0.31; evidence must lift the skilled well above.
    assert accuracy["careful"] >= accuracy["random"] + 0.3, accuracy
    assert all(_scores(root, p)[1] == 0 for p in personas)  # mask + detector: no outcome reaches a model


async def test_the_time_mask_and_the_detector_keep_outcomes_from_the_model(tmp_path: Path) -> None:
    guarded = await _run(tmp_path / "guarded", ("oracle",), detector=True, honour_end_date=True)
    no_detector = await _run(tmp_path / "no-detector", ("oracle",), detector=False, honour_end_date=True)
    open_web = await _run(tmp_path / "open", ("oracle",), detector=False, honour_end_date=False)
    acc_guarded, leaks_guarded = _scores(guarded, "oracle")
    acc_no_detector, leaks_no_detector = _scores(no_detector, "oracle")
    acc_open, leaks_open = _scores(open_web, "oracle")
    assert leaks_guarded == 0
    # Stale pages (dated before the cutoff, updated after) pass the date mask; only the detector stops them.
    assert leaks_no_detector > 0
    # Without the date mask the results pages come in too.
    assert leaks_open > leaks_no_detector
    # A leak is visible in the score: the outcome stated outright beats any forecast.
    assert acc_no_detector > acc_guarded and acc_open > acc_guarded
    # The stored audit shows why: with the detector on, it dropped results.
    with ModelStore.open_existing(guarded / "db" / "sim__oracle__r5__c4.db") as store:
        sample = store.read_sample("demo-01", 0)
    assert sample is not None
    verdicts = [v for call in sample.search_calls or [] for v in call.get("detector_verdicts", [])]
    assert verdicts and set(verdicts) <= {"keep", "drop"}
