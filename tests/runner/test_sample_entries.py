"""Which cassette entries each stored sample used, and the manifest's root over them."""

from __future__ import annotations

import json
from pathlib import Path

from oracleproto.store.sample_entries import entry_digests, read_sample_keys, sample_entries_root
from oracleproto.transport import CassetteStore
from tests.runner.conftest import SimRecorder, read_slots


def test_every_sample_is_bound_to_exactly_the_entries_its_trajectory_used(
    record_sim: SimRecorder, tmp_path: Path
) -> None:
    summary = record_sim(tmp_path, models=2, samples=2)
    run = summary.run
    manifest = run.load_manifest()
    keys = read_sample_keys(run.model_db_paths(manifest))
    store = CassetteStore(run.cassettes_dir, writable=False)
    entries = {e.key: e for e in store.effective_entries()}
    slots = read_slots(run.root)
    skipped = {slot for slot, cells in slots.items() if cells["error"] == "skipped_training_cutoff"}
    assert keys is not None and set(keys) == set(slots)
    assert all(keys[slot] == [] for slot in skipped)  # excluded before any traffic
    used_anywhere: set[str] = set()
    for slot, slot_keys in keys.items():
        if slot in skipped:
            continue
        llm = {k for k in slot_keys if entries[k].channel == "llm"}
        # The llm entries of a sample are exactly those recorded under its context.
        mine = {
            e.key
            for e in entries.values()
            if e.channel == "llm" and e.context is not None
            and (e.context["model"], e.context["question_id"], e.context["sample"]) == slot
        }  # fmt: skip
        assert llm == mine and len(llm) == slots[slot]["react_steps"], slot
        calls = json.loads(slots[slot]["search_calls"] or "[]")
        searches = [k for k in slot_keys if entries[k].channel == "search"]
        detector = [k for k in slot_keys if entries[k].channel == "detector"]
        assert len(searches) == len({c["query"] for c in calls}), slot
        assert len(detector) >= (1 if any(c.get("n_results_raw") for c in calls) else 0), slot
        used_anywhere |= set(slot_keys)
    assert used_anywhere == set(entries)  # nothing recorded that no sample used
    assert manifest.sample_entries_root == sample_entries_root(keys, entry_digests(store.get))


def test_the_root_moves_when_any_used_entry_or_entry_list_changes(
    record_sim: SimRecorder, tmp_path: Path
) -> None:
    run = record_sim(tmp_path, models=1, samples=1, detector=False).run
    keys = read_sample_keys(run.model_db_paths(run.load_manifest()))
    assert keys is not None
    store = CassetteStore(run.cassettes_dir, writable=False)
    root = sample_entries_root(keys, entry_digests(store.get))
    slot, first = next((s, k) for s, k in sorted(keys.items()) if k)
    fewer = {**keys, slot: first[1:]}
    assert sample_entries_root(fewer, entry_digests(store.get)) != root
    swapped = {**keys, slot: sorted(keys[next(s for s in sorted(keys) if s != slot and keys[s])])}
    assert sample_entries_root(swapped, entry_digests(store.get)) != root
