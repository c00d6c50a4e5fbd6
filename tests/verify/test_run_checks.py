"""``verify_run``'s report, branch by branch: which checks, in which order, with which words.

Each test pins the whole list of check names (or the checks themselves) a branch of
``oracleproto/verify/run.py`` produces, the progress messages, and the exact wording of the checks
run.py writes itself. The regeneration of ``analysis/`` costs seconds, so most tests replace
``check_analysis`` and ``check_refresh_audit`` with markers that record their arguments; the first
two tests run everything.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from oracleproto.dataset.demo import demo_db_path
from oracleproto.errors import StoreError
from oracleproto.panel import verify as panel_verify
from oracleproto.settings.model import AnalysisSettings
from oracleproto.store import Manifest, RunDir
from oracleproto.verify import run as run_module
from oracleproto.verify.findings import Check, VerifyReport, failed, not_applicable, passed, skipped
from oracleproto.verify.run import verify_run
from tests.earlier_layout import SOURCE_DB, write_earlier_run

RUN_ID = "20260101-000000-de00"
DBS = ("sim__careful__r5__c4.db", "sim__hasty__r5__c4.db", "sim__sloppy__r5__c4.db")
SLUGS = ("sim/careful::r5::c4", "sim/hasty::r5::c4", "sim/sloppy::r5::c4")
CASSETTES = (
    "cassettes/detector.yaml",
    *(f"cassettes/llm/{db.removesuffix('.db')}.yaml" for db in DBS),
    "cassettes/search.yaml",
)
EARLIER_DBS = ("vendor-d__Model_4__preview___r5__c4.db", "vendor-a__m1__r5__c4.db")
EARLIER_RUN_ID = "20250911-080910-beef"
#: Every progress message of a run of ours, in order.
PROGRESS = ["manifest", "files against the attestation", "cassettes", "databases", "dataset hash chain"]
NO_RECORDING = (
    "not applicable: written by the earlier implementation (manifest.json has no 'cassettes' nor "
    "'oracleproto_version'), which records no provider exchanges: there is no recording to check"
)
ANALYSIS_MARK = passed("analysis stub", "check_analysis")
AUDIT_MARK = passed("audit stub", "check_refresh_audit")


def db_checks(name: str) -> list[str]:
    return [
        f"db/{name} sqlite",
        f"db/{name} run_meta ↔ manifest",
        f"db/{name} prompt_templates ↔ run_meta",
        f"db/{name} questions ↔ manifest filters",
    ]


def dataset_checks(dbs: tuple[str, ...]) -> list[str]:
    return [
        "dataset source_db hash",
        "dataset metadata hash",
        "dataset prompt_templates hash",
        *(f"db/{name} questions ↔ dataset" for name in dbs),
    ]


#: A run of ours from the manifest to the cassettes' root digest (attestation present).
HEAD = ["manifest.json", "attestation.json", "files ↔ attestation", *CASSETTES, "cassettes root digest"]
ALL_DBS = [what for name in DBS for what in db_checks(name)]
#: The model files' names against the layout's rule (once every database could be read).
FILE_NAMES = "manifest.json model_files ↔ naming rule"
GRID = "manifest.json grid ↔ models"
PROTOCOLS = "run_meta protocol texts ↔ hashes"
#: The checks between the databases and the dataset, for a run of ours.
MIDDLE = [
    FILE_NAMES,
    GRID,
    "sample entries root",
    "config_snapshot agreement",
    "harness profile: built-in, recorded before harness profiles",
    PROTOCOLS,
]
#: A run of ours from the databases to the end, with the analysis stubbed (``no_regeneration``).
STUBBED_TAIL = [*ALL_DBS, *MIDDLE, *dataset_checks(DBS), "analysis stub", "audit stub"]
#: An earlier-implementation run from the manifest to its snapshots' agreement.
EARLIER_HEAD = [
    "manifest.json",
    "attestation.json",
    "cassettes",
    "sample entries root",
    *(what for name in EARLIER_DBS for what in db_checks(name)),
    FILE_NAMES,
    GRID,
    "earlier-implementation layout",
    "config_snapshot agreement",
]


def whats(report: VerifyReport) -> list[str]:
    return [check.what for check in report.checks]


def by_what(report: VerifyReport, what: str) -> Check:
    (check,) = [c for c in report.checks if c.what == what]
    return check


def published(run: Path) -> list[str]:
    return sorted(p.relative_to(run).as_posix() for p in run.rglob("*") if p.is_file())


def analysis_files(run: Path) -> list[str]:
    return [
        f"analysis/{p.relative_to(run / 'analysis').as_posix()}"
        for p in sorted((run / "analysis").rglob("*"))
    ]


def first_snapshot(run: Path, db: str) -> dict[str, Any]:
    with sqlite3.connect(f"{(run / 'db' / db).as_uri()}?mode=ro", uri=True) as conn:
        text = conn.execute("SELECT config_snapshot FROM run_meta").fetchone()[0]
    conn.close()
    snapshot: dict[str, Any] = json.loads(text)
    return snapshot


def set_snapshot(run: Path, db: str, snapshot: dict[str, Any]) -> None:
    with sqlite3.connect(run / "db" / db) as conn:
        conn.execute("UPDATE run_meta SET config_snapshot = ?", (json.dumps(snapshot),))
    conn.close()


def verify(run: Path, **kwargs: Any) -> tuple[VerifyReport, list[str]]:
    """``verify_run`` with its progress messages collected."""
    messages: list[str] = []
    return verify_run(run, progress=messages.append, **kwargs), messages


@pytest.fixture
def no_regeneration(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Path, Path, AnalysisSettings]]:
    """``check_analysis`` and ``check_refresh_audit`` as markers recording what they were given."""
    calls: list[tuple[str, Path, Path, AnalysisSettings]] = []

    def marker(name: str, check: Check) -> Callable[[Path, Path, AnalysisSettings], list[Check]]:
        def record(run_root: Path, analysis_dir: Path, settings: AnalysisSettings) -> list[Check]:
            calls.append((name, run_root, analysis_dir, settings))
            return [check]

        return record

    monkeypatch.setattr(run_module, "check_analysis", marker("analysis", ANALYSIS_MARK))
    monkeypatch.setattr(run_module, "check_refresh_audit", marker("audit", AUDIT_MARK))
    return calls


@pytest.fixture(scope="module")
def earlier_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small earlier-implementation run (six questions), its dataset where its snapshot names it."""
    return write_earlier_run(tmp_path_factory.mktemp("earlier") / "runs", questions=6)


