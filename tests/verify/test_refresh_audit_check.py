"""verify's check of ``analysis/audit/`` called directly: on a small hand-made audit, and on an audit
of two copies of the demo run side by side (rebuilt byte for byte)."""

from __future__ import annotations

import copy
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from oracleproto.refresh.report import AUDIT_SCHEMA, JSON_NAME, MD_NAME, build_audit, write_audit
from oracleproto.refresh.views import load_view
from oracleproto.settings.model import AnalysisSettings
from oracleproto.verify.demo import find_demo_run
from oracleproto.verify.findings import failed, passed, skipped
from oracleproto.verify.refresh_files import check_refresh_audit

OLD = "20260101-000000-ab00"
NEW = "20260101-000000-ab01"
FOLDER = "analysis/audit/"
JSON_LABEL = f"analysis/audit/{JSON_NAME}"
MD_LABEL = f"analysis/audit/{MD_NAME}"
REGEN = f"{JSON_LABEL} regeneration"
#: Settings other than the defaults, so a rebuild that dropped one of them would differ.
SETTINGS = AnalysisSettings.model_validate({"convention": "reference-v4", "bootstrap_samples": 7, "seed": 11})
SELECTION = ["model=sim/hasty"]
#: What the check says to do about an audit JSON that does not parse.
RESTORE = "the refresh audit is damaged: restore the file from a copy of the run"


def small_audit(new: str, old: object = f"{OLD}@g0") -> dict[str, Any]:
    """The smallest document the audit's writer renders (no entries, no answers)."""
    return {
        "schema": AUDIT_SCHEMA,
        "old": old,
        "new": new,
        "selection": [],
        "entries": {
            "total": 0,
            "by_channel": {},
            "drift": {"provider": 0, "harness": 0, "follow-on": 0},
            "marker_only": 0,
            "masked_fields": {},
            "changed": [],
        },
        "provider_markers": [],
        "search_drift": [],
        "detector_flips": [],
        "cost": {"original": {}, "refresh": {}, "carried_over": 0},
        "answers": None,
    }


@pytest.fixture
def lone(tmp_path: Path) -> Path:
    """A run folder with an empty cassette folder (generation 0) and no run beside it."""
    root = tmp_path / NEW
    (root / "cassettes").mkdir(parents=True)
    return root


def check(run: Path, analysis: Path | None = None, settings: AnalysisSettings = SETTINGS) -> list[Any]:
    return check_refresh_audit(run, analysis or run / "analysis", settings)


@dataclass(frozen=True)
class Pair:
    """Two copies of the demo run side by side, the new one's audit against the old one's generation 0."""

    old: Path
    new: Path
    audit: dict[str, Any]
    json: bytes
    md: bytes


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Pair:
    """Read only: tests write their audit into their own analysis folder and pass it as ``analysis_dir``."""
    runs = tmp_path_factory.mktemp("pair")
    old, new = runs / OLD, runs / NEW
    shutil.copytree(find_demo_run(), old)
    shutil.copytree(find_demo_run(), new)
    # A later generation in the old run, unlike generation 0: the audit names the one it compared.
    later = old / "cassettes" / "generations" / "0001"
    later.mkdir(parents=True)
    shutil.copy(old / "cassettes" / "search.yaml", later / "search.yaml")
    audit = build_audit(
        load_view(old, 0),
        load_view(new),
        convention=SETTINGS.convention,
        bootstrap_samples=SETTINGS.bootstrap_samples,
        seed=SETTINGS.seed,
        selection=SELECTION,
    )
    json_path, md_path = write_audit(audit, runs / "written")
    return Pair(old, new, audit, json_path.read_bytes(), md_path.read_bytes())


def publish(analysis: Path, json_bytes: bytes, md_bytes: bytes) -> Path:
    folder = analysis / "audit"
    folder.mkdir(parents=True)
    (folder / JSON_NAME).write_bytes(json_bytes)
    (folder / MD_NAME).write_bytes(md_bytes)
    return analysis


def test_a_run_without_an_audit_folder_has_no_audit_checks(lone: Path) -> None:
    assert check(lone) == []
    (lone / "analysis").mkdir()
    assert check(lone) == []
    (lone / "analysis" / "audit").write_text("{}", encoding="utf-8")  # a file, not the audit's folder
    assert check(lone) == []


