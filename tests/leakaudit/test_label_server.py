"""The labelling server's JSON API over real HTTP on 127.0.0.1: blind items, saves, refusals."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from oracleproto.leakaudit.item_source import PAGE_FIELDS
from oracleproto.leakaudit.items import AuditError
from oracleproto.leakaudit.label_server import LabelServer, LabelSession, content_security_policy
from oracleproto.leakaudit.labels import Label, append_label, read_labels
from tests.leakaudit.label_helpers import FIXED_NOW, VERDICTS, open_session, serving, write_audit

IDS = [f"msim-q{n}-s0-c0-r{n}" for n in range(5)]


@pytest.fixture
def audit_dir(tmp_path: Path) -> Path:
    write_audit(tmp_path)
    return tmp_path


@pytest.fixture
def server(audit_dir: Path) -> Iterator[LabelServer]:
    with serving(open_session(audit_dir)) as running:
        yield running


@pytest.fixture
def client(server: LabelServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, trust_env=False, timeout=10) as opened:
        yield opened


def post(client: httpx.Client, body: object) -> httpx.Response:
    return client.post("/api/label", json=body)


def assert_blind(response: httpx.Response) -> None:
    text = response.text
    assert "detector" not in text
    assert "failed:" not in text
    assert "Q-SECRET" not in text  # nor the question an item came from
    assert "sim/careful" not in text
    assert "planted query" not in text


def test_the_state_lists_items_in_order_with_no_labels_yet(client: httpx.Client) -> None:
    response = client.get("/api/state")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert response.json() == {
        "annotator": "alice",
        "item_ids": IDS,
        "labels": {},
        "labelled": 0,
        "resume": 0,
        "total": 5,
    }


def test_an_item_carries_the_page_fields_only(client: httpx.Client) -> None:
    for item_id in IDS:
        response = client.get("/api/item", params={"id": item_id})
        assert response.status_code == 200
        assert set(response.json()) == set(PAGE_FIELDS)
        assert_blind(response)
    shown = client.get("/api/item", params={"id": IDS[3]}).json()
    assert shown["published_date"] == ""  # null in audit.jsonl
    assert shown["url"] == "https://news.example/3?a=1&b=<2>"


def test_a_label_is_saved_durably_and_moves_the_resume_point(client: httpx.Client, audit_dir: Path) -> None:
    response = post(client, {"item_id": IDS[0], "label": "leak", "note": "mentions the 2025 result"})
    assert response.status_code == 200
    assert response.json() == {
        "saved": {"label": "leak", "note": "mentions the 2025 result", "labelled_at": "2026-03-01T12:30:00Z"},
        "labelled": 1,
        "total": 5,
    }
    lines = (audit_dir / "labels" / "alice.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [
        {
            "item_id": IDS[0],
            "label": "leak",
            "note": "mentions the 2025 result",
            "labelled_at": FIXED_NOW.strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
    ]
    assert post(client, {"item_id": IDS[1], "label": "no-leak"}).json()["labelled"] == 2
    state = client.get("/api/state").json()
    assert state["resume"] == 2
    assert state["labels"][IDS[1]] == {"label": "no-leak", "note": "", "labelled_at": "2026-03-01T12:30:00Z"}


def test_a_relabel_appends_and_the_last_one_wins(client: httpx.Client, audit_dir: Path) -> None:
    post(client, {"item_id": IDS[0], "label": "leak"})
    again = post(client, {"item_id": IDS[0], "label": "unsure", "note": "hm"})
    assert again.json()["labelled"] == 1
    assert read_labels(audit_dir, "alice")[IDS[0]].label == "unsure"
    assert len((audit_dir / "labels" / "alice.jsonl").read_text(encoding="utf-8").splitlines()) == 2


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"item_id": "nope", "label": "leak"}, "no audit item 'nope'"),
        ({"item_id": IDS[0], "label": "LEAK"}, "label must be one of leak, no-leak, unsure"),
        ({"item_id": IDS[0]}, "label must be one of"),
        ({"item_id": IDS[0], "label": "leak", "note": 3}, "note must be a string"),
        (
            {"item_id": IDS[0], "label": "leak", "detector_verdict": "keep"},
            "unknown field(s) detector_verdict",
        ),
        ({"item_id": IDS[0], "label": "leak", "note": "x" * 20_001}, "keep it under 20000"),
        ([IDS[0], "leak"], "must be a JSON object"),
    ],
)
def test_bad_labels_are_refused_with_a_json_error_and_nothing_written(
    client: httpx.Client, audit_dir: Path, body: object, message: str
) -> None:
    response = post(client, body)
    assert response.status_code == 400
    assert message in response.json()["error"]
    assert not (audit_dir / "labels").exists()


@pytest.mark.parametrize(
    ("headers", "content", "status", "message"),
    [
        ({"Content-Type": "application/json"}, b"{not json", 400, "not UTF-8 JSON"),
        ({"Content-Type": "application/json"}, b"\xff\xfe", 400, "not UTF-8 JSON"),
        ({"Content-Type": "text/plain"}, b'{"item_id": "x"}', 415, "application/json"),
        ({"Content-Type": "application/x-www-form-urlencoded"}, b"item_id=x", 415, "application/json"),
        (
            {"Content-Type": "application/json", "Origin": "http://evil.example"},
            b"{}",
            403,
            "only from the labelling page",
        ),
        ({"Content-Type": "application/json", "Host": "evil.example"}, b"{}", 403, "only to 127.0.0.1"),
    ],
)
def test_foreign_or_malformed_requests_are_refused(
    client: httpx.Client,
    audit_dir: Path,
    *,
    headers: dict[str, str],
    content: bytes,
    status: int,
    message: str,
) -> None:
    response = client.post("/api/label", content=content, headers=headers)
    assert response.status_code == status
    assert message in response.json()["error"]
    assert not (audit_dir / "labels").exists()


def test_a_post_from_the_page_itself_is_accepted(client: httpx.Client, server: LabelServer) -> None:
    origin = f"http://127.0.0.1:{server.port}"
    response = client.post(
        "/api/label", json={"item_id": IDS[4], "label": "unsure"}, headers={"Origin": origin}
    )
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "status", "message"),
    [
        ("GET", "/api/item?id=nope", 404, "no audit item 'nope'"),
        ("GET", "/api/item", 400, "/api/item?id=ITEM_ID"),
        ("GET", "/api/label", 405, "POST a label"),
        ("GET", "/etc/passwd", 404, "no such page"),
        ("POST", "/api/state", 405, "only /api/label"),
    ],
)
def test_unknown_routes_answer_json_errors(
    client: httpx.Client, method: str, path: str, status: int, message: str
) -> None:
    response = client.request(method, path)
    assert response.status_code == status
    assert message in response.json()["error"]


def test_the_page_is_served_with_a_strict_policy(client: httpx.Client) -> None:
    response = client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    policy = response.headers["content-security-policy"]
    assert policy == content_security_policy(response.text)
    assert "default-src 'none'" in policy
    assert "connect-src 'self'" in policy
    assert "'unsafe-inline'" not in policy
    assert "script-src 'sha256-" in policy
    assert response.headers["x-frame-options"] == "DENY"
    assert "http://" not in response.text and "https://" not in response.text  # no external assets
    assert_blind(response)


def test_reopening_resumes_at_the_first_unlabelled_item(audit_dir: Path) -> None:
    session = open_session(audit_dir)
    for item_id, value in [(IDS[0], "leak"), (IDS[2], "no-leak"), (IDS[1], "unsure")]:
        session.submit({"item_id": item_id, "label": value})
    again = open_session(audit_dir)
    assert again.resume_index() == 3
    assert again.progress() == {"labelled": 3, "total": 5}
    assert open_session(audit_dir, "bob").resume_index() == 0
    for item_id in IDS[3:]:
        again.submit({"item_id": item_id, "label": "leak"})
    assert open_session(audit_dir).resume_index() == 5


def test_labels_of_items_not_in_the_audit_are_ignored_in_progress(audit_dir: Path) -> None:
    labels = audit_dir / "labels"
    labels.mkdir()
    (labels / "alice.jsonl").write_text(
        json.dumps({"item_id": "gone", "label": "leak", "note": "", "labelled_at": "2026-01-01T00:00:00Z"})
        + "\n",
        encoding="utf-8",
    )
    session = open_session(audit_dir)
    assert session.progress() == {"labelled": 0, "total": 5}
    assert session.state()["labels"] == {}


def test_the_verdicts_really_are_in_the_items_file(audit_dir: Path) -> None:
    # The blindness assertions above would pass vacuously if the fixture had no verdicts to hide.
    text = (audit_dir / "audit.jsonl").read_text(encoding="utf-8")
    assert all(f'"detector_verdict": "{v}"' in text for v in VERDICTS)


def test_a_missing_or_empty_audit_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AuditError, match="no audit items here"):
        LabelSession.open(tmp_path, "alice")
    (tmp_path / "audit.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(AuditError, match="no audit items to label"):
        LabelSession.open(tmp_path, "alice")


def test_labels_written_by_another_process_show_on_the_next_load(
    client: httpx.Client, audit_dir: Path
) -> None:
    # An `audit import` (or a second page) while this server runs: a reload of the page sees it.
    append_label(audit_dir, "alice", Label(item_id=IDS[0], label="leak", labelled_at="2026-01-01T00:00:00Z"))
    state = client.get("/api/state").json()
    assert state["labelled"] == 1
    assert state["resume"] == 1
    assert post(client, {"item_id": IDS[1], "label": "leak"}).json()["labelled"] == 2


def test_a_labels_file_damaged_while_serving_is_a_json_error(client: httpx.Client, audit_dir: Path) -> None:
    post(client, {"item_id": IDS[0], "label": "leak"})
    path = audit_dir / "labels" / "alice.jsonl"
    path.write_text("damaged\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    response = client.get("/api/state")
    assert response.status_code == 500
    assert "alice.jsonl, line 1: not a JSON object" in response.json()["error"]


# --------------------------------------------------------------------------- hostile requests


@pytest.fixture
def bugs() -> list[str]:
    """What the server reported as its own failures (a malformed request must never land here)."""
    return []


@pytest.fixture
def strict(audit_dir: Path, bugs: list[str]) -> Iterator[LabelServer]:
    """A server with short limits: idle 0.5 s, body 0.3 s (the defaults are 15 s and 1 s)."""
    with serving(
        open_session(audit_dir), on_error=bugs.append, idle_timeout=0.5, body_deadline=0.3
    ) as running:
        yield running


def raw_request(
    server: LabelServer, data: bytes, *, half_close: bool = False
) -> tuple[int, dict[str, str], bytes]:
    """Send ``data`` as is; the status, the headers (lower-cased names) and the body of the answer."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split(" ")[1]), {k.lower(): v for k, v in headers.items()}, body


