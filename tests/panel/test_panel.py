"""``oracleproto panel``: a panel built from simulator-recorded shards reads like a run (report,
leaderboard, view), verifies (and fails when a member's DB or the panel's copy changes), replays
every member byte for byte, equals the same experiment recorded as one run, and every refusal
says why, exits 2 and writes nothing."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from benchmarks.panel_compare import compare_summaries
from oracleproto.analysis import write_analysis
from oracleproto.analysis.postrun import analyze_with_settings
from oracleproto.objectstore.cache import CACHE_ENV
from oracleproto.panel.build import analysis_settings
from oracleproto.panel.verify import open_recorded_members
from oracleproto.verify.target import verify_path
from tests.ledger.support import MODELS, invoke
from tests.panel.support import Recorded, build, panel_file, seal_sha


def _built(tree: Recorded) -> Path:
    code, stdout, stderr = build(tree.root, list(tree.shards))
    assert code == 0, stderr
    panel = Path(stdout.strip().splitlines()[-1])
    assert panel == (tree.root / "panel").resolve()
    return panel


def test_a_panel_is_laid_out_as_a_run_and_pins_its_members(tree: Recorded) -> None:
    panel = _built(tree)
    manifest = json.loads((panel / "manifest.json").read_text(encoding="utf-8"))
    document = json.loads((panel / "panel.json").read_text(encoding="utf-8"))
    # The experiment's model order, as a single run of it lists them.
    assert [m.split("::")[0] for m in manifest["models"]] == sorted(MODELS)
    assert manifest["experiment"]["id"] == tree.experiment
    assert manifest["experiment"]["shard_index"] is None and "cassettes" not in manifest
    assert document["experiment"] == tree.experiment
    assert [m["run_id"] for m in document["members"]] == [s.name for s in tree.shards]
    assert [m["seal"] for m in document["members"]] == ["attestation.json", "manifest.json"]
    assert [m["sha256"] for m in document["members"]] == [seal_sha(s) for s in tree.shards]
    assert document["models"]["sim/careful::r5::c4"] == tree.shards[0].name
    assert document["run_id"] == manifest["run_id"] and document["run_id"].endswith(document["root"][:4])
    for member, shard in zip(document["members"], tree.shards, strict=True):
        assert (panel / member["ref"]["path"]).resolve() == shard.resolve()
        for entry in member["databases"].values():
            assert (panel / "db" / entry["file"]).read_bytes() == (shard / "db" / entry["file"]).read_bytes()
    assert (panel / "attestation.json").is_file() and (panel / "analysis" / "summary.json").is_file()
    # Built again from the same members: the same bytes (nothing depends on the clock).
    code, stdout, _ = build(tree.root, list(tree.shards), out="again")
    assert code == 0
    again = Path(stdout.strip().splitlines()[-1])
    for name in ("manifest.json", "attestation.json", "analysis/summary.json"):
        assert (again / name).read_bytes() == (panel / name).read_bytes(), name
    assert json.loads((again / "panel.json").read_bytes())["root"] == document["root"]


def test_report_leaderboard_and_view_take_a_panel(tree: Recorded) -> None:
    panel = _built(tree)
    report = invoke(["report", panel, "--out", tree.root / "report"])
    assert report.exit_code == 0, report.output
    for model in MODELS:
        assert f"| {model}::r5::c4 |" in report.stdout
    board = invoke(["leaderboard", panel, "--out", tree.root / "board"])
    assert board.exit_code == 0, board.output
    csv = (tree.root / "board" / "leaderboard.csv").read_text(encoding="utf-8")
    assert all(model in csv for model in MODELS)
    view = invoke(["view", panel, "--out", tree.root / "view.html"])
    assert view.exit_code == 0, view.output
    page = (tree.root / "view.html").read_text(encoding="utf-8")
    assert all(model in page for model in MODELS)


def test_verify_passes_then_fails_when_a_members_db_changes(tree: Recorded) -> None:
    panel = _built(tree)
    ok = invoke(["verify", panel])
    assert ok.exit_code == 0, ok.output
    assert "pass  panel root" in ok.stdout and "pass  panel.json" in ok.stdout
    assert all(f"pass  member {shard.name} verify" in ok.stdout for shard in tree.shards)
    db = next((tree.shards[1] / "db").glob("*.db"))
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE run_results SET s0_final_answer_letters = 'Z' WHERE rowid = 1")
    conn.close()
    report = verify_path(panel)
    assert not report.ok
    failed = {c.what: c.detail for c in report.failures}
    assert f"db/{db.name}" in failed and "not byte-identical to" in failed[f"db/{db.name}"]
    assert "differs from its members in members" in failed["panel.json"]
    bad = invoke(["verify", panel])
    assert bad.exit_code == 1


def test_verify_fails_when_the_panels_copy_changes(tree: Recorded) -> None:
    panel = _built(tree)
    copy = next((panel / "db").glob("*.db"))
    data = bytearray(copy.read_bytes())
    data[-1] ^= 0x01
    copy.write_bytes(bytes(data))
    report = verify_path(panel)
    failed = {c.what: c.detail for c in report.failures}
    assert (
        f"file db/{copy.name}" in failed
        and "sha256 differs from the attestation" in failed[f"file db/{copy.name}"]
    )
    assert f"db/{copy.name}" in failed and "not byte-identical" in failed[f"db/{copy.name}"]


def test_verify_fails_when_a_member_is_resealed_or_gone(tree: Recorded) -> None:
    panel = _built(tree)
    manifest = tree.shards[1] / "manifest.json"
    manifest.write_bytes(manifest.read_bytes().replace(b'"sampling_n": 1', b'"sampling_n": 1 '))
    failed = {c.what: c.detail for c in verify_path(panel).failures}
    member = f"member {tree.shards[1].name}"
    assert member in failed and "sha256 mismatch" in failed[member]
    import shutil

    shutil.rmtree(tree.shards[0])
    failed = {c.what: c.detail for c in verify_path(panel).failures}
    assert "missing" in failed[f"member {tree.shards[0].name}"]


def test_replay_reproduces_every_member_byte_for_byte(tree: Recorded) -> None:
    panel = _built(tree)
    for command in (["replay", panel, "--out", tree.root / "replayed"], ["panel", "replay", panel]):
        result = invoke(command)
        assert result.exit_code == 0, result.output
        for shard in tree.shards:
            assert f"member {shard.name}: reproduced byte for byte" in result.stdout
        assert "every member reproduced byte for byte (4 DBs as in the panel)" in result.stdout
    for shard in tree.shards:
        replayed = tree.root / "replayed" / shard.name
        assert (replayed / "manifest.json").read_bytes() == (shard / "manifest.json").read_bytes()


def test_replay_fails_when_a_member_no_longer_holds_what_was_recorded(tree: Recorded) -> None:
    panel = _built(tree)
    db = next((tree.shards[1] / "db").glob("*.db"))
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE run_results SET s0_final_answer_letters = 'Z' WHERE rowid = 1")
    conn.close()
    result = invoke(["replay", panel])
    assert result.exit_code == 1, result.output
    assert f"member {tree.shards[1].name}: did NOT reproduce" in result.stdout
    assert f"db/{db.name}: DIFFERS" in result.stdout
    assert "did NOT reproduce" in result.stdout.splitlines()[-1]


def test_the_panel_equals_the_experiment_recorded_as_one_run(tree: Recorded, tmp_path: Path) -> None:
    panel = _built(tree)
    members, _ = open_recorded_members(panel, json.loads((panel / "panel.json").read_bytes()), print)
    out = tmp_path / "single-analysis"
    write_analysis(analyze_with_settings(tree.single, analysis_settings(members)), out)
    single = json.loads((out / "summary.json").read_bytes())
    merged = json.loads((panel / "analysis" / "summary.json").read_bytes())
    comparison = compare_summaries(single, merged)
    assert comparison.compared > 200
    assert comparison.equal, comparison.differing[:10]
    # The tables that hold no latency or run id are the same bytes.
    for name in ("table4_buckets.csv", "table5_consistency.csv", "table_pairs.csv"):
        assert (out / name).read_bytes() == (panel / "analysis" / name).read_bytes(), name


def _refused(
    tree: Recorded, members: list[Path], said: list[str], *, sha: dict[Path, str] | None = None
) -> None:
    spec = panel_file(tree.root, members, sha=sha)
    result = invoke(["panel", "build", spec, "--out", tree.root / "panel"])
    assert result.exit_code == 2, result.output
    for text in said:
        assert text in result.stderr, result.stderr
    assert "Traceback" not in result.output
    assert not (tree.root / "panel").exists()
    assert not [p for p in tree.root.iterdir() if p.name.startswith(".panel.")]


def test_a_member_of_another_experiment_is_refused_naming_the_setting(tree: Recorded) -> None:
    _refused(
        tree,
        [tree.shards[0], tree.other_experiment],
        [
            f"run {tree.other_experiment.name}",
            "is not of the experiment of run",
            "experiment id part 'settings':",
            "LLM_TEMPERATURE",
            "Nothing was written.",
        ],
    )


def test_one_model_in_two_members_is_refused(tree: Recorded) -> None:
    _refused(
        tree,
        [tree.shards[0], tree.overlapping],
        ["model sim/careful::r5::c4 is in run", "leave one of them out", "Nothing was written."],
    )


def test_a_run_given_twice_is_refused(tree: Recorded) -> None:
    _refused(tree, [tree.shards[0], tree.shards[0]], ["give each run once"])


def test_a_members_sha256_mismatch_is_refused(tree: Recorded) -> None:
    wrong, found = "0" * 64, seal_sha(tree.shards[1])
    _refused(
        tree,
        list(tree.shards),
        [f"sha256 mismatch — the panel file pins {wrong} but its manifest.json has {found}"],
        sha={tree.shards[1]: wrong},
    )


def test_a_missing_member_is_refused(tree: Recorded) -> None:
    gone = tree.root / "shard9" / "runs" / "20260101-000000-dead"
    _refused(
        tree,
        [tree.shards[0], gone],
        ["member path shard9/runs/20260101-000000-dead: missing"],
        sha={gone: "1" * 64},
    )


def test_bad_panel_files_and_outputs_are_refused(tree: Recorded) -> None:
    spec = tree.root / "PANEL.toml"
    cases = {
        "[[member]]\npath = 'x'\n": "sha256: Field required",
        "[[member]]\npath = 'x'\nstore = 'y'\nsha256 = '"
        + "a" * 64
        + "'\n": "give exactly one of 'path' and 'store'",
        "[[member]]\npath = 'x'\nsha256 = 'abc'\n": "is not 64 lower-case hex digits",
        "name = \n": "not valid TOML",
        "name = 'empty'\n": "member: Field required",
    }
    for text, said in cases.items():
        spec.write_text(text, encoding="utf-8")
        result = invoke(["panel", "build", spec, "--out", tree.root / "panel"])
        assert result.exit_code == 2 and said in result.stderr, (text, result.output)
        assert not (tree.root / "panel").exists()
    taken = tree.root / "taken"
    taken.mkdir()
    (taken / "file").write_text("x", encoding="utf-8")
    panel_file(tree.root, list(tree.shards))
    result = invoke(["panel", "build", spec, "--out", taken])
    assert result.exit_code == 2 and "exists and is not an empty folder" in result.stderr
    assert sorted(p.name for p in taken.iterdir()) == ["file"]
    missing = invoke(["panel", "build", tree.root / "nope.toml", "--out", tree.root / "panel"])
    assert missing.exit_code == 2 and "panel file not found" in missing.stderr
    run = invoke(["panel", "verify", tree.shards[0]])
    assert run.exit_code == 2 and "not a panel (no panel.json)" in run.stderr


def test_a_member_named_by_store_id(tree: Recorded, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tree.root / "store-cache"))
    url = f"file://{tree.root / 'store'}"
    sealed = tree.shards[0]  # store push takes a sealed run
    pushed = invoke(["store", "push", sealed, "--store", url, "--quiet"], {CACHE_ENV: str(tree.root / "c")})
    assert pushed.exit_code == 0, pushed.output
    spec = tree.root / "PANEL.toml"
    spec.write_text(
        f'store = "{url}"\n'
        f'[[member]]\nstore = "{sealed.name}"\nsha256 = "{seal_sha(sealed)}"\n'
        f'[[member]]\npath = "{tree.shards[1].relative_to(tree.root).as_posix()}"\n'
        f'sha256 = "{seal_sha(tree.shards[1])}"\n',
        encoding="utf-8",
    )
    built = invoke(["panel", "build", spec, "--out", tree.root / "panel"], {CACHE_ENV: str(tree.root / "c")})
    assert built.exit_code == 0, built.output
    document = json.loads((tree.root / "panel" / "panel.json").read_bytes())
    assert document["members"][0]["ref"] == {"store": sealed.name, "url": url}
    assert document["members"][0]["run_id"] == sealed.name
    # The panel's root does not depend on where a member is kept.
    code, stdout, _ = build(tree.root, list(tree.shards), out="by-path")
    assert code == 0
    assert (
        json.loads((Path(stdout.strip().splitlines()[-1]) / "panel.json").read_bytes())["root"]
        == document["root"]
    )
    report = verify_path(tree.root / "panel")
    assert report.ok, report.failures
    # A store id that the store does not hold: the member is missing.
    spec.write_text(
        f'store = "{url}"\n[[member]]\nstore = "20200101-000000-beef"\nsha256 = "{"2" * 64}"\n',
        encoding="utf-8",
    )
    missing = invoke(
        ["panel", "build", spec, "--out", tree.root / "nowhere"], {CACHE_ENV: str(tree.root / "c")}
    )
    assert missing.exit_code == 2, missing.output
    assert "member store id 20200101-000000-beef: missing from the store" in missing.stderr
    assert not (tree.root / "nowhere").exists()


def test_the_panel_file_sets_the_model_order(tree: Recorded) -> None:
    order = ["sim/random", "sim/careful", "sim/hasty", "sim/greedy"]
    spec = panel_file(tree.root, list(tree.shards))
    listed = ", ".join(f'"{m}"' for m in order)
    spec.write_text(f"models = [{listed}]\n" + spec.read_text(encoding="utf-8"), encoding="utf-8")
    built = invoke(["panel", "build", spec, "--out", tree.root / "panel"])
    assert built.exit_code == 0, built.output
    manifest = json.loads((tree.root / "panel" / "manifest.json").read_bytes())
    assert [m.split("::")[0] for m in manifest["models"]] == order
    assert verify_path(tree.root / "panel").ok
    for bad, said in [
        (order[:3], "sim/greedy is not listed (a member records it)"),
        ([*order, "sim/oracle"], "sim/oracle is listed but no member records it"),
        ([*order, "sim/hasty"], "sim/hasty is listed twice"),
    ]:
        text = spec.read_text(encoding="utf-8").split("\n", 1)[1]
        spec.write_text("models = [" + ", ".join(f'"{m}"' for m in bad) + "]\n" + text, encoding="utf-8")
        refused = invoke(["panel", "build", spec, "--out", tree.root / "refused"])
        assert refused.exit_code == 2 and said in refused.stderr, refused.output
        assert "Nothing was written." in refused.stderr and not (tree.root / "refused").exists()


def test_panel_verify_and_replay_take_a_panel_by_id_prefix_under_the_runs_root(tree: Recorded) -> None:
    panel_id = "20260101-000000-ab01"
    code, _, stderr = build(tree.root, list(tree.shards), out=f"panels/{panel_id}")
    assert code == 0, stderr
    runs_root = str(tree.root / "panels")
    verified = invoke(["panel", "verify", "20260101-0000", "--runs-root", runs_root])
    assert verified.exit_code == 0, verified.output
    assert verified.stdout.splitlines()[-1].startswith("VERIFIED")
    replayed = invoke(["panel", "replay", panel_id, "--runs-root", runs_root])
    assert replayed.exit_code == 0, replayed.output
    refused = invoke(["panel", "verify", "demo"])
    assert refused.exit_code == 2
    assert "demo: not a panel (no panel.json); `oracleproto verify` checks a run" in refused.stderr