def test_the_audit_of_two_runs_side_by_side_is_rebuilt_byte_for_byte(pair: Pair, tmp_path: Path) -> None:
    assert pair.audit["selection"] == SELECTION and pair.audit["old"] == f"{OLD}@g0"
    analysis = publish(tmp_path / "analysis", pair.json, pair.md)
    assert check(pair.new, analysis) == [
        passed(JSON_LABEL, f"audit of {NEW}@g0 against {OLD}@g0"),
        passed(MD_LABEL, "equals the rendering of the audit JSON"),
        passed(REGEN, f"rebuilt from {OLD} and this run byte for byte"),
    ]


def _location(data: bytes, offset: int) -> str:
    line = data[:offset].count(b"\n") + 1
    column = offset - data[:offset].rfind(b"\n")
    return f"byte offset {offset} (line {line}, column {column})"


def test_other_analysis_settings_fail_the_rebuild_at_the_seed(pair: Pair, tmp_path: Path) -> None:
    analysis = publish(tmp_path / "analysis", pair.json, pair.md)
    other = SETTINGS.model_copy(update={"seed": 12})
    # The two texts agree up to the seed's last digit (11 published, 12 rebuilt).
    offset = pair.json.index(b'"seed": 11') + len(b'"seed": 1')
    assert check(pair.new, analysis, other)[2] == failed(
        REGEN, f"{JSON_LABEL}: differs from its rebuild from {OLD} at {_location(pair.json, offset)}"
    )


def test_an_appended_byte_in_the_json_fails_the_rebuild_only(pair: Pair, tmp_path: Path) -> None:
    analysis = publish(tmp_path / "analysis", pair.json + b"\n", pair.md)
    n = len(pair.json)
    lines = pair.json.count(b"\n") + 1
    assert check(pair.new, analysis) == [
        passed(JSON_LABEL, f"audit of {NEW}@g0 against {OLD}@g0"),
        passed(MD_LABEL, "equals the rendering of the audit JSON"),
        failed(
            REGEN,
            f"{JSON_LABEL}: differs from its rebuild from {OLD} at byte offset {n} (line {lines}, column 1): "
            f"lengths differ ({n} vs {n + 1})",
        ),
    ]


def test_an_edited_markdown_is_located(pair: Pair, tmp_path: Path) -> None:
    analysis = publish(tmp_path / "analysis", pair.json, pair.md + b"extra\n")
    n = len(pair.md)
    lines = pair.md.count(b"\n") + 1
    assert check(pair.new, analysis)[1:] == [
        failed(
            MD_LABEL,
            f"{MD_LABEL}: differs from the rendering of the audit JSON at byte offset {n} (line {lines}, "
            f"column 1): lengths differ ({n} vs {n + 6})",
        ),
        passed(REGEN, f"rebuilt from {OLD} and this run byte for byte"),
    ]


def test_a_changed_byte_in_the_markdown_is_located(lone: Path) -> None:
    write_audit(small_audit(f"{NEW}@g0"), lone / "analysis")
    md = lone / "analysis" / "audit" / MD_NAME
    data = md.read_bytes()
    assert data.startswith(b"# Refresh audit\n\n```\nrefresh audit: ")
    md.write_bytes(data.replace(b"refresh audit: ", b"refresh audiT: ", 1))
    assert check(lone)[1] == failed(
        MD_LABEL,
        f"{MD_LABEL}: differs from the rendering of the audit JSON at byte offset 33 (line 4, column 13)",
    )


def test_an_audit_against_another_generation_of_the_old_run_is_not_its_rebuild(
    pair: Pair, tmp_path: Path
) -> None:
    audit = copy.deepcopy(pair.audit)
    audit["old"] = f"{OLD}@g1"  # the old run has a generation 1, but the entries compared were g0's
    write_audit(audit, tmp_path / "analysis")
    got = check(pair.new, tmp_path / "analysis")
    assert got[:2] == [
        passed(JSON_LABEL, f"audit of {NEW}@g0 against {OLD}@g1"),
        passed(MD_LABEL, "equals the rendering of the audit JSON"),
    ]
    assert got[2].what == REGEN and got[2].status == "FAIL"
    assert got[2].detail.startswith(f"{JSON_LABEL}: differs from its rebuild from {OLD} at byte offset ")