# --- the whole report -----------------------------------------------------------------------------


def test_a_sound_run_reports_every_check_in_order(demo_run: Path) -> None:
    report, progress = verify(demo_run)
    assert whats(report) == [
        *HEAD,
        *ALL_DBS,
        *MIDDLE,
        *dataset_checks(DBS),
        *analysis_files(demo_run),
    ]
    assert {c.status for c in report.checks} == {"pass"}
    assert report.checks[0] == passed("manifest.json", "valid, canonical")
    files = len(published(demo_run)) - 1  # all but attestation.json itself
    assert report.checks[1:3] == [
        passed("attestation.json", f"{files} files attested"),
        passed("files ↔ attestation", f"{files} files byte-identical"),
    ]
    assert progress == [*PROGRESS, "analysis regeneration"]
    assert report.target == demo_run


def test_an_earlier_run_reports_every_check_in_order(earlier_copy: Path) -> None:
    report, progress = verify(earlier_copy)
    assert whats(report) == [
        *EARLIER_HEAD,
        "dataset",
        *dataset_checks(EARLIER_DBS),
        *analysis_files(earlier_copy),
    ]
    assert report.checks[:4] == [
        passed(
            "manifest.json",
            "valid, canonical; written by the earlier implementation (no oracleproto additions)",
        ),
        skipped("attestation.json", "absent: per-file digests not checked"),
        not_applicable("cassettes", NO_RECORDING),
        not_applicable("sample entries root", NO_RECORDING),
    ]
    dataset = (earlier_copy.parent.parent / "forecast_eval_set.db").resolve()
    assert by_what(report, "dataset") == passed(
        "dataset", f"{dataset}: SOURCE_DB './forecast_eval_set.db' of run_meta.config_snapshot"
    )
    assert report.ok, report.failures
    assert progress == ["manifest", "databases", "dataset hash chain", "analysis regeneration"]


# --- manifest.json --------------------------------------------------------------------------------


def test_a_manifest_that_is_not_utf8_ends_the_report_after_the_attestation(demo_copy: Path) -> None:
    (demo_copy / "attestation.json").unlink()
    path = demo_copy / "manifest.json"
    path.write_bytes(b"\xff" + path.read_bytes())
    report, progress = verify(demo_copy)
    assert report.checks == [
        failed("manifest.json", "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"),
        skipped("attestation.json", "absent: per-file digests not checked"),
    ]
    assert progress == ["manifest"]


def test_a_manifest_that_is_not_json_is_named_and_the_attestation_still_checked(demo_copy: Path) -> None:
    (demo_copy / "manifest.json").write_text("not json\n", encoding="utf-8")
    report, progress = verify(demo_copy)
    files = len(published(demo_copy)) - 1
    assert whats(report) == ["manifest.json", "attestation.json", "file manifest.json"]
    assert report.checks[:2] == [
        failed(
            "manifest.json",
            "manifest.json: not valid JSON (Expecting value at line 1, column 1); "
            "restore the file from a backup or start a new run",
        ),
        passed("attestation.json", f"{files} files attested"),
    ]
    assert report.checks[2].status == "FAIL"
    assert progress == ["manifest", "files against the attestation"]


def test_a_hand_edited_manifest_layout_is_located(demo_copy: Path, no_regeneration: list[Any]) -> None:
    path = demo_copy / "manifest.json"
    data = path.read_bytes()
    offset = data.index(b'"run_id"')
    path.write_bytes(data[:offset] + b" " + data[offset:])
    line = data[:offset].count(b"\n") + 1
    column = offset - data[:offset].rindex(b"\n")
    report, _ = verify(demo_copy)
    assert report.checks[0] == failed(
        "manifest.json",
        f"manifest.json: byte offset {offset} (line {line}, column {column}): bytes differ from the "
        "canonical form of its own content (hand-edited layout)",
    )
    # The rest of the run is still checked.
    assert whats(report)[1:] == [
        "attestation.json",
        "file manifest.json",
        *CASSETTES,
        "cassettes root digest",
        *STUBBED_TAIL,
    ]


