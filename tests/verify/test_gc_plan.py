"""``plan_gc`` / ``apply_gc`` on copies of one recorded run: exactly what is removed, what is
rewritten, what is re-sealed, and what is refused.

One run is recorded per module (a one-model, one-sample simulator run with analysis and an
attestation) plus a stray main-LLM call for a sample the run never stored; each test works on a
copy of it.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from pathlib import Path

import httpx
import pytest

from oracleproto.context import CallContext, call_context
from oracleproto.errors import StoreError
from oracleproto.primitives.clock import FakeClock
from oracleproto.primitives.oslock import lock_exclusive
from oracleproto.providers import OpenAIChatClient
from oracleproto.settings.model import LLMSettings
from oracleproto.sim import Simulator
from oracleproto.sim.harness import SIM_LLM_KEY, SIM_MODELS
from oracleproto.store import RunDir
from oracleproto.store.rundir import WRITER_LOCK
from oracleproto.transport import RecordReplay
from oracleproto.transport.entry import Entry, entry_digest
from oracleproto.transport.fileio import parse_entries, read_entries
from oracleproto.transport.integrity import merkle_root
from oracleproto.transport.layout import GENERATIONS_DIR, all_cassette_files, cassette_files
from oracleproto.transport.store import CassetteStore
from oracleproto.verify import verify_run
from oracleproto.verify.attest import ATTESTATION_NAME, write_attestation
from oracleproto.verify.gc import OPERATION, apply_gc, plan_gc
from oracleproto.verify.switch import switch_files
from tests.runner.conftest import SimRecorder
from tests.verify.test_gc import _stray_call

#: A model the simulator serves and the one-model run never used: its stray entry goes to a
#: cassette file of its own.
OTHER_MODEL = SIM_MODELS[-1][0]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = SimRecorder()(tmp_path_factory.mktemp("gc") / "runs", models=1, samples=1, detector=False).run
    with Simulator() as sim:
        asyncio.run(_stray_call(run.cassettes_dir, sim.base_url))
    write_attestation(run.root)
    return run.root


@pytest.fixture
def run(recorded: Path, tmp_path: Path) -> RunDir:
    target = tmp_path / "runs" / recorded.name
    shutil.copytree(recorded, target)
    return RunDir.open(target)


def read_entries_of(data: bytes) -> list[Entry]:
    return parse_entries(data, "cassette")


def _files(run: RunDir) -> dict[str, bytes]:
    return {p.relative_to(run.root).as_posix(): p.read_bytes() for p in all_cassette_files(run.cassettes_dir)}


def _stray_keys(run: RunDir) -> set[str]:
    return {e.key for e in CassetteStore(run.cassettes_dir, writable=False).effective_entries()} - {
        key for keys in _used(run) for key in keys
    }


def _used(run: RunDir) -> list[list[str]]:
    from oracleproto.store.sample_entries import read_sample_keys

    records = read_sample_keys(run.model_db_paths(run.load_manifest()))
    assert records is not None
    return list(records.values())


def test_the_plan_counts_what_is_kept_and_lists_the_stray_entry_only(run: RunDir) -> None:
    entries = [e for path in cassette_files(run.cassettes_dir, 0) for e in read_entries(path)]
    stray = _stray_keys(run)
    plan = plan_gc(run.root)
    assert len(stray) == 1 and [e.key for e in plan.unreachable] == sorted(stray)
    assert plan.generation == 0 and plan.kept == len(entries) - 1 and plan.finished is None
    assert plan.run.root == run.root


def test_apply_removes_exactly_the_stray_entry_and_reseals_manifest_and_attestation(run: RunDir) -> None:
    before = _files(run)
    attestation = (run.root / ATTESTATION_NAME).read_bytes()
    plan = plan_gc(run.root)
    stray = plan.unreachable[0].key
    expected = {name: [e.key for e in read_entries(run.root / name) if e.key != stray] for name in before}

    assert apply_gc(plan) == 1

    after = _files(run)
    assert [name for name in before if before[name] != after.get(name)] == [
        name for name, keys in expected.items() if stray in [e.key for e in read_entries_of(before[name])]
    ]  # only the file that held the stray entry changed
    assert {name: [e.key for e in read_entries(run.root / name)] for name in after} == {
        name: keys for name, keys in expected.items() if keys
    }
    # The root digest is the Merkle root over what is left, in the store's order (worked out here).
    left = CassetteStore(run.cassettes_dir, writable=False).entries_by_generation()
    digests = [entry_digest(e) for entries in left.values() for e in entries]
    manifest = run.load_manifest()
    assert manifest.cassettes is not None and manifest.cassettes.root_digest == merkle_root(digests)
    assert stray not in {e.key for entries in left.values() for e in entries}
    assert (run.root / ATTESTATION_NAME).read_bytes() != attestation
    report = verify_run(run.root)
    assert report.ok, report.failures
    assert plan_gc(run.root).unreachable == ()


def test_a_file_left_without_entries_is_deleted(run: RunDir) -> None:
    plan = plan_gc(run.root)
    everything = plan_gc(run.root).__class__(
        plan.run,
        plan.generation,
        0,
        tuple(e for path in cassette_files(run.cassettes_dir, 0) for e in read_entries(path)),
    )
    removed = apply_gc(everything)
    assert removed == plan.kept + 1
    assert cassette_files(run.cassettes_dir, 0) == []
    manifest = run.load_manifest()
    assert manifest.cassettes is not None and manifest.cassettes.root_digest == merkle_root([])


def test_a_run_without_an_attestation_gets_none(run: RunDir) -> None:
    (run.root / ATTESTATION_NAME).unlink()
    assert apply_gc(plan_gc(run.root)) == 1
    assert not (run.root / ATTESTATION_NAME).exists()


def test_nothing_to_remove_changes_nothing(run: RunDir) -> None:
    apply_gc(plan_gc(run.root))
    files = _files(run)
    manifest = (run.root / "manifest.json").read_bytes()
    seal = (run.root / ATTESTATION_NAME).read_bytes()
    plan = plan_gc(run.root)
    assert plan.unreachable == ()
    assert apply_gc(plan) == 0
    assert _files(run) == files
    assert (run.root / "manifest.json").read_bytes() == manifest
    assert (run.root / ATTESTATION_NAME).read_bytes() == seal


def test_a_key_outside_the_plans_generation_is_kept(run: RunDir) -> None:
    plan = plan_gc(run.root)
    other = plan.__class__(plan.run, 1, plan.kept, plan.unreachable)
    before = _files(run)
    assert apply_gc(other) == 0
    assert _files(run) == before


def test_only_the_newest_generation_is_collected(run: RunDir) -> None:
    # A refresh's generation 1 holding the same entries: the stray entry in generation 0 is the
    # refresh's baseline and stays; in generation 1 it is garbage.
    newer = run.cassettes_dir / GENERATIONS_DIR / "0001"
    newer.mkdir(parents=True)
    for path in cassette_files(run.cassettes_dir, 0):
        target = newer / path.relative_to(run.cassettes_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    plan = plan_gc(run.root)
    assert plan.generation == 1 and [e.key for e in plan.unreachable] == sorted(_stray_keys(run))
    before0 = {p.name: p.read_bytes() for p in cassette_files(run.cassettes_dir, 0)}
    assert apply_gc(plan) == 1
    assert {p.name: p.read_bytes() for p in cassette_files(run.cassettes_dir, 0)} == before0


def test_a_plan_finishes_an_interrupted_switch_first_and_says_which(run: RunDir) -> None:
    committed = run.root / ".switch"
    (committed / "files").mkdir(parents=True)
    (committed / "files" / "note.txt").write_bytes(b"x\n")
    plan_text = json.dumps({"operation": OPERATION, "replace": ["note.txt"], "delete": []})
    (committed / "plan.json").write_text(plan_text, encoding="utf-8")
    plan = plan_gc(run.root)
    assert plan.finished == OPERATION
    assert (run.root / "note.txt").read_bytes() == b"x\n" and not committed.exists()


def test_a_run_whose_samples_have_no_entry_records_is_refused(run: RunDir) -> None:
    for path in run.model_db_paths(run.load_manifest()).values():
        with sqlite3.connect(path) as conn:
            conn.execute("DELETE FROM oracleproto_sample_entries")
        conn.close()
    with pytest.raises(StoreError, match="predates per-sample entry records, so which entries are unused"):
        plan_gc(run.root)


def test_a_staged_switch_is_discarded_by_the_plan(run: RunDir) -> None:
    staging = run.root / ".switch.staging"
    (staging / "files").mkdir(parents=True)
    assert plan_gc(run.root).finished is None
    assert not staging.exists()


def test_apply_after_a_switch_keeps_the_switch_atomic(run: RunDir, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, list[str], list[str]]] = []

    def record(root: Path, operation: str, replace: dict[str, bytes], delete: list[str]) -> None:
        calls.append((operation, sorted(replace), sorted(delete)))
        switch_files(root, operation, replace, delete)

    monkeypatch.setattr("oracleproto.verify.gc.switch_files", record)
    apply_gc(plan_gc(run.root))
    ((operation, replaced, deleted),) = calls
    assert operation == OPERATION == "cassettes gc --apply"
    assert ATTESTATION_NAME in replaced and "manifest.json" in replaced and deleted == []
    assert len([r for r in replaced if r.startswith("cassettes/")]) == 1


def test_a_run_being_recorded_is_refused_with_what_to_do_then(run: RunDir) -> None:
    lock = run.root / WRITER_LOCK
    with lock.open("w", encoding="utf-8") as held:
        held.write("4242")
        held.flush()
        lock_exclusive(held.fileno())
        with pytest.raises(
            StoreError,
            match=r"\(pid 4242, lock .*\); wait for that process to finish, then "
            r"collect its garbage$",
        ):
            plan_gc(run.root)


def test_an_empty_newest_generation_has_nothing_to_collect(run: RunDir) -> None:
    (run.cassettes_dir / GENERATIONS_DIR / "0001").mkdir(parents=True)
    plan = plan_gc(run.root)
    assert (plan.generation, plan.kept, plan.unreachable) == (1, 0, ())


async def _stray_for(cassettes: Path, base_url: str, model: str, prompt: str) -> None:
    clock = FakeClock()
    llm = LLMSettings.from_values({"base_url": base_url + "/v1", "send_seed": True})
    cache = RecordReplay(cassettes, clock=clock, mode="record")
    async with cache, httpx.AsyncClient(transport=cache.transport("llm")) as http:
        chat = OpenAIChatClient(http, llm, clock, api_key=SIM_LLM_KEY)
        with call_context(CallContext(model, "demo-01", 9)):
            await chat.complete(model, [{"role": "user", "content": prompt}], [])


def _store_order(run: RunDir) -> list[str]:
    stray = _stray_keys(run)
    by_generation = CassetteStore(run.cassettes_dir, writable=False).entries_by_generation()
    return [e.key for e in by_generation[0] if e.key in stray]


def test_strays_in_two_files_are_listed_by_key_and_both_removed(run: RunDir) -> None:
    # A second stray, in a file of its own after the first's; its prompt is picked so that the
    # store's order of the two differs from their key order (a plan must sort, not keep reading order).
    original = set(cassette_files(run.cassettes_dir, 0))
    with Simulator() as sim:
        for attempt in range(40):
            asyncio.run(_stray_for(run.cassettes_dir, sim.base_url, OTHER_MODEL, f"unused prompt {attempt}"))
            order = _store_order(run)
            if order != sorted(order):
                break
            for path in set(cassette_files(run.cassettes_dir, 0)) - original:
                path.unlink()
    order = _store_order(run)
    assert len(order) == 2 and order != sorted(order)
    plan = plan_gc(run.root)
    assert [e.key for e in plan.unreachable] == sorted(order)
    files_before = len(cassette_files(run.cassettes_dir, 0))
    assert apply_gc(plan) == 2
    assert len(cassette_files(run.cassettes_dir, 0)) == files_before - 1  # the other model's file went
    report = verify_run(run.root)
    assert report.ok, report.failures


def test_an_entry_of_a_later_file_is_removed_past_files_that_keep_all_theirs(run: RunDir) -> None:
    files = cassette_files(run.cassettes_dir, 0)
    last = read_entries(files[-1])
    plan = plan_gc(run.root)
    assert not any(e.key == last[0].key for e in plan.unreachable)
    later = plan.__class__(plan.run, 0, plan.kept, (last[0],))
    assert apply_gc(later) == 1
    assert [e.key for e in read_entries(files[-1])] == [e.key for e in last[1:]]
