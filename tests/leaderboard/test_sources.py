"""A panel of runs: merged when they are one experiment, refused by name when they are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from oracleproto.errors import AnalysisError
from oracleproto.leaderboard import build_leaderboard
from oracleproto.leaderboard.identity import NOT_EXPERIMENT, differences
from oracleproto.leaderboard.sources import Board, merge, opened_sources, viewer_names
from tests.analysis.builder import QUESTIONS
from tests.leaderboard.panel import ALWAYS_A, ONE, RIGHT, RUN_A, RUN_B, THREE, TWO, two_runs, write_panel_run

REFUSED = "these runs cannot stand on one leaderboard"


def _merge(*runs: Path) -> Board:
    with opened_sources([(run.name, run) for run in runs]) as sources:
        return merge(sources)


def _refusal(tmp_path: Path, runs: tuple[Path, ...]) -> str:
    out = tmp_path / "board"
    with pytest.raises(AnalysisError) as caught:
        build_leaderboard([(run.name, run) for run in runs], out, views=False)
    assert not out.exists()  # nothing written, not even the folder
    message = str(caught.value)
    assert message.startswith(REFUSED) and message.endswith("Nothing was written.")
    return message


def test_two_runs_of_one_experiment_merge_in_order(tmp_path: Path) -> None:
    a, b = two_runs(tmp_path)
    board = _merge(a, b)
    assert [m.slug for m in board.merged.models] == [ONE, TWO, THREE]
    assert {slug: s.run_id for slug, s in board.origin.items()} == {
        ONE: RUN_A,
        TWO: RUN_A,
        THREE: RUN_B,
    }
    assert board.merged.run_id == f"{RUN_A}+{RUN_B}"


def test_a_panel_scores_on_one_population_and_links_each_row_to_its_run(tmp_path: Path) -> None:
    a, b = two_runs(tmp_path)
    built = build_leaderboard([("a", a), ("b", b)], tmp_path / "board")
    rows = {m["slug"]: m for m in built.document["models"]}
    # 13 points (1+1+1+2+2+3+3); "A" everywhere earns q1 (1), q5 (2) and F1 2/3 of q6's 3: 5 of 13.
    assert rows[ONE]["score"] == 100.0
    assert rows[TWO]["score"] == rows[THREE]["score"] == round(500 / 13, 6)
    assert [rows[s]["point_rank"] for s in (ONE, TWO, THREE)] == [1, 2, 2]
    assert [rows[s]["viewer"] for s in (ONE, TWO, THREE)] == [
        f"oracleproto-view-{RUN_A}.html#/questions/0",
        f"oracleproto-view-{RUN_A}.html#/questions/1",
        f"oracleproto-view-{RUN_B}.html#/questions/0",
    ]
    assert [r["run_id"] for r in built.document["runs"]] == [RUN_A, RUN_B]
    assert all(r["viewer_written"] for r in built.document["runs"])
    assert sorted(p.name for p in (tmp_path / "board").iterdir()) == [
        ".oracleproto-leaderboard",
        "leaderboard.csv",
        "leaderboard.html",
        f"oracleproto-view-{RUN_A}.html",
        f"oracleproto-view-{RUN_B}.html",
    ]
    # Every pair of the three models was tested on the shared resamples.
    assert len(built.document["pairs"]) == 3


def test_another_dataset_is_refused_by_name(tmp_path: Path) -> None:
    hashes = {"source_db": "t" * 64, "metadata": "m" * 64, "prompt_templates": "p" * 64}
    message = _refusal(tmp_path, two_runs(tmp_path, hashes=hashes))
    assert f"run {RUN_B} ({RUN_B}) differs from run {RUN_A}:" in message
    assert "SOURCE_DB (sha256 of the dataset file): " in message
    assert "metadata" not in message.split("differs", 1)[1]  # only what differs is named


def test_one_dataset_file_with_its_templates_hashed_in_another_form_is_one_experiment(tmp_path: Path) -> None:
    # A legacy dataset's templates: stand-ins in a run recorded before, as written in a newer one.
    a, b = two_runs(
        tmp_path,
        first={"hashes": {"source_db": "s" * 64, "metadata": "m" * 64, "prompt_templates": "1" * 64}},
        hashes={"source_db": "s" * 64, "metadata": "m" * 64, "prompt_templates": "2" * 64},
    )
    with opened_sources([("a", a), ("b", b)]) as sources:
        assert differences(sources[0].data, sources[1].data) == []
    # Another file: the templates' hash is named with it.
    c, d = two_runs(
        tmp_path / "other",
        first={"hashes": {"source_db": "s" * 64, "metadata": "m" * 64, "prompt_templates": "1" * 64}},
        hashes={"source_db": "t" * 64, "metadata": "m" * 64, "prompt_templates": "2" * 64},
    )
    with opened_sources([("c", c), ("d", d)]) as sources:
        names = [found.name for found in differences(sources[0].data, sources[1].data)]
    assert names == ["SOURCE_DB (sha256 of the dataset file)", "dataset prompt templates (sha256)"]


def test_another_n_other_questions_and_settings_are_each_named(tmp_path: Path) -> None:
    ids = [q.id for q in QUESTIONS]
    a, b = two_runs(
        tmp_path,
        first={"snapshot": {"llm": {"temperature": 0.7}}},
        sampling_n=2,
        filters={"question_types": None, "choice_types": None, "question_ids": [*ids[:-1], "q99"]},
        snapshot={"llm": {"temperature": 0.2}},
    )
    message = _refusal(tmp_path, (a, b))
    lines = [line.strip() for line in message.splitlines()]
    assert "SAMPLING_N: 3 vs 2" in lines
    selected = "questions selected (SOURCE_DB / SOURCE_TABLE / QUESTION_LIMIT)"
    assert f"{selected}: 7 questions vs 7 questions (other ids)" in lines
    assert "LLM_TEMPERATURE: 0.7 vs 0.2" in lines


def test_where_the_models_were_served_from_is_not_the_experiment(tmp_path: Path) -> None:
    assert "LLM_BASE_URL" in NOT_EXPERIMENT
    a, b = two_runs(
        tmp_path,
        first={"snapshot": {"llm": {"base_url": "https://one.example/v1", "temperature": 0.7}}},
        snapshot={"llm": {"base_url": "https://two.example/v1", "temperature": 0.7}},
    )
    with opened_sources([("a", a), ("b", b)]) as sources:
        assert differences(sources[0].data, sources[1].data) == []
        assert len(merge(sources).merged.models) == 3


def test_a_run_given_twice_is_named_once(tmp_path: Path) -> None:
    a, _ = two_runs(tmp_path)
    message = _refusal(tmp_path, (a, a))
    assert f"run {RUN_A} is given twice ({RUN_A} and {RUN_A}): give it once" in message
    assert "model " not in message  # not also each of its models, once per model


def test_one_model_in_two_runs_is_refused(tmp_path: Path) -> None:
    a = write_panel_run(tmp_path, RUN_A, {ONE: RIGHT})
    b = write_panel_run(tmp_path, RUN_B, {ONE: ALWAYS_A})
    message = _refusal(tmp_path, (a, b))
    assert (
        f"model {ONE} is in run {RUN_A} and in run {RUN_B}: a board has one row per model "
        "configuration; leave one of the runs out"
    ) in message


def test_display_names_of_the_runs_are_joined_and_a_conflict_noted(tmp_path: Path) -> None:
    a, b = two_runs(
        tmp_path,
        first={"snapshot": {"analysis": {"display_names": {"vendor-a/one": "One", "vendor-b/two": "Two"}}}},
        snapshot={"analysis": {"display_names": {"vendor-a/one": "Uno", "vendor-c/three": "Three"}}},
    )
    board = _merge(a, b)
    assert board.display_names == {
        "vendor-a/one": "One",
        "vendor-b/two": "Two",
        "vendor-c/three": "Three",
    }
    assert board.notes == (
        f"vendor-a/one is named 'One' by an earlier run and 'Uno' by run {RUN_B}: "
        "shown as 'One' (--names sets it)",
    )
    built = build_leaderboard([("a", a), ("b", b)], tmp_path / "board", views=False)
    assert [m["name"] for m in built.document["models"]] == ["One", "Two", "Three"]
    assert board.notes[0] in built.document["notes"]


def test_viewer_file_names_are_safe_and_unique() -> None:
    assert viewer_names(["20260101-000000-de00"]) == ["oracleproto-view-20260101-000000-de00.html"]
    assert viewer_names(["a/b", "a b", "a_b", "", "../x#y?z"]) == [
        "oracleproto-view-a_b.html",
        "oracleproto-view-a_b-2.html",
        "oracleproto-view-a_b-3.html",
        "oracleproto-view-run.html",
        "oracleproto-view-.._x_y_z.html",
    ]
