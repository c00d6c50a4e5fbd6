"""The analysis regeneration check (``verify/regen.py``): what is compared, and how a difference is told.

Most tests replace the analysis pass (``analyze_with_settings``, ``write_analysis``) by one that
writes chosen files, so every outcome (equal, changed, published only, regenerated only, an older
or newer revision, a failed regeneration) is produced with bytes worked out by hand; the last
tests regenerate the committed demo for real.
"""

from __future__ import annotations

import json
import locale
import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from oracleproto._version import ANALYSIS_REVISION
from oracleproto.analysis.revisions import summary_revision
from oracleproto.errors import AnalysisError
from oracleproto.settings.model import AnalysisSettings
from oracleproto.verify import regen
from oracleproto.verify.findings import Check, failed, passed, skipped
from oracleproto.verify.regen import (
    _first_difference,
    _first_line,
    _first_value,
    _older_revision_checks,
    check_analysis,
    published_revision,
)

PAPER = AnalysisSettings.from_values({"convention": "paper"})
#: What the fake analysis pass returns (the fake writer checks it is handed on).
RESULT = object()
TABLES = "analysis/ tables and plots"


class FakePass:
    """``analyze_with_settings`` and ``write_analysis`` writing ``files`` into the regeneration folder."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.calls: list[tuple[Path, AnalysisSettings, int | None]] = []
        self.error: Exception | None = None
        self.outs: list[Path] = []

    def analyze(self, run_root: Path, settings: AnalysisSettings, *, revision: int | None) -> object:
        self.calls.append((run_root, settings, revision))
        if self.error is not None:
            raise self.error
        return RESULT

    def write(self, result: object, out: Path) -> None:
        assert result is RESULT
        self.outs.append(out)
        for name, data in self.files.items():
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            (out / name).write_bytes(data)


@pytest.fixture
def fake_pass(monkeypatch: pytest.MonkeyPatch) -> FakePass:
    fake = FakePass({})
    monkeypatch.setattr(regen, "analyze_with_settings", fake.analyze)
    monkeypatch.setattr(regen, "write_analysis", fake.write)
    return fake


def publish(run: Path, files: dict[str, bytes]) -> Path:
    folder = run / "analysis"
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder


def publish_as_regenerated(run: Path, fake_pass: FakePass, files: dict[str, bytes]) -> Path:
    """Publish ``files`` under ``run/analysis`` and have the fake pass regenerate the same bytes."""
    fake_pass.files = dict(files)
    return publish(run, files)


@pytest.fixture
def c_locale() -> Iterator[None]:
    """The C locale's ASCII as the default text encoding (restored after the test)."""
    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, before)


# --- _first_line ----------------------------------------------------------------------------------


def test_the_first_differing_line_is_quoted_published_first() -> None:
    assert _first_line(b"a\nb\nc\n", b"a\nX\nc\n") == "; line 2: published 'X' vs regenerated 'b'"


def test_a_quoted_line_is_cut_at_120_characters() -> None:
    regenerated, published = "R" + "x" * 130, "P" + "y" * 130
    assert _first_line(regenerated.encode(), published.encode()) == (
        f"; line 1: published {'P' + 'y' * 119!r} vs regenerated {'R' + 'x' * 119!r}"
    )


def test_no_line_is_quoted_when_one_side_is_not_text_or_only_longer() -> None:
    assert _first_line(b"\xff\n", b"a\n") == ""
    assert _first_line(b"a\n", b"\xff\n") == ""
    # Equal as far as both go: the difference is in the lengths, which byte_location tells.
    assert _first_line(b"a\nb", b"a\nb\nc") == ""
    assert _first_line(b"a\nb\nc", b"a\nb") == ""


# --- published_revision ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "revision"),
    [
        ('{"analysis_revision": 3}', 3),
        ('{"convention": "paper"}', 1),  # written before the key existed
        ('{"analysis_revision": true}', None),
        ('{"analysis_revision": "3"}', None),
        ('{"analysis_revision": 3.0}', None),
        ('{"analysis_revision": null}', None),
        ("[3]", None),
        ("{", None),
    ],
)
def test_the_published_revision(tmp_path: Path, text: str, revision: int | None) -> None:
    (tmp_path / "summary.json").write_text(text, encoding="utf-8")
    assert published_revision(tmp_path) == revision