def test_an_earlier_manifest_is_located_against_the_form_with_the_newline(
    earlier_copy: Path, no_regeneration: list[Any]
) -> None:
    # The earlier layout is accepted with or without the final newline; a second newline is located
    # against the form with one: at its end, where the lengths differ.
    path = earlier_copy / "manifest.json"
    data = path.read_bytes()
    assert not data.endswith(b"\n")
    path.write_bytes(data + b"\n\n")
    length = len(data) + 1  # the canonical form, with its newline
    lines = data.count(b"\n") + 2
    report, _ = verify(earlier_copy)
    assert report.checks[0] == failed(
        "manifest.json",
        f"manifest.json: byte offset {length} (line {lines}, column 1): lengths differ ({length} vs "
        f"{length + 1}): bytes differ from the canonical form of its own content (hand-edited layout)",
    )


def test_a_manifest_of_another_run_id_than_its_folder_is_named(
    demo_run: Path, tmp_path: Path, no_regeneration: list[Any]
) -> None:
    moved = tmp_path / "runs" / "20260101-000000-ab00"
    shutil.copytree(demo_run, moved)
    report, progress = verify(moved)
    assert report.checks[0] == failed(
        "manifest.json", f"manifest.json: run_id {RUN_ID!r} is not the folder name"
    )
    assert whats(report) == [*HEAD, *STUBBED_TAIL]
    assert progress == [*PROGRESS, "analysis regeneration"]


def test_a_run_being_recorded_is_refused(demo_copy: Path) -> None:
    run = RunDir.open(demo_copy)
    with run.writer_lock(), pytest.raises(StoreError) as info:
        verify_run(demo_copy)
    assert str(info.value) == (
        f"run {RUN_ID} is being recorded right now by another process (pid {os.getpid()}, lock "
        f"{demo_copy / '.lock'}); wait for that process to finish, then verify the run"
    )


# --- attestation.json -----------------------------------------------------------------------------


def test_without_an_attestation_the_files_are_not_checked(
    demo_copy: Path, no_regeneration: list[Any]
) -> None:
    (demo_copy / "attestation.json").unlink()
    report, progress = verify(demo_copy)
    assert whats(report) == [
        "manifest.json",
        "attestation.json",
        *CASSETTES,
        "cassettes root digest",
        *STUBBED_TAIL,
    ]
    assert report.checks[1] == skipped("attestation.json", "absent: per-file digests not checked")
    assert progress == ["manifest", "cassettes", "databases", "dataset hash chain", "analysis regeneration"]


def test_a_damaged_attestation_is_reported_and_no_file_is_checked_against_it(
    demo_copy: Path, no_regeneration: list[Any]
) -> None:
    (demo_copy / "attestation.json").write_text("{", encoding="utf-8")
    report, progress = verify(demo_copy)
    assert report.checks[1] == failed(
        "attestation.json",
        "attestation.json: not valid JSON (Expecting property name enclosed in double quotes: line 1 "
        "column 2 (char 1)); the attestation itself is damaged",
    )
    assert whats(report)[2:] == [*CASSETTES, "cassettes root digest", *STUBBED_TAIL]
    assert progress == [*PROGRESS, "analysis regeneration"]


# --- interrupted maintenance ----------------------------------------------------------------------


def write_plan(run: Path, operation: str = "cassettes gc") -> None:
    folder = run / ".switch"
    folder.mkdir()
    plan = {"operation": operation, "replace": [], "delete": []}
    (folder / "plan.json").write_text(json.dumps(plan), encoding="utf-8")


def unfinished(run: Path, operation: str, why: str) -> Check:
    """The failed check of a committed switch that could not be finished (``why``: the error)."""
    return failed(
        "interrupted maintenance",
        f"{run / '.switch'}: an interrupted `{operation}` is committed but not finished, and finishing "
        f"it failed ({why}); rerun `oracleproto cassettes gc {run} --apply` where the run is writable",
    )


def lock_error(run: Path) -> str:
    """The error of taking the writer lock when ``.lock`` is a folder (as on a read-only copy)."""
    return f"[Errno {errno.EISDIR}] Is a directory: '{run / '.lock'}'"


def test_an_interrupted_maintenance_command_is_finished_first(
    demo_copy: Path, no_regeneration: list[Any]
) -> None:
    write_plan(demo_copy)
    report, _ = verify(demo_copy)
    assert report.checks[0] == passed(
        "interrupted maintenance",
        "finished an interrupted `cassettes gc` first (its new cassettes and seal are now in place)",
    )
    assert whats(report)[1:] == [*HEAD, *STUBBED_TAIL]
    assert not (demo_copy / ".switch").exists()
    assert report.ok, report.failures


def test_maintenance_that_cannot_be_finished_here_says_where_to_finish_it(
    demo_copy: Path, no_regeneration: list[Any]
) -> None:
    # `.lock` a folder: the writer lock cannot be opened, as on a read-only copy.
    write_plan(demo_copy)
    (demo_copy / ".lock").mkdir()
    report, progress = verify(demo_copy)
    assert report.checks[0] == unfinished(demo_copy, "cassettes gc", lock_error(demo_copy))
    assert (demo_copy / ".switch" / "plan.json").is_file()
    assert whats(report)[1] == "manifest.json"
    assert progress == [*PROGRESS, "analysis regeneration"]


