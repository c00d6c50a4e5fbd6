"""`scan_tree`: every listed file is read under the root and its hits are named by its relative path."""

from __future__ import annotations

from pathlib import Path

from oracleproto.verify.secret_scan import SecretHit, scan_tree

#: Key-shaped values, put together here so that no file of the repository holds one whole.
_TAIL = b"abcdefghij" + b"klmnop"
_OPENROUTER = b"sk-or-" + _TAIL
_TAVILY = b"tvly-" + _TAIL


def test_scan_tree_reads_each_listed_file_under_root_in_list_order(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    # "x " puts the key at byte 2; "ab sk-" puts the second one at byte 3.
    (tmp_path / "sub" / "one.txt").write_bytes(b"x " + _OPENROUTER + b" y")
    (tmp_path / "two.txt").write_bytes(b"ab " + _TAVILY + b"\n")
    (tmp_path / "clean.txt").write_bytes(b"nothing here")
    (tmp_path / "unlisted.txt").write_bytes(_OPENROUTER)  # not listed: never read
    hits = scan_tree(tmp_path, ["two.txt", "clean.txt", "sub/one.txt"])
    # The list order is kept (not re-sorted across files), each hit named by the path as listed.
    assert hits == [
        SecretHit("two.txt", 3, "Tavily key (tvly-…)"),
        SecretHit("sub/one.txt", 2, "OpenRouter key (sk-or-…)"),
    ]


def test_scan_tree_of_no_files_is_empty(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(_OPENROUTER)
    assert scan_tree(tmp_path, []) == []