def test_an_audit_the_old_run_cannot_rebuild_says_why(pair: Pair, tmp_path: Path) -> None:
    audit = copy.deepcopy(pair.audit)
    audit["old"] = f"{OLD}@g5"
    write_audit(audit, tmp_path / "analysis")
    assert check(pair.new, tmp_path / "analysis")[2] == failed(
        REGEN,
        f"{JSON_LABEL}: could not be rebuilt from {OLD} and this run: {pair.old}: generation 5 does not "
        "exist (present: 0, 1); write PATH@GEN with one of them",
    )


def test_without_the_old_run_beside_it_the_audit_is_checked_for_consistency(lone: Path) -> None:
    write_audit(small_audit(f"{NEW}@g0"), lone / "analysis")
    expected = [
        passed(JSON_LABEL, f"audit of {NEW}@g0 against {OLD}@g0"),
        passed(MD_LABEL, "equals the rendering of the audit JSON"),
        skipped(REGEN, f"the refreshed run {OLD} is not beside this run; checked for consistency only"),
    ]
    assert check(lone) == expected
    (lone.parent / OLD).mkdir()  # a folder of that name, but not a run
    assert check(lone) == expected
    (lone.parent / OLD / "manifest.json").mkdir()
    assert check(lone) == expected


@pytest.mark.parametrize(
    "old", ["nogen", f"{OLD}@gx", f"{OLD}@g", "@g0", f"runs/{OLD}@g0", f"{OLD}@0", 7, None]
)
def test_an_old_reference_not_naming_a_sibling_generation_fails(lone: Path, old: object) -> None:
    write_audit(small_audit(f"{NEW}@g0", old), lone / "analysis")
    (lone.parent / "runs" / OLD).mkdir(parents=True)  # even where such a run would be found
    (lone.parent / "runs" / OLD / "manifest.json").write_text("{}", encoding="utf-8")
    assert check(lone) == [
        passed(JSON_LABEL, f"audit of {NEW}@g0 against {old}"),
        passed(MD_LABEL, "equals the rendering of the audit JSON"),
        failed(REGEN, f"{JSON_LABEL}: 'old' is {str(old)!r}, not RUN_ID@gN"),
    ]


def test_an_audit_of_another_run_or_generation_fails(lone: Path) -> None:
    write_audit(small_audit("20260101-000000-ab07@g0"), lone / "analysis")
    assert check(lone)[0] == failed(
        JSON_LABEL, f"{JSON_LABEL}: audits '20260101-000000-ab07@g0', this run's latest is {NEW}@g0"
    )
    for gen in ("0001", "0003", "notes"):
        (lone / "cassettes" / "generations" / gen).mkdir(parents=True)
    assert check(lone)[0] == failed(
        JSON_LABEL, f"{JSON_LABEL}: audits '20260101-000000-ab07@g0', this run's latest is {NEW}@g3"
    )
    write_audit(small_audit(f"{NEW}@g3"), lone / "analysis")
    assert [(c.what, c.status) for c in check(lone)] == [
        (JSON_LABEL, "pass"),
        (MD_LABEL, "pass"),
        (REGEN, "skip"),
    ]


def test_a_run_without_cassettes_has_no_latest_generation(lone: Path) -> None:
    (lone / "cassettes").rmdir()
    write_audit(small_audit(f"{NEW}@g0"), lone / "analysis")
    got = check(lone)
    assert got[0] == failed(JSON_LABEL, f"{JSON_LABEL}: audits '{NEW}@g0', this run's latest is {NEW}@gNone")
    assert [c.what for c in got] == [JSON_LABEL, MD_LABEL, REGEN]


def test_files_the_audit_never_writes_come_first(lone: Path) -> None:
    write_audit(small_audit(f"{NEW}@g0"), lone / "analysis")
    (lone / "analysis" / "audit" / "notes.txt").write_text("x", encoding="utf-8")
    (lone / "analysis" / "audit" / "a.bak").mkdir()
    got = check(lone)
    assert got[0] == failed(FOLDER, "files a refresh audit never writes: a.bak, notes.txt")
    assert [(c.what, c.status) for c in got[1:]] == [
        (JSON_LABEL, "pass"),
        (MD_LABEL, "pass"),
        (REGEN, "skip"),
    ]