def test_a_leftover_staging_folder_is_said_to_be_uncommitted_and_names_no_command(
    demo_copy: Path, no_regeneration: list[Any]
) -> None:
    # Only an uncommitted staging folder: nothing was switched, no plan names a command, and the
    # staging folder (which the writer lock is needed to remove) is what is left to do.
    (demo_copy / ".switch.staging").mkdir()
    (demo_copy / ".lock").mkdir()
    report, progress = verify(demo_copy)
    assert report.checks[0] == failed(
        "interrupted maintenance",
        f"{demo_copy / '.switch.staging'}: a maintenance command was interrupted before its commit, so "
        "none of the run's files were changed, but its staging folder is left over and could not be "
        f"removed here ({lock_error(demo_copy)}); delete that folder (it is not part of the run), or "
        "verify the run where it is writable, which removes it",
    )
    assert "committed but not finished" not in report.checks[0].detail
    assert (demo_copy / ".switch.staging").is_dir()
    # The run's files are checked as they are.
    assert whats(report)[1:] == [*HEAD, *STUBBED_TAIL]
    assert progress == [*PROGRESS, "analysis regeneration"]


def test_a_committed_switch_beside_a_staging_folder_is_still_the_committed_one(
    demo_copy: Path, no_regeneration: list[Any]
) -> None:
    write_plan(demo_copy)
    (demo_copy / ".switch.staging").mkdir()
    (demo_copy / ".lock").mkdir()
    report, _ = verify(demo_copy)
    assert report.checks[0] == unfinished(demo_copy, "cassettes gc", lock_error(demo_copy))


def test_a_commit_folder_without_its_plan_names_no_command(
    demo_copy: Path, no_regeneration: list[Any]
) -> None:
    # `.switch/` without plan.json: committed, but no plan says which command; the lock cannot be taken.
    (demo_copy / ".switch").mkdir()
    (demo_copy / ".lock").mkdir()
    report, _ = verify(demo_copy)
    assert report.checks[0] == unfinished(demo_copy, "maintenance command", lock_error(demo_copy))


def test_a_store_error_while_finishing_is_a_failed_check(
    demo_copy: Path, monkeypatch: pytest.MonkeyPatch, no_regeneration: list[Any]
) -> None:
    write_plan(demo_copy, "bundle import")

    def refuse(run: RunDir) -> str:
        assert run.root == demo_copy
        raise StoreError("held by another process")

    monkeypatch.setattr(run_module, "finish_interrupted", refuse)
    report, _ = verify(demo_copy)
    assert report.checks[0] == unfinished(demo_copy, "bundle import", "held by another process")


def test_a_damaged_plan_is_a_failed_check_not_an_exception(
    demo_copy: Path, no_regeneration: list[Any]
) -> None:
    (demo_copy / ".switch").mkdir()
    plan = demo_copy / ".switch" / "plan.json"
    plan.write_text("{", encoding="utf-8")
    report, _ = verify(demo_copy)
    assert report.checks[0] == unfinished(
        demo_copy,
        "maintenance command",
        f"{plan}: the plan of an interrupted maintenance switch is unreadable (Expecting property name "
        "enclosed in double quotes: line 1 column 2 (char 1)); it was written before its commit, so "
        "this is damage: restore the run from a copy",
    )


# --- cassettes ------------------------------------------------------------------------------------


def test_a_cassette_folder_leading_out_of_the_run_is_one_failed_check(
    demo_copy: Path, tmp_path: Path, no_regeneration: list[Any]
) -> None:
    (demo_copy / "attestation.json").unlink()
    outside = tmp_path / "outside"
    (demo_copy / "cassettes").rename(outside)
    (demo_copy / "cassettes").symlink_to(outside)
    report, _ = verify(demo_copy)
    assert whats(report) == ["manifest.json", "attestation.json", "cassettes", *STUBBED_TAIL]
    assert report.checks[2] == failed(
        "cassettes",
        f"{demo_copy / 'manifest.json'}: cassettes.dir {demo_copy / 'cassettes'} leads outside {demo_copy} "
        f"(to {outside}, through a symlink); refusing to follow it",
    )
    assert by_what(report, "sample entries root") == skipped(
        "sample entries root", "not computed: the cassettes failed their checks above"
    )


def test_a_cassette_check_that_raises_is_one_failed_check(
    demo_copy: Path, monkeypatch: pytest.MonkeyPatch, no_regeneration: list[Any]
) -> None:
    started: list[tuple[Path, Path, str]] = []

    def start(run_root: Path, cassette_dir: Path, manifest: Manifest) -> Callable[[], Any]:
        started.append((run_root, cassette_dir, manifest.run_id))

        def finish() -> Any:
            raise StoreError("cassettes/search.yaml: vanished")

        return finish

    monkeypatch.setattr(run_module, "start_check_cassettes", start)
    report, _ = verify(demo_copy)
    assert started == [(demo_copy, demo_copy / "cassettes", RUN_ID)]
    assert whats(report) == [
        "manifest.json",
        "attestation.json",
        "files ↔ attestation",
        "cassettes",
        *STUBBED_TAIL,
    ]
    assert report.checks[3] == failed("cassettes", "cassettes/search.yaml: vanished")
    assert by_what(report, "sample entries root").status == "skip"


