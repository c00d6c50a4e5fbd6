"""``audit sample``: determinism, uniformity, reachability, blindness, and its CLI errors."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.leakaudit.candidates import RunCandidates
from oracleproto.leakaudit.items import AuditItem, read_items
from oracleproto.leakaudit.sample import SampleOptions, draw, sample_audit
from oracleproto.store import RunDir
from oracleproto.store.model_store import ModelStore

ITEM_KEYS = [
    "item_id", "model", "question_id", "sample", "cutoff_date", "query", "title", "url",
    "published_date", "content", "raw_content", "detector_verdict",
]  # fmt: skip


def sample(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["audit", "sample", *args])
    return result.exit_code, result.stdout + result.stderr


def all_candidates(run_root: Path) -> dict[tuple[str, str, int], int]:
    """Candidates per test item, read independently of the sampler's draw."""
    run = RunCandidates.open(RunDir.open(run_root))
    out = {}
    for model in run.manifest.models:
        with ModelStore.open_existing(run.db_paths[model]) as db:
            for slot in run.sample_keys:
                if slot[0] == model:
                    out[slot] = len(run.candidates(db, slot, run.max_chars(model)))
    return out


def test_same_run_and_seed_give_byte_identical_files(sim_run: Path, tmp_path: Path) -> None:
    for name in ("a", "b"):
        code, out = sample(str(sim_run), "--out", str(tmp_path / name), "--seed", "7")
        assert code == 0, out
    for file in ("audit.jsonl", "audit.json"):
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes()
    code, out = sample(str(sim_run), "--out", str(tmp_path / "c"), "--seed", "8")
    assert code == 0, out
    assert (tmp_path / "c" / "audit.jsonl").read_bytes() != (tmp_path / "a" / "audit.jsonl").read_bytes()
    meta = json.loads((tmp_path / "a" / "audit.json").read_text())
    assert meta["seed"] == 7 and meta["run_id"] == sim_run.name
    assert meta["cassette_root_digest"] == RunDir.open(sim_run).load_manifest().cassettes.root_digest  # type: ignore[union-attr]
    lines = (tmp_path / "a" / "audit.jsonl").read_text().splitlines()
    ids = [json.loads(line)["item_id"] for line in lines]
    assert ids == sorted(ids) and len(ids) == meta["counts"]["audit_items"]


def test_one_item_per_test_item_drawn_from_its_own_candidates(sim_run: Path) -> None:
    counts = all_candidates(sim_run)
    items, meta, _ = sample_audit(RunDir.open(sim_run), SampleOptions(seed=3))
    with_candidates = {slot for slot, n in counts.items() if n}
    assert {(i.model, i.question_id, i.sample) for i in items} == with_candidates
    assert meta["counts"]["candidates"] == sum(counts.values())
    assert meta["counts"]["test_items"] == len(counts)
    items2, _, _ = sample_audit(RunDir.open(sim_run), SampleOptions(seed=3, per_item=3))
    per_slot = Counter((i.model, i.question_id, i.sample) for i in items2)
    assert all(per_slot[s] == min(3, counts[s]) for s in with_candidates)


def test_the_draw_is_uniform_and_reaches_every_candidate(sim_run: Path) -> None:
    # Chi-square over 600 seeds, pooled over the fixture's test items (their real candidate counts).
    counts = {slot: n for slot, n in all_candidates(sim_run).items() if n > 1}
    assert counts
    seeds = 600
    chi2, dof = 0.0, 0
    for slot, n in counts.items():
        hits = Counter(draw(seed, slot, n, 1)[0] for seed in range(seeds))
        assert set(hits) == set(range(n)), slot  # every candidate reachable
        expected = seeds / n
        chi2 += sum((hits[i] - expected) ** 2 / expected for i in range(n))
        dof += n - 1
    # Mean dof, sd sqrt(2·dof): five sd above is far out for a uniform draw.
    assert chi2 < dof + 5 * (2 * dof) ** 0.5, (chi2, dof)
    assert chi2 > dof - 5 * (2 * dof) ** 0.5, (chi2, dof)  # not suspiciously regular either


def test_draw_without_replacement() -> None:
    for seed in range(50):
        picked = draw(seed, ("m", "q", 0), 7, 7)
        assert sorted(picked) == list(range(7))
    assert draw(0, ("m", "q", 0), 3, 5) and len(draw(0, ("m", "q", 0), 3, 5)) == 3
    assert draw(0, ("m", "q", 0), 0, 1) == []


def test_items_never_carry_the_question_options_or_gold(sim_run: Path, tmp_path: Path) -> None:
    code, out = sample(str(sim_run), "--out", str(tmp_path), "--per-item", "20")
    assert code == 0, out
    db = next((sim_run / "db").glob("*.db"))
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        questions = {qid: (event, options, answer) for qid, event, options, answer in conn.execute(
            "SELECT id, event, options, answer FROM questions")}  # fmt: skip
    conn.close()
    text = (tmp_path / "audit.jsonl").read_text()
    for line in text.splitlines():
        record = json.loads(line)
        assert list(record) == ITEM_KEYS
        event, options, _answer = questions[record["question_id"]]
        # Only the model's own query and the page may echo the event; nothing of ours adds it.
        fields = {k: v for k, v in record.items() if k not in ("query", "title", "content", "raw_content")}
        assert all(event not in str(v) for v in fields.values())
        assert options not in line and '"answer"' not in line
    assert "question" not in {k for k in AuditItem.model_fields if k != "question_id"}


def test_models_and_questions_narrow_the_set(sim_run: Path, tmp_path: Path) -> None:
    code, out = sample(str(sim_run), "--out", str(tmp_path), "--models", "sim/careful", "--questions", "2")
    assert code == 0, out
    items = read_items(tmp_path)
    meta = json.loads((tmp_path / "audit.json").read_text())
    order = RunDir.open(sim_run).load_manifest().filters.question_ids
    assert meta["parameters"]["question_ids"] == order[:2]
    assert {i.question_id for i in items} <= set(order[:2])
    assert meta["parameters"]["models"] == ["sim/careful::r5::c4"]


def test_bad_input_exits_2_and_writes_nothing(sim_run: Path, tmp_path: Path) -> None:
    code, out = sample(str(sim_run), "--out", str(tmp_path / "x"), "--models", "sim/nobody")
    assert code == 2 and "--models: 'sim/nobody' names 0 of this run's models" in out
    assert not (tmp_path / "x").exists()
    code, out = sample(str(tmp_path / "missing"), "--out", str(tmp_path / "y"))
    assert code == 2 and "Traceback" not in out and not (tmp_path / "y").exists()
    code, out = sample(str(sim_run), "--out", str(tmp_path / "z"), "--per-item", "0")
    assert code == 2 and not (tmp_path / "z").exists()


def test_resampling_over_labels_of_another_set_is_refused(sim_run: Path, tmp_path: Path) -> None:
    assert sample(str(sim_run), "--out", str(tmp_path), "--seed", "1")[0] == 0
    (tmp_path / "labels").mkdir()
    (tmp_path / "labels" / "alice.jsonl").write_text("")
    before = (tmp_path / "audit.jsonl").read_bytes()
    assert sample(str(sim_run), "--out", str(tmp_path), "--seed", "1")[0] == 0  # same set: fine
    code, out = sample(str(sim_run), "--out", str(tmp_path), "--seed", "2")
    assert code == 2 and "holds labels for a different audit set" in out
    assert (tmp_path / "audit.jsonl").read_bytes() == before
