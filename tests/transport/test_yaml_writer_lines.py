"""The line-cutting regex of the fast YAML writer (issue 18) cuts exactly where libyaml's rule says."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.transport import yaml_writer


def reference_lines(text: str, start: int, k: int) -> list[str]:
    """The rule spelled out: each line is ``k`` characters, then up to the first space with a
    non-space on both sides (dropped); with no such space left, the rest is the last line."""
    lines: list[str] = []
    while True:
        at = start + k
        while at < len(text) - 1 and not (text[at] == " " and text[at - 1] != " " and text[at + 1] != " "):
            at += 1
        if at >= len(text) - 1:
            lines.append(text[start:])
            return lines
        lines.append(text[start:at])
        start = at + 1


_PIECES = st.sampled_from(["a", "bc", "word", " ", " ", "  ", "   ", "'", "\\", "\n", "é", "x" * 15])


@settings(max_examples=800, deadline=None, derandomize=True, database=None)
@given(st.lists(_PIECES, min_size=1, max_size=40), st.integers(1, 14), st.data())
def test_lines_follow_the_fold_rule(pieces: list[str], k: int, data: st.DataObject) -> None:
    text = "".join(pieces)
    start = data.draw(st.integers(0, len(text) - 1))
    assert yaml_writer._line_pattern(k).findall(text, start) == reference_lines(text, start, k)


def test_long_runs_of_spaces_do_not_backtrack() -> None:
    for text in ("a  " * 20000, " " * 60000, "a " * 30000 + "  ", "x" * 60000):
        lines = yaml_writer._line_pattern(93).findall(text, 1)
        assert lines == reference_lines(text, 1, 93)


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(st.text(alphabet=st.sampled_from(list('ab "\\\n\t\r\x00\x07\x1b\x7f\x85é{}:')), max_size=60))
def test_double_quoted_escapes_match_the_per_character_escape(value: str) -> None:
    assert yaml_writer._escaped(value) == yaml_writer._DQ_ESCAPE.sub(yaml_writer._dq_escape, value)