def test_the_cassette_digests_reach_the_sample_check(
    demo_run: Path, monkeypatch: pytest.MonkeyPatch, no_regeneration: list[Any]
) -> None:
    # The sample check gets the digests the cassette check returned (and the run's DBs).
    given: list[tuple[str, list[str], dict[str, str] | None]] = []

    def samples(manifest: Manifest, db_paths: dict[str, Path], digests: dict[str, str] | None) -> Check:
        given.append((manifest.run_id, [p.name for p in db_paths.values()], digests))
        return passed("sample entries root", "stub")

    def start(run_root: Path, cassette_dir: Path, manifest: Manifest) -> Callable[[], Any]:
        return lambda: ([passed("cassettes stub")], {"key": "digest"})

    monkeypatch.setattr(run_module, "check_sample_entries", samples)
    monkeypatch.setattr(run_module, "start_check_cassettes", start)
    report, _ = verify(demo_run)
    assert given == [(RUN_ID, list(DBS), {"key": "digest"})]
    assert whats(report)[:4] == ["manifest.json", "attestation.json", "files ↔ attestation", "cassettes stub"]


# --- databases ------------------------------------------------------------------------------------


def test_a_missing_database_ends_the_report_after_the_cassettes(
    demo_copy: Path, no_regeneration: list[Any]
) -> None:
    (demo_copy / "attestation.json").unlink()
    (demo_copy / "db" / DBS[1]).unlink()
    report, progress = verify(demo_copy)
    assert whats(report) == ["manifest.json", "attestation.json", *CASSETTES, "cassettes root digest", "db/"]
    assert report.checks[-1] == failed(
        "db/",
        f"{demo_copy / 'db' / DBS[1]}: database of model {SLUGS[1]!r} is missing from {demo_copy / 'db'}",
    )
    assert progress == ["manifest", "cassettes", "databases"]
    assert no_regeneration == []


def test_an_unreadable_database_stops_before_the_dataset_and_the_analysis(
    demo_copy: Path, no_regeneration: list[Any]
) -> None:
    (demo_copy / "attestation.json").unlink()
    (demo_copy / "db" / DBS[1]).write_bytes(b"not a database, " * 64)
    report, progress = verify(demo_copy)
    assert whats(report) == [
        "manifest.json",
        "attestation.json",
        *CASSETTES,
        "cassettes root digest",
        *db_checks(DBS[0]),
        f"db/{DBS[1]} sqlite",
        *db_checks(DBS[2]),
    ]
    assert by_what(report, f"db/{DBS[1]} sqlite").status == "FAIL"
    assert progress == ["manifest", "cassettes", "databases"]
    assert no_regeneration == []


def test_a_run_without_models_stops_after_the_databases(demo_copy: Path, no_regeneration: list[Any]) -> None:
    (demo_copy / "attestation.json").unlink()
    manifest = Manifest.load(demo_copy / "manifest.json")
    edited = manifest.model_copy(update={"models": [], "model_files": {}})
    (demo_copy / "manifest.json").write_text(edited.to_json(), encoding="utf-8")
    report, progress = verify(demo_copy)
    assert whats(report) == ["manifest.json", "attestation.json", *CASSETTES, "cassettes root digest"]
    assert progress == ["manifest", "cassettes", "databases"]


def test_a_model_file_named_against_the_layouts_rule_fails(
    demo_copy: Path, no_regeneration: list[Any]
) -> None:
    # run-layout.md names each DB from its virtual slug: another reader would look for that name.
    (demo_copy / "attestation.json").unlink()
    manifest = Manifest.load(demo_copy / "manifest.json")
    files = {**manifest.model_files, SLUGS[0]: "whatever.db"}
    (demo_copy / "manifest.json").write_text(
        manifest.model_copy(update={"model_files": files}).to_json(), encoding="utf-8"
    )
    (demo_copy / "db" / DBS[0]).rename(demo_copy / "db" / "whatever.db")
    report, _ = verify(demo_copy)
    assert by_what(report, FILE_NAMES) == failed(
        FILE_NAMES,
        f"{SLUGS[0]!r} → 'whatever.db' (the rule gives {DBS[0]!r}); a reader of the layout looks for the "
        "rule's name",
    )


def _edit_grid(run: Path, **changes: Any) -> None:
    """Rewrite the manifest with ``changes`` to ``models`` or to its ``grid``; no attestation to refuse it."""
    (run / "attestation.json").unlink(missing_ok=True)
    manifest = Manifest.load(run / "manifest.json")
    models = changes.pop("models", manifest.models)
    grid = manifest.grid.model_copy(update=changes)
    edited = manifest.model_copy(update={"models": models, "grid": grid})
    (run / "manifest.json").write_text(edited.to_json(), encoding="utf-8")


def test_the_demos_grid_is_its_models(demo_run: Path) -> None:
    report, _ = verify(demo_run)
    assert by_what(report, GRID) == passed(GRID, "3 cell(s) of 3 model(s)")


