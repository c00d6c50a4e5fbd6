"""Reading capture files strictly, and writing them with credentials masked."""

from __future__ import annotations

import base64
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from oracleproto.conformance.capture import (
    CaptureError,
    CaptureExchange,
    CaptureWriter,
    exchange_line,
    read_capture,
)


def _line(**changes: Any) -> dict[str, Any]:
    line: dict[str, Any] = {
        "seq": 1,
        "t": 1795736883.5,
        "method": "POST",
        "path": "/search",
        "headers": [["Content-Type", "application/json"]],
        "body_b64": base64.b64encode(b'{"query":"q"}').decode(),
        "status": 200,
        "resp_headers": [["Content-Type", "application/json"]],
        "resp_b64": base64.b64encode(b'{"results": []}').decode(),
        "served": "upstream",
        "key": None,
    }
    line.update(changes)
    return line


def _write(tmp_path: Path, *lines: dict[str, Any] | bytes, newline: bool = True) -> Path:
    path = tmp_path / "capture.jsonl"
    raw = [x if isinstance(x, bytes) else json.dumps(x).encode() for x in lines]
    path.write_bytes(b"\n".join(raw) + (b"\n" if newline else b""))
    return path


def _error(path: Path) -> str:
    with pytest.raises(CaptureError) as caught:
        read_capture(path)
    return str(caught.value)


@pytest.mark.shared
@pytest.mark.parametrize(
    ("name", "count", "first_model"),
    [("ref-live.jsonl", 442, b"sim/careful"), ("ref-script.jsonl", 288, b"script/a")],
)
def test_shared_captures_read_with_exact_bytes(
    earlier: Path, name: str, count: int, first_model: bytes
) -> None:
    path = earlier / "captures" / name
    exchanges = read_capture(path)
    assert len(exchanges) == count
    assert [e.seq for e in exchanges] == list(range(1, count + 1))
    first = json.loads(path.read_bytes().split(b"\n", 1)[0])
    assert exchanges[0].body == base64.b64decode(first["body_b64"])
    assert exchanges[0].resp_body == base64.b64decode(first["resp_b64"])
    assert exchanges[0].body.startswith(b'{"model":"' + first_model + b'"')
    assert exchanges[0].headers[0] == ("Host", first["headers"][0][1])
    assert exchanges[0].line == 1


def test_a_valid_line_round_trips_through_exchange_line(tmp_path: Path) -> None:
    [exchange] = read_capture(
        _write(tmp_path, _line(key="k", body_b64=base64.b64encode(b"\x00\xff").decode()))
    )
    assert exchange.body == b"\x00\xff" and exchange.key == "k"
    again = tmp_path / "again.jsonl"
    again.write_text(exchange_line(exchange) + "\n")
    assert read_capture(again) == [exchange]


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("seq", "1", "field 'seq': expected an integer from 0"),
        ("seq", True, "field 'seq': expected an integer"),
        ("t", "now", "field 't': expected a finite number"),
        ("method", 5, "field 'method': expected a string, got 5"),
        ("headers", {"a": "b"}, "field 'headers': expected a list of [name, value] pairs"),
        ("headers", [["a"]], "field 'headers': item 0 is not a [name, value] pair of strings"),
        ("resp_headers", [["a", 1]], "field 'resp_headers': item 0 is not a [name, value] pair"),
        ("body_b64", "not base64!", "field 'body_b64': not valid base64"),
        ("resp_b64", "YQ", "field 'resp_b64': not valid base64"),
        ("body_b64", "é", "field 'body_b64': not valid base64"),
        ("status", 1000, "field 'status': expected an integer from 0 to 999"),
        ("key", 3, "field 'key': expected a string or null, got 3"),
    ],
)
def test_wrong_field_types_name_file_line_and_field(
    tmp_path: Path, field: str, value: Any, expected: str
) -> None:
    path = _write(tmp_path, _line(), _line(**{"seq": 2, field: value}))
    message = _error(path)
    assert f"capture.jsonl line 2, {expected}" in message
    assert "each line must be one JSON object" in message


@pytest.mark.parametrize(
    "field", ["seq", "t", "method", "path", "headers", "body_b64", "status", "served", "key"]
)
def test_a_missing_field_is_named(tmp_path: Path, field: str) -> None:
    line = _line()
    del line[field]
    assert f"line 1, field {field!r}: missing" in _error(_write(tmp_path, line))


def test_bad_json_and_non_objects_are_reported_with_the_line(tmp_path: Path) -> None:
    assert "line 2: not valid JSON (Expecting value at column 1)" in _error(
        _write(tmp_path, _line(), b"nope")
    )
    assert "line 1: expected a JSON object, got [1]" in _error(_write(tmp_path, b"[1]"))


def test_an_empty_file_and_a_blank_file_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "capture.jsonl"
    path.write_bytes(b"")
    assert "capture.jsonl is empty" in _error(path)
    path.write_bytes(b"\n  \n")
    assert "is empty" in _error(path)


def test_a_missing_file_is_a_capture_error(tmp_path: Path) -> None:
    assert "cannot read capture" in _error(tmp_path / "absent.jsonl")
    assert "cannot read capture" in _error(tmp_path)


def test_a_repeated_seq_names_both_lines(tmp_path: Path) -> None:
    message = _error(_write(tmp_path, _line(), _line(seq=2), _line()))
    assert "line 3, field 'seq': 1 was already used on line 1" in message


