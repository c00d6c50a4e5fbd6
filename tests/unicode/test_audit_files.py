"""``audit.jsonl``, ``audit.json`` and the labels files hold any text, and never a mismatched pair.

Issue 28 §1 (a): one U+2028, U+2029 or U+0085 in a page made ``audit.jsonl`` unreadable (raw in
the file, split there by ``str.splitlines()``), and ``audit sample`` rebuilt the same file. §5:
``audit sample`` wrote its items before its parameters, so a kill between left a pair that did
not belong together and was used without complaint.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.leakaudit import items as items_module
from oracleproto.leakaudit.item_source import load_page_items
from oracleproto.leakaudit.items import META_FILE, AuditError, AuditItem, read_items, write_items
from oracleproto.leakaudit.labels import Label, append_labels, labels_path, read_labels
from oracleproto.primitives.fileio import atomic_write_text
from tests.leakaudit.helpers import item

HOSTILE = "a\u2028b\u2029c\x85d\x00e\ud800f\u202eg\u2066h\u200bi\ufeffj\x1ck"
STAMP = "2026-01-31T12:00:00Z"


def _hostile(number: int) -> AuditItem:
    return item(number, "drop" if number % 2 else "keep").model_copy(
        update={"title": f"T{HOSTILE}", "content": HOSTILE, "raw_content": HOSTILE * 3, "query": HOSTILE}
    )


def _score(folder: Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["audit", "score", str(folder)])
    return result.exit_code, result.stdout + result.stderr


def test_items_with_any_character_read_back_whole(tmp_path: Path) -> None:
    written = [_hostile(n) for n in range(4)]
    write_items(tmp_path, written, {"run_id": "20260101-000000-0000", "seed": 0})
    data = (tmp_path / "audit.jsonl").read_bytes()
    assert data.decode("utf-8").splitlines() == data.decode("utf-8").split("\n")[:-1]  # escaped
    assert len(data.splitlines()) == 4
    assert read_items(tmp_path) == written
    assert [p["title"] for p in load_page_items(tmp_path)] == [f"T{HOSTILE}"] * 4


def test_a_file_written_with_the_breaks_raw_still_reads(tmp_path: Path) -> None:
    """Files from before the fix hold U+2028 & co raw: the reader splits on "\\n" only."""
    written = [item(n, "keep").model_copy(update={"content": "x\u2028y\u2029z\x85"}) for n in range(3)]
    text = "".join(json.dumps(i.model_dump(), ensure_ascii=False) + "\n" for i in written)
    (tmp_path / "audit.jsonl").write_text(text, encoding="utf-8")
    assert [i.content for i in read_items(tmp_path)] == ["x\u2028y\u2029z\x85"] * 3
    append_labels(
        tmp_path, "alice", [Label(item_id=i.item_id, label="leak", labelled_at=STAMP) for i in written]
    )
    code, output = _score(tmp_path)
    assert code == 0, output


def test_labels_notes_hold_any_character(tmp_path: Path) -> None:
    write_items(tmp_path, [_hostile(0), _hostile(1)], {})
    given = [
        Label(item_id=_hostile(n).item_id, label="unsure", note=HOSTILE, labelled_at=STAMP) for n in range(2)
    ]
    append_labels(tmp_path, "alice", given)
    assert len(labels_path(tmp_path, "alice").read_bytes().splitlines()) == 2
    assert list(read_labels(tmp_path, "alice").values()) == given


def test_items_that_audit_json_does_not_describe_are_refused(tmp_path: Path) -> None:
    write_items(tmp_path, [_hostile(0), _hostile(1)], {"seed": 0})
    first = (tmp_path / "audit.jsonl").read_bytes()
    write_items(tmp_path / "other", [_hostile(2)], {"seed": 1})
    (tmp_path / "audit.jsonl").write_bytes((tmp_path / "other" / "audit.jsonl").read_bytes())
    with pytest.raises(AuditError, match=r"audit.jsonl is not the item set audit.json describes"):
        read_items(tmp_path)
    code, output = _score(tmp_path)
    assert code == 2 and "run the same `oracleproto audit sample" in output and "Traceback" not in output
    (tmp_path / "audit.jsonl").write_bytes(first)
    assert len(read_items(tmp_path)) == 2


def test_a_kill_between_the_two_files_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_items(tmp_path, [_hostile(0)], {"seed": 0})
    real = atomic_write_text

    def killed_before_the_items(path: Path, text: str) -> None:
        if path.name != META_FILE:
            raise KeyboardInterrupt  # the process dies between the two renames
        real(path, text)

    monkeypatch.setattr(items_module, "atomic_write_text", killed_before_the_items)
    with pytest.raises(KeyboardInterrupt):
        write_items(tmp_path, [_hostile(0), _hostile(1)], {"seed": 5})
    with pytest.raises(AuditError, match="interrupted between the two files"):
        read_items(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        write_items(tmp_path / "fresh", [_hostile(0)], {"seed": 0})
    with pytest.raises(AuditError, match="no audit items here"):
        read_items(tmp_path / "fresh")
    monkeypatch.undo()
    write_items(tmp_path, [_hostile(0), _hostile(1)], {"seed": 5})  # the rerun repairs the pair
    assert len(read_items(tmp_path)) == 2


def test_an_audit_json_without_the_digest_is_still_read(tmp_path: Path) -> None:
    write_items(tmp_path, [_hostile(0)], {"seed": 0})
    meta = json.loads((tmp_path / META_FILE).read_text(encoding="utf-8"))
    del meta["items_sha256"]
    (tmp_path / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    assert len(read_items(tmp_path)) == 1