def label_request(server: LabelServer, body: bytes, *, length: str | None = None, extra: str = "") -> bytes:
    """A POST /api/label as the page sends it, with ``body`` and its (or the given) Content-Length."""
    shown = str(len(body)) if length is None else length
    return (
        f"POST /api/label HTTP/1.0\r\nHost: 127.0.0.1:{server.port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {shown}\r\n{extra}\r\n"
    ).encode() + body


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nests more than 16 levels deep"),
        (b'{"item_id": ' + b"9" * 5000 + b', "label": "leak"}', "a number too long to read"),
        (b'{"item_id": "x", "note": "' + b"[{" * 5000 + b'"}', "no audit item 'x'"),  # brackets in text
        (b'{"item_id": [[[1]]], "label": "leak"}', "no audit item a JSON array in this audit"),
        (f'{{"item_id": "{IDS[0]}", "label": {{"a": 1}}}}'.encode(), "not a JSON object"),
        (
            f'{{"item_id": "{IDS[0]}", "label": "leak", "note": "a\\ud800"}}'.encode(),
            "U+D800, half of a character",
        ),
        (b'{"' + b"k" * 1000 + b'": 1}', "unknown field(s) 'kkkk"),
        (b"\xef\xbb\xbf{}", "not UTF-8 JSON"),
        (b"NaN", "must be a JSON object"),
        (b"", "not UTF-8 JSON"),
    ],
)
def test_a_malformed_body_gets_a_400_and_never_the_bug_path(
    strict: LabelServer, audit_dir: Path, bugs: list[str], body: bytes, message: str
) -> None:
    status, headers, answer = raw_request(strict, label_request(strict, body))
    assert status == 400
    assert message in json.loads(answer)["error"]
    assert len(answer) < 500  # the message quotes the body, never all of it
    assert headers["x-content-type-options"] == "nosniff"
    assert bugs == []
    assert not (audit_dir / "labels").exists()