@pytest.mark.parametrize(
    ("changes", "detail"),
    [
        (
            {"r_list": [10], "default_r": 10},
            "; ".join(f"{s!r} is not a cell of the grid (real_models × r_list × c_list)" for s in SLUGS),
        ),
        (
            {"real_models": ["sim/careful", "sim/hasty", "sim/sloppy", "sim/oracle"]},
            "real model 'sim/oracle' has no cell in models",
        ),
        ({"default_c": 9}, "the default cell r5 c9 is not in r_list × c_list"),
        (
            {"r_list": [5, 10]},
            "models are not the plan order of the grid's cells: ['sim/careful::r5::c4', "
            "'sim/careful::r10::c4', 'sim/hasty::r5::c4', 'sim/hasty::r10::c4', 'sim/sloppy::r5::c4', "
            "'sim/sloppy::r10::c4']",
        ),
        (
            {"models": [SLUGS[1], SLUGS[0], SLUGS[2]]},
            f"models are not the plan order of the grid's cells: {list(SLUGS)}",
        ),
        ({"models": [*SLUGS, SLUGS[0]]}, f"{SLUGS[0]!r} is listed twice"),
        ({"n_cells": 1}, "n_cells is 1, the grid has 3 cell(s)"),
    ],
)
def test_a_grid_that_is_not_the_runs_models_fails(
    demo_copy: Path, no_regeneration: list[Any], changes: dict[str, Any], detail: str
) -> None:
    # run-layout.md: every run is a grid; models are its cells, {real}::r{R}::c{C}, in plan order.
    _edit_grid(demo_copy, **changes)
    report, _ = verify(demo_copy)
    assert by_what(report, GRID) == failed(GRID, detail)


def test_an_earlier_runs_grid_is_checked_as_a_set(earlier_copy: Path, no_regeneration: list[Any]) -> None:
    # The earlier layout does not state its plan order: its cells may come in any order, not twice.
    manifest = Manifest.load(earlier_copy / "manifest.json")
    _edit_grid(earlier_copy, models=list(reversed(manifest.models)))
    report, _ = verify(earlier_copy)
    assert by_what(report, GRID).status == "pass"
    _edit_grid(earlier_copy, real_models=[*manifest.grid.real_models, "vendor/absent"])
    report, _ = verify(earlier_copy)
    assert by_what(report, GRID) == failed(GRID, "real model 'vendor/absent' has no cell in models")


def _set_run_meta(db: Path, column: str, value: str) -> None:
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(f"UPDATE run_meta SET {column} = ?", (value,))
    conn.close()


def test_a_protocol_text_edited_in_run_meta_fails(demo_copy: Path, no_regeneration: list[Any]) -> None:
    # The hash left alone: the stored text must still be the one the run's profile and settings give.
    (demo_copy / "attestation.json").unlink()
    db = demo_copy / "db" / DBS[0]
    with closing(sqlite3.connect(db)) as conn:
        (text,) = conn.execute("SELECT reflection_protocol_text FROM run_meta").fetchone()
    _set_run_meta(db, "reflection_protocol_text", text.replace("six stages", "seven stages"))
    report, _ = verify(demo_copy)
    assert by_what(report, PROTOCOLS) == failed(
        PROTOCOLS, f"db/{DBS[0]}: reflection_protocol_text is not the text its snapshot's profile gives"
    )


def test_a_protocol_hash_that_is_not_its_texts_fails(demo_copy: Path, no_regeneration: list[Any]) -> None:
    (demo_copy / "attestation.json").unlink()
    db = demo_copy / "db" / DBS[1]
    with closing(sqlite3.connect(db)) as conn:
        (digest,) = conn.execute("SELECT reflection_protocol_hash FROM run_meta").fetchone()
    _set_run_meta(db, "reflection_protocol_hash", "0" * 16)
    report, _ = verify(demo_copy)
    assert by_what(report, PROTOCOLS) == failed(
        PROTOCOLS,
        f"db/{DBS[1]}: reflection_protocol_hash 0000000000000000 is not its text's hash under the "
        f"profile's 'text' rule ({digest})",
    )


def test_question_ids_out_of_the_layouts_order_fail(demo_copy: Path, no_regeneration: list[Any]) -> None:
    # run-layout.md orders filters.question_ids by end_time, then id.
    (demo_copy / "attestation.json").unlink()
    manifest = Manifest.load(demo_copy / "manifest.json")
    ids = list(reversed(manifest.filters.question_ids))
    edited = manifest.model_copy(
        update={"filters": manifest.filters.model_copy(update={"question_ids": ids})}
    )
    (demo_copy / "manifest.json").write_text(edited.to_json(), encoding="utf-8")
    report, _ = verify(demo_copy)
    assert by_what(report, f"db/{DBS[0]} questions ↔ manifest filters") == failed(
        f"db/{DBS[0]} questions ↔ manifest filters",
        f"db/{DBS[0]}: manifest.json filters.question_ids is not ordered by end_time, then id, as the "
        "questions table dates them",
    )