def test_no_published_revision_without_a_readable_summary(tmp_path: Path) -> None:
    assert published_revision(tmp_path) is None
    (tmp_path / "summary.json").write_bytes(b'{"analysis_revision": 2, "x": "\xff"}')
    assert published_revision(tmp_path) is None


def test_the_summary_is_read_as_utf8_whatever_the_locale(tmp_path: Path, c_locale: None) -> None:
    (tmp_path / "summary.json").write_text('{"analysis_revision": 2, "model": "Modèle"}', encoding="utf-8")
    assert published_revision(tmp_path) == 2


# --- _first_difference and _first_value ----------------------------------------------------------


def test_the_first_difference_is_a_key_path_in_sorted_key_order() -> None:
    published = {"b": 1, "a": {"x": [1, 2, {"k": "v"}]}}
    regenerated = {"b": 2, "a": {"x": [1, 3, {"k": "w"}]}}
    assert _first_difference(published, regenerated) == "a.x[1]"
    assert _first_difference({"a": {"x": [1, 2, {"k": "v"}]}}, {"a": {"x": [1, 2, {"k": "w"}]}}) == "a.x[2].k"
    assert _first_difference([{"k": 1}], [{"k": 2}]) == "[0].k"


def test_keys_on_one_side_only_are_not_differences() -> None:
    assert _first_difference({"a": 1, "new": 2}, {"a": 1, "old": 3}) is None
    assert _first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) is None


def test_unlike_values_differ_as_a_whole() -> None:
    assert _first_difference(1, 2) == "(document)"
    assert _first_difference({"a": 1}, [1]) == "(document)"
    assert _first_difference([1, 2], "ab") == "(document)"
    assert _first_difference({"s": "ab"}, {"s": "cd"}) == "s"
    assert _first_difference({"l": [1]}, {"l": [1, 2]}) == "l"
    assert _first_difference({"l": [1, 2]}, {"l": [1]}) == "l"


def test_the_value_at_a_key_path() -> None:
    document = {"models": {"m": {"x": [10, 20, {"k": "v"}]}}}
    assert _first_value(document, "models.m.x[1]") == 20
    assert _first_value(document, "models.m.x[2].k") == "v"
    assert _first_value([[5, 6], 7], "[0][1]") == 6
    assert _first_value([5, 6], "[1]") == 6


def test_a_key_path_that_leads_nowhere_has_no_value() -> None:
    document = {"models": {"m": [1]}}
    assert _first_value(document, "models.n") is None  # no such key
    assert _first_value(document, "models.m[3]") is None  # no such index
    assert _first_value(document, "models.m[0].k") is None  # a number has no keys
    assert _first_value(document, "models.m[x]") is None  # not an index
    assert _first_value(document, "(document)") is None


# --- _older_revision_checks -----------------------------------------------------------------------


def older(tmp_path: Path, published: Any, regenerated: bytes | None) -> list[Check]:
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(published), encoding="utf-8")
    return _older_revision_checks(
        4, 5, {"summary.json": path}, {} if regenerated is None else {"summary.json": regenerated}
    )


def older_from(path: Path) -> list[Check]:
    """``_older_revision_checks`` of revision 4 with the published summary at ``path`` (as it is)."""
    return _older_revision_checks(4, 5, {"summary.json": path}, {"summary.json": b"{}"})


def numbers_agree(revision: int, current: int = 5) -> list[Check]:
    """The checks of an older revision whose published numbers all agree with the regeneration
    (``current``: the revision this version writes for the run's convention)."""
    return [
        passed(
            "analysis/summary.json",
            f"written by analysis revision {revision}; every published number agrees with db/",
        ),
        skipped(
            TABLES,
            f"written by analysis revision {revision}; this version writes revision {current}, so their "
            "bytes are not compared (summary.json's numbers are); `oracleproto report RUN --out DIR` writes "
            "them anew",
        ),
    ]