@pytest.mark.parametrize(
    ("present", "missing"),
    [((JSON_NAME,), MD_NAME), ((MD_NAME,), JSON_NAME), ((), f"{JSON_NAME}, {MD_NAME}")],
    ids=["json only", "markdown only", "neither"],
)
def test_an_incomplete_audit_fails_as_such(lone: Path, present: tuple[str, ...], missing: str) -> None:
    write_audit(small_audit(f"{NEW}@g0"), lone / "analysis")
    folder = lone / "analysis" / "audit"
    for name in {JSON_NAME, MD_NAME} - set(present):
        (folder / name).unlink()
    assert check(lone) == [failed(FOLDER, f"incomplete refresh audit: missing {missing}")]
    (folder / "stray.json").write_text("{}", encoding="utf-8")
    assert check(lone) == [
        failed(FOLDER, "files a refresh audit never writes: stray.json"),
        failed(FOLDER, f"incomplete refresh audit: missing {missing}"),
    ]


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"{", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
        (b"\xff", "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"),
    ],
    ids=["truncated", "not UTF-8"],
)
def test_an_audit_json_that_does_not_parse_fails(lone: Path, data: bytes, why: str) -> None:
    analysis = publish(lone / "analysis", data, b"")
    (analysis / "audit" / "zz.txt").write_text("x", encoding="utf-8")
    assert check(lone) == [
        failed(FOLDER, "files a refresh audit never writes: zz.txt"),
        failed(JSON_LABEL, f"{JSON_LABEL}: not valid JSON ({why}); {RESTORE}"),
    ]


@pytest.mark.parametrize(
    "document", [[], "x", {"schema": "oracleproto-refresh-audit/2"}, {"new": f"{NEW}@g0"}]
)
def test_a_json_document_other_than_a_refresh_audit_fails(lone: Path, document: object) -> None:
    analysis = publish(lone / "analysis", json.dumps(document).encode("utf-8"), b"")
    assert check(lone) == [
        failed(JSON_LABEL, f"{JSON_LABEL}: not a refresh audit (schema is not oracleproto-refresh-audit/1)")
    ]
    (analysis / "audit" / "zz.txt").write_text("x", encoding="utf-8")
    assert check(lone)[0] == failed(FOLDER, "files a refresh audit never writes: zz.txt")


def test_an_old_reference_holding_the_separator_twice_splits_at_the_last(lone: Path) -> None:
    write_audit(small_audit(f"{NEW}@g0", "run@gone@g0"), lone / "analysis")
    assert check(lone)[2] == skipped(
        REGEN, "the refreshed run run@gone is not beside this run; checked for consistency only"
    )


@pytest.mark.parametrize("name", [JSON_NAME, MD_NAME])
def test_a_folder_in_place_of_an_audit_file_is_a_missing_file(lone: Path, name: str) -> None:
    write_audit(small_audit(f"{NEW}@g0"), lone / "analysis")
    path = lone / "analysis" / "audit" / name
    path.unlink()
    path.mkdir()
    assert check(lone) == [failed(FOLDER, f"incomplete refresh audit: missing {name}")]