def test_a_truncated_last_line_says_so(tmp_path: Path) -> None:
    whole = json.dumps(_line(seq=2)).encode()
    message = _error(_write(tmp_path, _line(), whole[: len(whole) // 2], newline=False))
    assert "line 2: not valid JSON" in message
    assert "the last line has no newline: the file may be truncated" in message


def test_invalid_utf8_and_nul_in_a_line_are_reported(tmp_path: Path) -> None:
    bad = json.dumps(_line()).encode().replace(b'"POST"', b'"PO\xffST"')
    assert "line 1: not valid UTF-8 (byte 0xFF at column" in _error(_write(tmp_path, bad))
    nul = json.dumps(_line()).encode().replace(b'"POST"', b'"PO\x00ST"')
    assert "line 1: not valid JSON (Invalid control character" in _error(_write(tmp_path, nul))


def test_bodies_keep_invalid_utf8_nul_and_lone_surrogate_escapes(tmp_path: Path) -> None:
    raw = b'{"query":"\\ud800"}\x00\xff\xfe'
    line = json.dumps(_line(body_b64=base64.b64encode(raw).decode(), path="/search\\ud800"))
    line = line.replace("/search\\\\ud800", "/search\\ud800")  # a lone surrogate escape in the JSON line
    [exchange] = read_capture(_write(tmp_path, line.encode()))
    assert exchange.body == raw
    assert exchange.path == "/search\ud800"


def test_deeply_nested_json_is_an_error_not_a_crash(tmp_path: Path) -> None:
    assert "line 1: " in _error(_write(tmp_path, b"[" * 100_000))


def test_the_writer_masks_credentials_and_round_trips(tmp_path: Path) -> None:
    ticks = iter([10.0, 11.5])
    writer = CaptureWriter(tmp_path / "cap.jsonl", clock=lambda: next(ticks))
    body = b'{"api_key": "tvly-SECRET-123456", "query":"x \\u00e9", "nested": {"api_key": "kept"}}'
    written = writer.write(
        method="POST",
        path="/search",
        headers=[("Host", "h"), ("Authorization", "Bearer sk-SECRET-abcdef"), ("X-Api-Key", "SECRET")],
        body=body,
        status=200,
        resp_headers=[("Content-Type", "application/json")],
        resp_body=b"{}",
    )
    writer.write(
        method="GET", path="/v1/models", headers=[], body=b"", status=0, resp_headers=[], resp_body=b""
    )
    writer.close()
    text = (tmp_path / "cap.jsonl").read_text()
    assert (
        "SECRET" not in text
        and "SECRET" not in base64.b64decode(json.loads(text.splitlines()[0])["body_b64"]).decode()
    )
    first, second = read_capture(tmp_path / "cap.jsonl")
    assert first == written
    assert first.headers == (
        ("Host", "h"),
        ("Authorization", "Bearer <redacted>"),
        ("X-Api-Key", "<redacted>"),
    )
    assert first.body == b'{"api_key": "<redacted>", "query":"x \\u00e9", "nested": {"api_key": "kept"}}'
    assert (first.seq, first.t, first.served, first.key) == (1, 10.0, "upstream", None)
    assert (second.seq, second.t, second.status) == (2, 11.5, 0)


def test_the_writer_is_thread_safe(tmp_path: Path) -> None:
    writer = CaptureWriter(tmp_path / "cap.jsonl")

    def write_many(worker: int) -> None:
        for i in range(50):
            body = json.dumps({"worker": worker, "i": i, "pad": "x" * 5000}).encode()
            writer.write(
                method="POST", path="/p", headers=[], body=body, status=200, resp_headers=[], resp_body=b""
            )

    threads = [threading.Thread(target=write_many, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    writer.close()
    exchanges = read_capture(tmp_path / "cap.jsonl")
    assert sorted(e.seq for e in exchanges) == list(range(1, 401))
    assert len({e.body for e in exchanges}) == 400


def test_the_writer_refuses_an_existing_capture_and_an_unwritable_path(tmp_path: Path) -> None:
    existing = tmp_path / "old.jsonl"
    existing.write_text("x\n")
    with pytest.raises(CaptureError, match="already exists and is not empty; give a new file name"):
        CaptureWriter(existing)
    with pytest.raises(CaptureError, match=r"cannot write capture .*: No such file or directory"):
        CaptureWriter(tmp_path / "missing" / "cap.jsonl")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux) for a real ENOSPC")
def test_a_failed_write_stops_the_capture_with_a_message() -> None:
    writer = CaptureWriter(Path("/dev/full"))

    def write() -> CaptureExchange | None:
        return writer.write(
            method="GET", path="/", headers=[], body=b"", status=200, resp_headers=[], resp_body=b""
        )

    assert write() is None
    assert writer.error is not None and "failed at exchange 1: No space left on device" in writer.error
    assert write() is None
    writer.close()


def test_exchange_line_is_ascii_for_any_text() -> None:
    exchange = CaptureExchange(
        1, 0.0, "POST", "/p\u202e\ud800", (("n", "é\x00"),), b"\xff", 200, (), b"", "upstream", None
    )
    line = exchange_line(exchange)
    assert line.isascii() and "\n" not in line