def test_an_older_revision_whose_numbers_agree_passes_and_skips_the_other_files(tmp_path: Path) -> None:
    # Its own analysis_revision (4) is not compared with the regeneration's.
    published = {"analysis_revision": 4, "models": {"m": {"acc": 0.5}}}
    regenerated = b'{"analysis_revision": 5, "models": {"m": {"acc": 0.5}}, "added": 1}'
    assert older(tmp_path, published, regenerated) == numbers_agree(4)


def test_an_older_revision_with_a_changed_number_names_it(tmp_path: Path) -> None:
    published = {"analysis_revision": 4, "models": {"m": {"ci": [0.25, 0.75]}}}
    regenerated = b'{"models": {"m": {"ci": [0.25, 0.5]}}}'
    assert older(tmp_path, published, regenerated) == [
        failed(
            "analysis/summary.json",
            "analysis/summary.json: models.m.ci[1] differs from its regeneration from db/ (published 0.75)",
        )
    ]


def test_an_older_revision_that_cannot_be_read_is_a_failed_check(tmp_path: Path) -> None:
    unreadable = [
        failed(
            "analysis/summary.json",
            "analysis/summary.json: unreadable, so analysis revision 4 cannot be checked",
        )
    ]
    assert older(tmp_path, {"analysis_revision": 4}, None) == unreadable  # not regenerated
    assert older(tmp_path, {"analysis_revision": 4}, b"{") == unreadable  # regenerated, not JSON
    (tmp_path / "summary.json").write_text("{", encoding="utf-8")
    assert older_from(tmp_path / "summary.json") == unreadable  # published, not JSON
    assert older_from(tmp_path / "gone.json") == unreadable  # not there


# --- check_analysis with a fake analysis pass -----------------------------------------------------


def test_each_file_is_compared_in_name_order(tmp_path: Path, fake_pass: FakePass) -> None:
    folder = publish(
        tmp_path,
        {
            "a.csv": b"x,y\n",
            "b/inner.txt": b"inner\n",
            "m.md": b"| a | 1 |\n| b | 3 |\n",
            "only_published.txt": b"",
            "z.json": b"{}\n",
        },
    )
    fake_pass.files = {
        "a.csv": b"x,y\n",
        "b/inner.txt": b"inner\n",
        "m.md": b"| a | 1 |\n| b | 2 |\n",
        "n_only_regenerated.txt": b"",
        "z.json": b"{}\n",
    }
    assert check_analysis(tmp_path, folder, PAPER) == [
        passed("analysis/a.csv", "regenerated byte for byte"),
        passed("analysis/b/inner.txt", "regenerated byte for byte"),
        failed(
            "analysis/m.md",
            "analysis/m.md: differs from its regeneration from db/ at byte offset 16 (line 2, column 7); "
            "line 2: published '| b | 3 |' vs regenerated '| b | 2 |'",
        ),
        failed(
            "analysis/n_only_regenerated.txt",
            "analysis/n_only_regenerated.txt: produced by the analysis pass but missing from the run",
        ),
        failed(
            "analysis/only_published.txt",
            "analysis/only_published.txt: published but not produced by the analysis pass",
        ),
        passed("analysis/z.json", "regenerated byte for byte"),
    ]
    assert fake_pass.calls == [(tmp_path, PAPER, None)]


def test_a_difference_in_bytes_that_are_not_text_is_located_without_a_line(
    tmp_path: Path, fake_pass: FakePass
) -> None:
    folder = publish(tmp_path, {"plot.png": b"\x89PNG\r\n\x1a\n\x00\x01"})
    fake_pass.files = {"plot.png": b"\x89PNG\r\n\x1a\n\x00\x02\xff"}
    assert check_analysis(tmp_path, folder, PAPER) == [
        failed(
            "analysis/plot.png",
            "analysis/plot.png: differs from its regeneration from db/ at byte offset 9 (line 3, column 2)",
        )
    ]


