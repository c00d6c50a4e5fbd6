"""``audit import``: a spreadsheet of labels, validated whole before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.leakaudit.labels import read_labels
from tests.leakaudit.helpers import make_audit


def run_import(folder: Path, sheet: Path, annotator: str = "bob") -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["audit", "import", str(folder), str(sheet), "--annotator", annotator])
    return result.exit_code, result.stdout + result.stderr


def test_a_good_sheet_is_imported_with_notes(tmp_path: Path) -> None:
    items = make_audit(tmp_path, ["keep", "drop", "keep"])
    sheet = tmp_path / "labels.csv"
    # Spreadsheet exports: a BOM, CRLF line ends, upper-case labels, a quoted note with a comma.
    sheet.write_bytes(
        (
            "\ufeffitem_id,label,note\r\n"
            f'{items[0].item_id},LEAK,"dated March, after the cutoff"\r\n'
            f"{items[1].item_id},no-leak,\r\n"
            f"{items[2].item_id},unsure,\r\n"
        ).encode()
    )
    code, out = run_import(tmp_path, sheet)
    assert code == 0 and "imported 3 labels for bob" in out
    labels = read_labels(tmp_path, "bob")
    assert labels[items[0].item_id].label == "leak"
    assert labels[items[0].item_id].note == "dated March, after the cutoff"
    assert labels[items[2].item_id].label == "unsure"


def test_the_pages_shorthands_are_labels(tmp_path: Path) -> None:
    """The labelling page's keys (L, N, U) and its button's words, in any case, import as labels."""
    items = make_audit(tmp_path, ["keep", "drop", "keep", "keep", "drop"])
    rows = zip(items, ("L", "n", "U", "No leak", "l"), strict=True)
    sheet = tmp_path / "labels.csv"
    sheet.write_text("item_id,label\n" + "".join(f"{i.item_id},{v}\n" for i, v in rows), encoding="utf-8")
    code, out = run_import(tmp_path, sheet)
    assert code == 0 and "imported 5 labels for bob" in out, out
    labels = read_labels(tmp_path, "bob")
    assert [labels[i.item_id].label for i in items] == ["leak", "no-leak", "unsure", "no-leak", "leak"]


def test_an_unknown_label_names_the_shorthands(tmp_path: Path) -> None:
    items = make_audit(tmp_path, ["keep"])
    sheet = tmp_path / "labels.csv"
    sheet.write_text(f"item_id,label\n{items[0].item_id},Y\n", encoding="utf-8")
    code, out = run_import(tmp_path, sheet)
    assert code == 2
    assert "line 2: label 'Y' is not one of leak, no-leak, unsure (or the page's keys L, N, U)" in out


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "item_id,label\nmfake-qq000-s0-c00-r00,leak\nnot-an-item,leak\n",
            "line 3: unknown item_id 'not-an-item'",
        ),
        (
            "item_id,label\nmfake-qq000-s0-c00-r00,maybe\n",
            "line 2: label 'maybe' is not one of leak, no-leak, unsure",
        ),
        ("item_id,label\nmfake-qq000-s0-c00-r00,leak\nmfake-qq000-s0-c00-r00,no-leak\n", "appears twice"),
        ("id,verdict\nmfake-qq000-s0-c00-r00,leak\n", "line 1: the header is"),
        ("", "empty; expected a header"),
        ("item_id,label\nmfake-qq000-s0-c00-r00,leak,extra\n", "line 2: 3 cells, expected 2"),
    ],
    ids=["unknown-id", "bad-label", "duplicate", "bad-header", "empty", "extra-cell"],
)
def test_a_bad_sheet_exits_2_and_writes_nothing(tmp_path: Path, body: str, message: str) -> None:
    make_audit(tmp_path, ["keep", "drop"])
    sheet = tmp_path / "labels.csv"
    sheet.write_text(body)
    code, out = run_import(tmp_path, sheet)
    assert code == 2, out
    assert message in out
    assert "Traceback" not in out
    assert not (tmp_path / "labels").exists()


def test_bad_annotator_and_missing_audit(tmp_path: Path) -> None:
    make_audit(tmp_path / "a", ["keep"])
    sheet = tmp_path / "s.csv"
    sheet.write_text("item_id,label\nmfake-qq000-s0-c00-r00,leak\n")
    code, out = run_import(tmp_path / "a", sheet, annotator="../evil")
    assert code == 2 and "cannot name a labels file" in out
    (tmp_path / "empty").mkdir()
    code, out = run_import(tmp_path / "empty", sheet)
    assert code == 2 and "no audit items here" in out
    assert not (tmp_path / "a" / "labels").exists()