def test_a_database_of_a_newer_schema_is_not_read(demo_copy: Path, no_regeneration: list[Any]) -> None:
    (demo_copy / "attestation.json").unlink()
    path = demo_copy / "db" / DBS[0]
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("INSERT INTO schema_version (version, applied_at) VALUES (6, 'later')")
    conn.close()
    report, _ = verify(demo_copy)
    check = by_what(report, f"db/{DBS[0]} sqlite")
    assert check.status == "FAIL"
    assert (
        "schema version 6 is newer than this oracleproto understands (5); upgrade oracleproto" in check.detail
    )


def test_a_schema_version_table_of_another_shape_is_reported(
    demo_copy: Path, no_regeneration: list[Any]
) -> None:
    (demo_copy / "attestation.json").unlink()
    conn = sqlite3.connect(demo_copy / "db" / DBS[0])
    with conn:
        conn.execute("DROP TABLE schema_version")
        conn.execute("CREATE TABLE schema_version (release TEXT)")
    conn.close()
    check = by_what(verify(demo_copy)[0], f"db/{DBS[0]} sqlite")
    assert check.status == "FAIL"
    assert "table schema_version cannot be read (no such column: version)" in check.detail


# --- the dataset ----------------------------------------------------------------------------------


def source_db_hash_of(run: Path) -> str:
    hashes = json.loads((run / "manifest.json").read_text(encoding="utf-8"))["hashes"]
    return str(hashes["source_db"])


def test_no_dataset_with_the_recorded_hash_names_every_path_tried(
    demo_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_regeneration: list[Any]
) -> None:
    other = tmp_path / "other.db"
    other.write_bytes(b"another dataset")
    absent = tmp_path / "absent.db"
    packaged = tmp_path / "packaged.db"
    monkeypatch.setattr(run_module, "demo_db_path", lambda: packaged)
    report, _ = verify(demo_run, extra_datasets=(other, absent))
    assert whats(report) == [*HEAD, *ALL_DBS, *MIDDLE, "dataset", "analysis stub", "audit stub"]
    assert by_what(report, "dataset") == failed(
        "dataset",
        f"no dataset with source_db hash {source_db_hash_of(demo_run)[:16]}… (tried {other}, {absent}, "
        f"{packaged}); pass --dataset PATH with the source DB the run was recorded on",
    )


def test_an_extra_dataset_with_the_recorded_hash_is_used(
    demo_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_regeneration: list[Any]
) -> None:
    copy = tmp_path / "copy.db"
    shutil.copyfile(demo_db_path(), copy)
    monkeypatch.setattr(run_module, "demo_db_path", lambda: tmp_path / "packaged.db")
    report, _ = verify(demo_run, extra_datasets=(tmp_path / "absent.db", copy))
    assert whats(report) == [*HEAD, *STUBBED_TAIL]
    assert report.ok, report.failures


def test_a_dataset_passed_explicitly_is_checked_even_when_it_is_not_the_one(
    demo_run: Path, shared_db: Path, no_regeneration: list[Any]
) -> None:
    report, _ = verify(demo_run, dataset=shared_db, extra_datasets=(demo_db_path(),))
    assert whats(report) == [*HEAD, *STUBBED_TAIL]
    assert by_what(report, "dataset source_db hash").status == "FAIL"


def test_an_explicit_dataset_does_not_need_the_packaged_one(
    demo_run: Path, monkeypatch: pytest.MonkeyPatch, no_regeneration: list[Any]
) -> None:
    # An installation without the packaged demo dataset can still verify against --dataset.
    def missing() -> Path:
        raise StoreError("oracleproto/data: packaged demo file not found on the filesystem")

    dataset = demo_db_path()
    monkeypatch.setattr(run_module, "demo_db_path", missing)
    report, _ = verify(demo_run, dataset=dataset)
    assert whats(report) == [*HEAD, *STUBBED_TAIL]
    assert report.ok, report.failures


def test_an_earlier_run_given_its_dataset_is_not_looked_up(
    earlier_copy: Path, no_regeneration: list[Any]
) -> None:
    report, _ = verify(earlier_copy, dataset=earlier_copy.parent.parent / "forecast_eval_set.db")
    assert whats(report) == [
        *EARLIER_HEAD,
        *dataset_checks(EARLIER_DBS),
        "analysis stub",
    ]
    assert report.ok, report.failures


def test_an_earlier_run_over_a_dataset_with_the_single_multiple_choice_key_verifies(
    earlier_harness: Path, tmp_path: Path, no_regeneration: list[Any]
) -> None:
    # The earlier implementation's own dataset has one multiple-choice template key: the layout
    # hashes and stores its keys as written; oracleproto renders from two stand-ins for it.
    source = earlier_harness / "forecast_eval_set.subset.db"
    run = write_earlier_run(tmp_path / "runs", analysis=False, source=source)
    report, _ = verify(run)
    templates = json.loads((run / "manifest.json").read_text(encoding="utf-8"))["hashes"]["prompt_templates"]
    assert by_what(report, "dataset prompt_templates hash") == passed(
        "dataset prompt_templates hash", templates[:16] + "…"
    )
    for name in EARLIER_DBS:
        assert by_what(report, f"db/{name} questions ↔ dataset").status == "pass"
        assert by_what(report, f"db/{name} prompt_templates ↔ run_meta").status == "pass"
    assert report.ok, report.failures