def test_reports_written_on_demand_are_named_not_compared(tmp_path: Path, fake_pass: FakePass) -> None:
    folder = publish(
        tmp_path,
        {
            "audit/refresh_audit.json": b"{}",
            "points-f1/table.md": b"x",
            "paper/table.md": b"x",
            "reference-v4/table.md": b"x",
            "t.csv": b"1\n",
        },
    )
    fake_pass.files = {"t.csv": b"1\n"}

    def note(name: str) -> Check:
        return skipped(
            f"analysis/{name}/",
            "a report written on demand, not part of the sealed run: "
            f"`oracleproto report RUN --convention {name}` writes it anew",
        )

    assert check_analysis(tmp_path, folder, PAPER) == [
        note("points-f1"),
        note("paper"),
        note("reference-v4"),
        passed("analysis/t.csv", "regenerated byte for byte"),
    ]
    shutil.rmtree(folder / "points-f1")
    shutil.rmtree(folder / "reference-v4")
    assert check_analysis(tmp_path, folder, PAPER) == [
        note("paper"),
        passed("analysis/t.csv", "regenerated byte for byte"),
    ]


def test_a_run_without_analysis_files_publishes_none(tmp_path: Path, fake_pass: FakePass) -> None:
    nothing = [skipped("analysis/", "the run publishes no analysis/ folder")]
    assert check_analysis(tmp_path, tmp_path / "analysis", PAPER) == nothing
    (tmp_path / "analysis").mkdir()
    assert check_analysis(tmp_path, tmp_path / "analysis", PAPER) == nothing
    # Folders other passes own are not the analysis (the refresh audit is checked on its own).
    publish(tmp_path, {"audit/refresh_audit.json": b"{}", "points-f1/t.md": b"x"})
    assert check_analysis(tmp_path, tmp_path / "analysis", PAPER) == nothing
    assert fake_pass.calls == []


def test_a_newer_revision_is_left_to_a_newer_version(tmp_path: Path, fake_pass: FakePass) -> None:
    newer = ANALYSIS_REVISION + 1
    folder = publish(tmp_path, {"summary.json": json.dumps({"analysis_revision": newer}).encode()})
    assert check_analysis(tmp_path, folder, PAPER) == [
        skipped(
            "analysis/",
            f"written by analysis revision {newer}, newer than this version's {ANALYSIS_REVISION}: "
            "upgrade oracleproto to check it",
        )
    ]
    assert fake_pass.calls == []


def test_the_current_revision_is_compared_byte_for_byte(tmp_path: Path, fake_pass: FakePass) -> None:
    summary = json.dumps({"analysis_revision": 5}).encode()
    assert summary_revision("paper") == 5
    folder = publish(tmp_path, {"summary.json": summary, "t.md": b"a\n"})
    fake_pass.files = {"summary.json": summary, "t.md": b"b\n"}
    assert check_analysis(tmp_path, folder, PAPER) == [
        passed("analysis/summary.json", "regenerated byte for byte"),
        failed(
            "analysis/t.md",
            "analysis/t.md: differs from its regeneration from db/ at byte offset 0 (line 1, column 1); "
            "line 1: published 'a' vs regenerated 'b'",
        ),
    ]
    assert fake_pass.calls == [(tmp_path, PAPER, None)]


def test_an_older_revision_is_regenerated_with_its_definitions(tmp_path: Path, fake_pass: FakePass) -> None:
    reference = AnalysisSettings.from_values({"convention": "reference-v4"})
    folder = publish(tmp_path, {"summary.json": b'{"analysis_revision": 3, "n": 1}', "t.md": b"old\n"})
    fake_pass.files = {"summary.json": b'{"analysis_revision": 3, "n": 1}', "t.md": b"new\n", "u.md": b""}
    assert check_analysis(tmp_path, folder, reference) == numbers_agree(3, current=6)
    assert fake_pass.calls == [(tmp_path, reference, 3)]


