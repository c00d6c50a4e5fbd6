"""The call-failure scanner reads the same calls and attempt histories as a full YAML parse."""

from __future__ import annotations

import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.analysis.cassette_scan import scan, scan_text
from oracleproto.transport.fileio import _Dumper

DEMO_CASSETTES = Path(__file__).resolve().parents[2] / "cassettes" / "demo"
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _parsed(text: str) -> list[dict[str, Any]]:
    """What the scanner must return, from the YAML parse of the whole file."""
    calls = []
    for item in yaml.load(text, Loader=_LOADER)["interactions"]:
        meta = item["oracleproto"]
        model = (meta.get("context") or {}).get("model")
        calls.append(
            {
                "channel": meta["channel"],
                "key": meta["key"],
                "generation": meta["generation"],
                "model": None if model is None else str(model),
                "attempts": meta["attempts"],
            }
        )
    return calls


def _typed(value: Any) -> Any:
    """``value`` with every leaf paired with its type (so 1 and True, 0 and None differ)."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def _assert_same(text: str) -> int:
    scanned = [asdict(call) for call in scan_text(text)]
    assert _typed(scanned) == _typed(_parsed(text))
    return len(scanned)


def test_the_demo_cassettes_scan_as_they_parse() -> None:
    files = sorted(DEMO_CASSETTES.rglob("*.yaml"))
    assert files
    total = 0
    for path in files:
        total += _assert_same(path.read_text(encoding="utf-8"))
        from_text = scan_text(path.read_text(encoding="utf-8"))
        assert [asdict(c) for c in scan(path)] == [asdict(c) for c in from_text]
    assert total > 100


_STAMP = st.datetimes().map(lambda d: d.isoformat() + "+00:00")
_ATTEMPT = st.fixed_dictionaries(
    {
        "exception": st.one_of(st.none(), st.sampled_from(["ReadTimeout", "ConnectError", "ProtocolError"])),
        "latency_ms": st.integers(0, 10**6),
        "recorded_at": _STAMP,
        "status": st.one_of(st.none(), st.sampled_from([200, 429, 500, 503])),
    }
)
# Slugs as users name models: printable, short enough to stay on one line.
_MODEL = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=40)
# Bodies and headers that look like the block's fields on a folded line must not be read as them.
_BODY = st.lists(
    st.sampled_from(["status: 500", "latency_ms: 9", "- attempt: 7", "model: x", "channel: y", "word"]),
    max_size=40,
).map(" ".join)


@st.composite
def _interaction(draw: st.DrawFn, key: int) -> dict[str, Any]:
    attempts = draw(st.lists(_ATTEMPT, max_size=4))
    context = draw(st.none() | st.fixed_dictionaries({"model": _MODEL, "sample": st.integers(0, 9)}))
    return {
        "oracleproto": {
            "attempts": [{"attempt": i, **a} for i, a in enumerate(attempts)],
            "channel": draw(st.sampled_from(["llm", "search", "detector"])),
            "context": context,
            "generation": draw(st.integers(0, 3)),
            "key": f"{key:064x}",
            "request": {"channel": "llm", "model": draw(_MODEL)},
            "requests": 1,
        },
        "request": {"body": draw(_BODY), "headers": {"status": ["1"]}, "method": "POST", "uri": "http://h/"},
        "response": {
            "body": {"string": draw(_BODY)},
            "headers": {"status": "500"},
            "status": {"code": 200, "message": "OK"},
        },
    }


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 5).flatmap(lambda n: st.tuples(*(_interaction(i) for i in range(n)))))
def test_written_cassettes_scan_as_they_parse(interactions: tuple[dict[str, Any], ...]) -> None:
    doc = {"interactions": list(interactions), "version": 1}
    _assert_same(yaml.dump(doc, Dumper=_Dumper, sort_keys=True, allow_unicode=True, width=100))


# Lines a cassette is made of, and the odd ones a damaged or hand-edited file may hold.
_LINE_PIECES = st.sampled_from(
    [
        "interactions:",
        "- oracleproto:",
        "- oracleproto: x",
        "    attempts:",
        "    - attempt: 0",
        "    - attempt: 1",
        "      status: 500",
        "      latency_ms: 12",
        "      recorded_at: '2026-01-01T00:00:00+00:00'",
        "    channel: llm",
        "    key: abc",
        "    generation: 1",
        "    context:",
        "      model: m/x",
        "    ",
        "   ",
        "",
        "  request:",
        "    body: '- oracleproto:'",
        "      - oracleproto: in a body",
        "version: 1",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_LINE_PIECES, max_size=30), st.sampled_from(["\n", "\r\n", "\r"]), st.booleans())
def test_the_file_scan_finds_what_the_whole_text_scan_finds(
    lines: list[str], newline: str, final_newline: bool
) -> None:
    """``scan`` reads a file line by line and must yield exactly what ``scan_text`` of it yields."""
    raw = newline.join(lines) + (newline if final_newline and lines else "")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.yaml"
        path.write_bytes(raw.encode("utf-8"))
        expected = [asdict(call) for call in scan_text(path.read_text(encoding="utf-8"))]
        assert [asdict(call) for call in scan(path)] == expected