@pytest.mark.parametrize("half_close", [False, True])
def test_a_body_shorter_than_its_length_is_refused_not_awaited(
    strict: LabelServer, audit_dir: Path, bugs: list[str], half_close: bool
) -> None:
    # The client sends 10 of the 100 bytes it announced and waits (or closes its side): the server
    # answers after its body deadline (0.3 s here, 1 s by default) instead of the 15 s idle limit.
    request = label_request(strict, b'{"item_id"', length="100")
    status, _, answer = raw_request(strict, request, half_close=half_close)
    assert status == 400
    assert json.loads(answer)["error"] == "the body ended after 10 of its 100 bytes (Content-Length)"
    assert bugs == [] and not (audit_dir / "labels").exists()


def test_a_body_sent_in_pieces_within_the_deadline_is_read(strict: LabelServer, audit_dir: Path) -> None:
    body = json.dumps({"item_id": IDS[0], "label": "leak"}).encode()
    with socket.create_connection(("127.0.0.1", strict.port), timeout=10) as sock:
        sock.sendall(label_request(strict, body[:5], length=str(len(body))))
        sock.sendall(body[5:])
        answer = sock.makefile("rb").read()
    assert answer.startswith(b"HTTP/1.0 200 ")
    assert read_labels(audit_dir, "alice")[IDS[0]].label == "leak"


