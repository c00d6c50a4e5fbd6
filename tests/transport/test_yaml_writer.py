"""The fast cassette writer is byte-identical to the yaml.dump call it replaces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oracleproto.transport import fileio, yaml_writer
from oracleproto.transport.entry import to_interaction

REPO = Path(__file__).resolve().parents[2]
DEMO_CASSETTES = sorted((REPO / "cassettes" / "demo").rglob("*.yaml"))
# ../shared beside the repository, read in place (tests/conftest.py: SHARED_PAYLOADS).
REAL_PAYLOADS = REPO.parent / "shared" / "fixtures" / "real-payloads"


def reference(data: Any) -> str:
    """The yaml.dump call fileio used before the fast writer."""
    return str(yaml.dump(data, Dumper=fileio._Dumper, sort_keys=True, allow_unicode=True, width=100))


def fallback(items: list[Any]) -> str:
    return reference(items)


def fast_document(items: list[dict[str, Any]]) -> str:
    return yaml_writer.document([yaml_writer.fragment_or_dump(i, fallback) for i in items], 1)


def assert_same(items: list[dict[str, Any]]) -> None:
    expected = reference({"interactions": items, "version": 1})
    assert fast_document(items) == expected


# -- (a) every committed demo cassette ----------------------------------------------------


@pytest.mark.parametrize("path", DEMO_CASSETTES, ids=lambda p: p.name)
def test_demo_cassettes_redump_identically(path: Path) -> None:
    data = path.read_bytes()
    entries = fileio.parse_entries(data, str(path))
    assert fileio.dump_entries(entries) == data
    for entry in entries:
        entry.digest = None  # recomputed instead of reused: the same bytes
    assert fileio.dump_entries(entries) == data
    items = [to_interaction(e) for e in sorted(entries, key=lambda e: e.key)]
    # The fast path covers every demo entry (no fallback).
    assert (
        "".join(yaml_writer.item_fragment(i) for i in items)
        == data.decode()[len("interactions:\n") : -len("version: 1\n")]
    )


def test_demo_cassettes_exist() -> None:
    assert len(DEMO_CASSETTES) >= 3


# -- (b) generated strings and entries ----------------------------------------------------

# fmt: off
_ODD = [
    "", " ", "  ", "null", "Null", "NULL", "~", "true", "True", "FALSE", "yes", "No", "on", "OFF", "y", "n",
    "1", "-1", "+1", "0", "007", "0x1F", "0o17", "0b101", "1_000", "1.0", "-1.5", "1e3", "1.0e+3", ".5",
    ".inf", "-.Inf", ".nan", "2026-01-01", "2026-01-01T00:00:00Z", "2026-01-01 10:00:00.5 +01:00", "12:30",
    "190:20:30", "<<", "=", "-", "--", "---", "--- x", "...", "... x", "?", "? x", "?x", ":", ": x", ":x",
    "-x", "- x", "#", "# x", "a #b", "a#b", "a: b", "a:b", "a:", "'", '"', "\\", "!", "&a", "*a", "|", ">",
    "%", "@", "`", ",", "[", "]", "{", "}", "{}", "[]", "a,b", "a[b]", "\n", "\n\n", "a\n", "\na", "a\n\nb",
    "a\n b", "a \nb", "\t", "a\tb", "\r\n", "\x00", "\x7f", "\x85", "\xa0", "\ufeff", "\ufffe", "\u2028",
    "\u2029", "é", "中文", "\U0001f600", "a\U0001f600b", "\ud7ff", "\ue000", "\ufffd", "\x1b[0m",
]
_CHARS = st.sampled_from(
    [*" '\"\\:#-?,[]{}&*!|>%@`\n\t\r.0123456789abcxyzAZ", "é", "中", "\xa0", "\x85", "\x07", "\x7f",
    "\x9f", "\ufeff", "\U0001f600", "\U00010348", "\u2028", "\x00", "\x1b"]
)
_WORD = st.one_of(
    st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=12),
    st.text(alphabet=_CHARS, min_size=1, max_size=6),
    st.text(alphabet="x", min_size=90, max_size=130),  # longer than the width
    st.sampled_from(_ODD),
)
_SEP = st.sampled_from([" ", " ", "  ", "   ", "\n", "\n\n", " \n", "\n ", "\t", ", ", ": ", " #", "\\n"])
# fmt: on


@st.composite
def _texts(draw: st.DrawFn) -> str:
    words = draw(st.lists(_WORD, max_size=80))
    out: list[str] = []
    for word in words:
        out.append(word)
        out.append(draw(_SEP))
    return draw(st.sampled_from(["", " ", "\n"])) + "".join(out[:-1]) + draw(st.sampled_from(["", " ", "\n"]))


_STRINGS = st.one_of(
    st.sampled_from(_ODD),
    _texts(),
    st.text(max_size=300),
    st.text(alphabet=_CHARS, max_size=300),
    st.builds(
        lambda v: json.dumps(v, ensure_ascii=False),
        st.recursive(
            st.one_of(
                st.none(), st.booleans(), st.integers(), st.text(alphabet=_CHARS, max_size=40), _texts()
            ),
            lambda inner: (
                st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
            ),
            max_leaves=12,
        ),
    ),
)
_SCALARS = st.one_of(
    _STRINGS, st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True)
)
_KEYS = st.one_of(
    st.sampled_from(["body", "headers", "string", "a", "Content-Type", "x" * 130]),
    st.sampled_from(_ODD),
    st.text(max_size=20),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=20,
)
_GEN = settings(
    max_examples=400, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)


def _interaction(body: Any, extra: Any) -> dict[str, Any]:
    return {
        "oracleproto": {"attempts": [{"attempt": 0, "exception": None}], "context": extra, "key": "k"},
        "request": {"body": body, "headers": {"Content-Type": ["application/json"]}, "method": "POST"},
        "response": {"body": {"string": body}, "status": {"code": 200, "message": "OK"}},
    }


@_GEN
@given(_STRINGS)
def test_strings_match_yaml_dump(text: str) -> None:
    fast = _interaction(text, {"value": text, "list": [text, [text], {"k": text}]})
    assert_same([fast, _interaction(text, {text: 1})])
    # Every string value takes the fast path (only keys and U+2028/U+2029 may need yaml.dump).
    if "\u2028" not in text and "\u2029" not in text:
        assert yaml_writer.item_fragment(fast) == reference([fast])


@settings(_GEN, max_examples=150)
@given(st.lists(st.dictionaries(_KEYS, _VALUES, min_size=1, max_size=5), max_size=4))
def test_structures_match_yaml_dump(items: list[dict[str, Any]]) -> None:
    assert_same(items)


@_GEN
@given(st.lists(_STRINGS, min_size=1, max_size=3), st.integers(min_value=0, max_value=120))
def test_folding_at_every_start_column(texts: list[str], shift: int) -> None:
    # The key length moves the column the scalar starts at, which decides where it folds.
    key = "k" * shift
    assert_same([{key: t, "nested": {"deeper": {key: t}}, "seq": [t, {key: t}]} for t in texts])


# -- (c) real provider payloads ------------------------------------------------------------


def _real_payload_files() -> list[Path]:
    if not REAL_PAYLOADS.is_dir():
        pytest.fail(f"{REAL_PAYLOADS} is missing: tests need ../shared beside the repository")
    return sorted(p for p in REAL_PAYLOADS.rglob("*") if p.is_file())


def test_real_payloads_match_yaml_dump() -> None:
    checked = 0
    for path in _real_payload_files():
        raw = path.read_bytes()  # read in place, never copied
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        items = [_interaction(text, {"name": path.name})]
        items += [_interaction(line, None) for line in text.splitlines()[:200]]
        if path.suffix in (".yaml", ".yml"):
            doc = yaml.load(text, Loader=yaml.CSafeLoader)
            if isinstance(doc, dict) and isinstance(doc.get("interactions"), list):
                items += [i for i in doc["interactions"] if isinstance(i, dict) and i]
        elif path.suffix == ".json":
            try:
                loaded = json.loads(text)
            except json.JSONDecodeError:
                loaded = None
            if isinstance(loaded, dict) and loaded:
                items.append(loaded)
        assert_same(items)
        checked += 1
    assert checked >= 10


# -- fallback and neighbour independence --------------------------------------------------


def test_unsupported_values_fall_back_per_entry() -> None:
    odd = [
        {"response": {"body": {"string": b"\xff\xfe binary"}}},  # bytes: !!binary
        {"a": "line\u2028separator"},
        {"x" * 200: "long key"},
        {"multi\nline key": 1},
        {1: "int key"},
        {"f": 1e400, "g": -0.0, "h": 1e-300},
    ]
    normal = [{"a": "plain"}, {"b": "it's: quoted"}]
    unsupported = 0
    for item in odd:
        try:
            yaml_writer.item_fragment(item)
        except yaml_writer.UnsupportedError:
            unsupported += 1
    assert unsupported >= 5
    assert_same([normal[0], *odd, normal[1]])


def test_item_text_does_not_depend_on_neighbours() -> None:
    items = [{"a": "x " * 80}, {"b": ["y", {"c": "z\n" * 3}]}, {"d": ""}]
    whole = reference({"interactions": items, "version": 1})
    alone = "".join(reference([i]) for i in items)
    assert whole == "interactions:\n" + alone + "version: 1\n"


def test_empty_cassette() -> None:
    assert fast_document([]) == reference({"interactions": [], "version": 1})
    assert fileio.dump_entries([]) == reference({"interactions": [], "version": 1}).encode()