def test_an_earlier_run_finds_a_dataset_carried_with_it(
    earlier_copy: Path, tmp_path: Path, no_regeneration: list[Any]
) -> None:
    carried = tmp_path / "elsewhere" / "set.db"
    carried.parent.mkdir()
    (tmp_path / SOURCE_DB).rename(carried)
    report, _ = verify(earlier_copy, extra_datasets=(carried,))
    assert by_what(report, "dataset") == passed("dataset", f"{carried}: carried with the run")
    assert whats(report)[-len(dataset_checks(EARLIER_DBS)) - 2 :] == [
        "dataset",
        *dataset_checks(EARLIER_DBS),
        "analysis stub",
    ]


def test_an_earlier_run_without_its_dataset_gets_only_the_failed_lookup(
    earlier_copy: Path, tmp_path: Path, no_regeneration: list[Any]
) -> None:
    (tmp_path / SOURCE_DB).unlink()
    report, _ = verify(earlier_copy)
    assert whats(report)[-3:] == ["config_snapshot agreement", "dataset", "analysis stub"]
    assert by_what(report, "dataset").status == "FAIL"


# --- the analysis ---------------------------------------------------------------------------------


def test_the_analysis_is_regenerated_under_the_recorded_settings(
    demo_run: Path, no_regeneration: list[tuple[str, Path, Path, AnalysisSettings]]
) -> None:
    report, _ = verify(demo_run)
    settings = AnalysisSettings.from_values(first_snapshot(demo_run, DBS[0])["analysis"])
    assert no_regeneration == [
        ("analysis", demo_run, demo_run / "analysis", settings),
        ("audit", demo_run, demo_run / "analysis", settings),
    ]
    assert report.checks[-2:] == [ANALYSIS_MARK, AUDIT_MARK]


def test_an_earlier_run_is_regenerated_as_reference_v4(
    earlier_copy: Path, no_regeneration: list[tuple[str, Path, Path, AnalysisSettings]]
) -> None:
    report, _ = verify(earlier_copy)
    settings = AnalysisSettings.from_values({"convention": "reference-v4"})
    assert no_regeneration == [("analysis", earlier_copy, earlier_copy / "analysis", settings)]
    assert report.checks[-1] == ANALYSIS_MARK


def test_an_earlier_runs_own_analysis_is_not_regenerated(
    earlier_copy: Path, no_regeneration: list[tuple[str, Path, Path, AnalysisSettings]]
) -> None:
    shutil.rmtree(earlier_copy / "analysis")
    (earlier_copy / "analysis").mkdir()
    (earlier_copy / "analysis" / "per_model_summary.csv").write_text("model\n", encoding="utf-8")
    report, _ = verify(earlier_copy)
    assert no_regeneration == []
    assert report.checks[-1] == not_applicable(
        "analysis/",
        "written by the earlier implementation's own analysis pass (no .oracleproto-analysis marker), whose "
        "files oracleproto does not produce: not regenerated; `oracleproto report RUN --convention "
        "reference-v4 --out DIR` writes oracleproto's reference-v4 analysis of it",
    )


def test_unusable_analysis_settings_are_a_failed_check(demo_copy: Path, no_regeneration: list[Any]) -> None:
    snapshot = first_snapshot(demo_copy, DBS[0])
    del snapshot["llm"]
    set_snapshot(demo_copy, DBS[0], snapshot)
    report, progress = verify(demo_copy)
    assert report.checks[-1] == failed(
        "analysis settings",
        f"{demo_copy / 'db' / DBS[0]}: run_meta.config_snapshot has no 'llm' section; cannot replay",
    )
    assert whats(report)[-8:-1] == [*MIDDLE, *dataset_checks(DBS)][-7:]
    assert no_regeneration == []
    assert progress == [*PROGRESS, "analysis regeneration"]


# --- panels ---------------------------------------------------------------------------------------


def test_a_panel_is_handed_to_the_panel_verifier(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "panel.json").write_text("{}", encoding="utf-8")
    expected = VerifyReport(tmp_path)
    calls: list[dict[str, Any]] = []

    def verify_panel(panel_dir: Path, **kwargs: Any) -> VerifyReport:
        calls.append({"panel_dir": panel_dir, **kwargs})
        return expected

    def progress(_: str) -> None:
        return None

    monkeypatch.setattr(panel_verify, "verify_panel", verify_panel)
    dataset = tmp_path / "set.db"
    assert verify_run(tmp_path, dataset=dataset, progress=progress) is expected
    assert calls == [
        {
            "panel_dir": tmp_path,
            "verify_member": run_module._verify_member,
            "dataset": dataset,
            "progress": progress,
        }
    ]


def test_a_panel_member_is_verified_as_a_run_with_the_panels_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[Path, dict[str, Any]]] = []
    expected = VerifyReport(tmp_path)

    def fake(run_dir: Path, **kwargs: Any) -> VerifyReport:
        calls.append((run_dir, kwargs))
        return expected

    monkeypatch.setattr(run_module, "verify_run", fake)
    assert run_module._verify_member(tmp_path / "member", tmp_path / "set.db") is expected
    assert calls == [(tmp_path / "member", {"dataset": tmp_path / "set.db"})]