@pytest.mark.parametrize(
    ("headers", "status", "message"),
    [
        (("abc", ""), 400, "not a valid Content-Length: 'abc'"),
        (("-5", ""), 400, "not a valid Content-Length"),
        (("2", "Content-Length: 3\r\n"), 400, "not a valid Content-Length: '2, 3'"),
        (("9" * 40, ""), 413, "under 262144 bytes"),
        (("300000", ""), 413, "under 262144 bytes"),
    ],
)
def test_a_bad_content_length_is_refused_at_once(
    strict: LabelServer, bugs: list[str], headers: tuple[str, str], status: int, message: str
) -> None:
    length, extra = headers
    got, _, answer = raw_request(strict, label_request(strict, b"{}", length=length, extra=extra))
    assert got == status
    assert message in json.loads(answer)["error"]
    assert bugs == []


def test_a_body_without_length_is_refused(strict: LabelServer) -> None:
    request = (
        f"POST /api/label HTTP/1.0\r\nHost: 127.0.0.1:{strict.port}\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
    ).encode()
    status, _, answer = raw_request(strict, request)
    assert status == 411
    assert "a Content-Length is required" in json.loads(answer)["error"]


@pytest.mark.parametrize(
    ("host", "status"), [("[::1]:{port}", 200), ("LOCALHOST:{port}", 200), ("127.0.0.1:{other}", 403)]
)
def test_loopback_names_of_this_port_only(strict: LabelServer, host: str, status: int) -> None:
    request = (
        f"GET /api/state HTTP/1.0\r\nHost: {host.format(port=strict.port, other=strict.port + 1)}\r\n\r\n"
    )
    got, _, answer = raw_request(strict, request.encode())
    assert got == status
    assert ("item_ids" in json.loads(answer)) == (status == 200)


def test_a_request_without_host_is_refused(strict: LabelServer) -> None:
    status, _, answer = raw_request(strict, b"GET /api/state HTTP/1.0\r\n\r\n")
    assert status == 403
    assert json.loads(answer) == {"error": f"this server answers only to 127.0.0.1:{strict.port}"}


def test_http_server_refusals_are_json_too(strict: LabelServer, bugs: list[str]) -> None:
    status, headers, answer = raw_request(strict, b"GET / HTTP/1.0\r\n" + b"X-Many: 1\r\n" * 101 + b"\r\n")
    assert status == 431
    assert "error" in json.loads(answer)
    assert headers["content-type"] == "application/json; charset=utf-8"
    assert headers["x-content-type-options"] == "nosniff"
    assert bugs == []


def test_an_idle_connection_is_closed_and_the_server_goes_on(strict: LabelServer) -> None:
    with socket.create_connection(("127.0.0.1", strict.port), timeout=10) as sock:
        # Nothing is sent: the server closes after its idle limit (0.5 s here), so recv sees EOF;
        # the 10 s socket timeout only keeps the test from hanging if it did not.
        assert sock.recv(1024) == b""
    status, _, _ = raw_request(
        strict, f"GET /api/state HTTP/1.0\r\nHost: 127.0.0.1:{strict.port}\r\n\r\n".encode()
    )
    assert status == 200


def test_any_character_of_an_item_reaches_the_page_as_json(tmp_path: Path) -> None:
    # A lone surrogate cannot be UTF-8: the answer is ASCII JSON, which carries it as an escape.
    item = dict.fromkeys(PAGE_FIELDS, "")
    item.update(item_id="odd", title="a\ud800b\u202ec", raw_content="\x00\u2028")
    session = LabelSession(audit_dir=tmp_path, annotator="alice", items=[item], labels={})
    with serving(session) as server, httpx.Client(base_url=server.url, trust_env=False, timeout=10) as client:
        response = client.get("/api/item", params={"id": "odd"})
    assert response.status_code == 200
    assert response.content.isascii() and b"\\ud800" in response.content
    assert response.json()["title"] == "a\ud800b\u202ec"
    assert response.json()["raw_content"] == "\x00\u2028"
