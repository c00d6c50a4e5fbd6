"""Where each untrusted field of a recorded run can be read back, as strings.

``field_values(run_dir)`` gathers, per field of ``inputs.FIELDS``, every value the run holds for
it: pages and Tavily's answers from the search cassette, detector reasons from the detector
cassette, the model's replies, reasoning and tool-call arguments from the stored trajectories,
queries from ``search_calls``, and the question texts and option labels from the DB.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from oracleproto.sim.hostile import INVALID_BYTES
from oracleproto.store import RunDir
from oracleproto.transport.store import CassetteStore

PAGE_FIELDS = ("title", "url", "content", "raw_content")


def _cassettes(run_dir: Path) -> CassetteStore:
    run = RunDir.open(run_dir)
    return CassetteStore(run.cassette_path(run.load_manifest()), writable=False)


def _rows(run_dir: Path) -> Iterator[dict[str, Any]]:
    for db in sorted((run_dir / "db").glob("*.db")):
        con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
        con.row_factory = sqlite3.Row
        try:
            yield from (dict(r) for r in con.execute("SELECT * FROM run_results"))
        finally:
            con.close()


def _questions(run_dir: Path) -> list[dict[str, Any]]:
    out = []
    for db in sorted((run_dir / "db").glob("*.db")):
        con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
        con.row_factory = sqlite3.Row
        try:
            out += [dict(r) for r in con.execute("SELECT * FROM questions")]
        finally:
            con.close()
    return out


def _json_cells(row: dict[str, Any], suffix: str) -> Iterator[Any]:
    for name, value in row.items():
        if name.endswith(suffix) and isinstance(value, str):
            yield json.loads(value)


def field_values(run_dir: Path) -> dict[str, list[str]]:
    """Field name → every value the recorded run holds for it."""
    found: dict[str, list[str]] = {}

    def add(name: str, value: Any) -> None:
        if isinstance(value, str):
            found.setdefault(name, []).append(value)

    store = _cassettes(run_dir)
    for entry in store.find(lambda e: e.channel == "search" and e.status == 200):
        try:
            body = json.loads(entry.body)
        except ValueError:
            continue  # a body that is not UTF-8: see refused_pages
        add("answer", body.get("answer"))
        for result in body.get("results") or []:
            for name in PAGE_FIELDS:
                add(name, result.get(name))
    for entry in store.find(lambda e: e.channel == "detector" and e.status == 200):
        content = json.loads(entry.body.decode("utf-8", "replace"))["choices"][0]["message"]["content"]
        add("detector reason", json.loads(content).get("reason"))
    for row in _rows(run_dir):
        for calls in _json_cells(row, "_search_calls"):
            for call in calls:
                add("query", call.get("query"))
        for trace in _json_cells(row, "_messages_trace"):
            for message in trace:
                if message.get("role") != "assistant":
                    continue
                add("model content", message.get("content"))
                add("reasoning", message.get("reasoning"))
                for call in message.get("tool_calls") or []:
                    # The values the arguments carry (JSON escapes NUL; the rest stays raw).
                    for value in json.loads(call["function"]["arguments"]).values():
                        add("tool-call arguments", value)
        for name, value in row.items():
            if name.endswith("_final_answer_raw"):
                add("model content", value)
    for question in _questions(run_dir):
        add("question text", question["event"])
        for label in json.loads(question["options"]):
            add("option labels", label)
    return found


def refused_pages(run_dir: Path) -> tuple[int, int]:
    """(search answers whose body is not UTF-8, failed search calls stored): the refused pages."""
    store = _cassettes(run_dir)
    undecodable = len(store.find(lambda e: e.channel == "search" and INVALID_BYTES in e.body))
    failed = sum(
        1
        for row in _rows(run_dir)
        for calls in _json_cells(row, "_search_calls")
        for call in calls
        if call.get("error_kind")
    )
    return undecodable, failed


def longest_page(run_dir: Path) -> int:
    """Characters of the longest page body the search cassette holds."""
    store = _cassettes(run_dir)
    longest = 0
    for entry in store.find(lambda e: e.channel == "search" and e.status == 200):
        try:
            results = json.loads(entry.body).get("results") or []
        except ValueError:
            continue
        longest = max([longest, *(len(r.get("raw_content") or "") for r in results)])
    return longest