def test_a_summary_that_is_not_a_file_is_not_read(tmp_path: Path, fake_pass: FakePass) -> None:
    # A FIFO named summary.json is not published: opening it would wait for a writer forever.
    folder = publish_as_regenerated(tmp_path, fake_pass, {"t.md": b"x\n"})
    os.mkfifo(folder / "summary.json")
    assert check_analysis(tmp_path, folder, PAPER) == [passed("analysis/t.md", "regenerated byte for byte")]
    assert fake_pass.calls == [(tmp_path, PAPER, None)]


def test_an_unreadable_revision_is_compared_byte_for_byte(tmp_path: Path, fake_pass: FakePass) -> None:
    folder = publish_as_regenerated(tmp_path, fake_pass, {"summary.json": b'{"analysis_revision": "4"}'})
    assert check_analysis(tmp_path, folder, PAPER) == [
        passed("analysis/summary.json", "regenerated byte for byte")
    ]
    assert fake_pass.calls == [(tmp_path, PAPER, None)]


def test_the_regeneration_is_written_into_a_temporary_folder_of_its_own(
    tmp_path: Path, fake_pass: FakePass
) -> None:
    # Named as verify's (in the system's temporary folder) and removed afterwards.
    folder = publish_as_regenerated(tmp_path, fake_pass, {"t.md": b"x\n"})
    check_analysis(tmp_path, folder, PAPER)
    (out,) = fake_pass.outs
    assert out.name == "analysis" and out.parent.name.startswith("oracleproto-verify-")
    assert not out.parent.exists()


def test_a_regeneration_that_fails_is_one_failed_check(tmp_path: Path, fake_pass: FakePass) -> None:
    folder = publish(tmp_path, {"t.md": b"x"})
    fake_pass.error = AnalysisError("db/a.db: no results")
    assert check_analysis(tmp_path, folder, PAPER) == [
        failed("analysis/ regeneration", "analysis could not be regenerated from db/: db/a.db: no results")
    ]


# --- the demo, regenerated for real ---------------------------------------------------------------


def recorded_settings(run: Path) -> AnalysisSettings:
    """The analysis settings the run recorded (in its first DB's config snapshot)."""
    db = sorted((run / "db").glob("*.db"))[0]
    with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as conn:
        snapshot = json.loads(conn.execute("SELECT config_snapshot FROM run_meta").fetchone()[0])
    conn.close()
    settings: AnalysisSettings = AnalysisSettings.from_values(snapshot["analysis"])
    return settings


def test_the_demos_analysis_damaged_three_ways(demo_copy: Path) -> None:
    folder = demo_copy / "analysis"
    (folder / "table_pairs.csv").unlink()
    (folder / "notes.txt").write_text("mine\n", encoding="utf-8")
    csv = folder / "per_model_summary.csv"
    lines = csv.read_text(encoding="utf-8").splitlines(keepends=True)
    edited = lines[1].replace(",", ";", 1)
    csv.write_text("".join([lines[0], edited, *lines[2:]]), encoding="utf-8")
    checks = {c.what: c for c in check_analysis(demo_copy, folder, recorded_settings(demo_copy))}
    offset = len(lines[0]) + lines[1].index(",")
    assert checks["analysis/per_model_summary.csv"] == failed(
        "analysis/per_model_summary.csv",
        f"analysis/per_model_summary.csv: differs from its regeneration from db/ at byte offset {offset} "
        f"(line 2, column {lines[1].index(',') + 1}); line 2: published {edited.rstrip()!r} vs regenerated "
        f"{lines[1].rstrip()!r}",
    )
    assert checks["analysis/table_pairs.csv"] == failed(
        "analysis/table_pairs.csv",
        "analysis/table_pairs.csv: produced by the analysis pass but missing from the run",
    )
    assert checks["analysis/notes.txt"] == failed(
        "analysis/notes.txt", "analysis/notes.txt: published but not produced by the analysis pass"
    )
    assert [c.status for c in checks.values()].count("FAIL") == 3