def test_a_json_nested_beyond_the_parser_fails_as_invalid(lone: Path) -> None:
    # Read through load_json, as every reader of files others wrote: too deep is a decode error.
    publish(lone / "analysis", b"[" * 100_000 + b"]" * 100_000, b"")
    assert check(lone) == [
        failed(
            JSON_LABEL,
            f"{JSON_LABEL}: not valid JSON (nested too deeply to read: line 1 column 1 (char 0)); {RESTORE}",
        )
    ]


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"old": None}, "KeyError: 'old'"),  # None: the key is removed
        ({"entries": 5}, "TypeError: 'int' object is not subscriptable"),
        (
            {"provider_markers": [{"model": "m", "field": "f", "before": [], "after": {}}]},
            "AttributeError: 'list' object has no attribute 'items'",
        ),
        (
            {"cost": {"original": {"x": {"calls": 1}}, "refresh": {}, "carried_over": 0}},
            "KeyError: 'prompt_tokens'",
        ),
    ],
    ids=["no old", "entries a number", "tally of a list", "cost without tokens"],
)
def test_an_audit_with_the_schema_but_not_the_fields_fails_instead_of_raising(
    lone: Path, change: dict[str, Any], why: str
) -> None:
    audit = small_audit(f"{NEW}@g0") | change
    if "old" in change:
        del audit["old"]
    publish(lone / "analysis", json.dumps(audit).encode("utf-8"), b"")
    regeneration = (
        failed(REGEN, f"{JSON_LABEL}: 'old' is '', not RUN_ID@gN")
        if "old" in change
        else skipped(REGEN, f"the refreshed run {OLD} is not beside this run; checked for consistency only")
    )
    assert check(lone) == [
        passed(JSON_LABEL, f"audit of {NEW}@g0 against {audit.get('old')}"),
        failed(MD_LABEL, f"{JSON_LABEL}: its fields are not a refresh audit's ({why})"),
        regeneration,
    ]


def test_a_generation_int_refuses_fails_the_rebuild(pair: Pair, tmp_path: Path) -> None:
    audit = copy.deepcopy(pair.audit)
    audit["old"] = f"{OLD}@g²"  # "²".isdigit() holds, int("²") raises
    write_audit(audit, tmp_path / "analysis")
    assert check(pair.new, tmp_path / "analysis")[1:] == [
        passed(MD_LABEL, "equals the rendering of the audit JSON"),
        failed(
            REGEN,
            f"{JSON_LABEL}: could not be rebuilt from {OLD} and this run: invalid literal for int() with "
            "base 10: '²'",
        ),
    ]


def test_a_selection_utf8_cannot_encode_fails_the_rendering_and_the_rebuild(
    pair: Pair, tmp_path: Path
) -> None:
    raw = pair.json.replace(b'"model=sim/hasty"', b'"\\ud800"', 1)
    analysis = publish(tmp_path / "analysis", raw, pair.md)
    # The rebuilt text holds the lone surrogate where the published one held the selector's first char.
    at = pair.json.decode("utf-8").index('"model=sim/hasty"') + 1
    got = check(pair.new, analysis)
    assert got[1].what == MD_LABEL and got[1].status == "FAIL"
    assert got[1].detail.startswith(
        f"{JSON_LABEL}: its fields are not a refresh audit's (UnicodeEncodeError: "
    )
    assert got[2] == failed(
        REGEN,
        f"{JSON_LABEL}: could not be rebuilt from {OLD} and this run: 'utf-8' codec can't encode character "
        f"'\\ud800' in position {at}: surrogates not allowed",
    )


def test_a_selection_nested_too_deep_to_serialise_fails_the_rebuild(pair: Pair, tmp_path: Path) -> None:
    # Deep enough for the renderer's recursion (two frames a level), shallow enough for the parser's.
    deep = b"[" * 600 + b"]" * 600
    raw = pair.json.replace(b'"model=sim/hasty"', deep, 1)
    got = check(pair.new, publish(tmp_path / "analysis", raw, pair.md))
    assert got[1].detail.startswith(f"{JSON_LABEL}: its fields are not a refresh audit's (RecursionError: ")
    assert got[2].what == REGEN
    assert got[2].detail.startswith(
        f"{JSON_LABEL}: could not be rebuilt from {OLD} and this run: maximum recursion depth exceeded"
    )


def test_a_selection_that_is_not_a_list_is_rebuilt_as_none(pair: Pair, tmp_path: Path) -> None:
    audit = copy.deepcopy(pair.audit)
    audit["selection"] = None  # the rebuild selects nothing: `[]` where the audit says `null`
    json_path, _ = write_audit(audit, tmp_path / "analysis")
    raw = json_path.read_bytes()
    offset = raw.index(b'"selection": null') + len(b'"selection": ')
    assert check(pair.new, tmp_path / "analysis")[1:] == [
        passed(MD_LABEL, "equals the rendering of the audit JSON"),
        failed(REGEN, f"{JSON_LABEL}: differs from its rebuild from {OLD} at {_location(raw, offset)}"),
    ]
