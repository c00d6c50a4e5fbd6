"""The steps of the chain after ``record``, each filling its column of the table.

Every step runs the real command on the hostile run (or on what the previous step wrote) and
marks each (field, input) cell: ``pass`` where the value was checked in the step's output, ``ok``
where the step completed and the field is not part of its output, ``refused`` where the one item
holding the value was refused with a message, ``FAIL`` otherwise.
"""

from __future__ import annotations

import csv
import filecmp
import io
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

from oracleproto.leakaudit.item_source import load_page_items
from oracleproto.leakaudit.items import read_items
from oracleproto.leakaudit.labels import Label, append_labels, read_labels
from tests.unicode.cli import Outcome, oracleproto
from tests.unicode.evidence import PAGE_FIELDS
from tests.unicode.inputs import BIG, COLUMNS, FIELDS, INPUTS, holds, not_applicable
from tests.unicode.recording import HostileRun
from tests.unicode.table import FAIL, NA, OK, PASS, REFUSED, Table

#: Audit item fields that carry a table field (the query is the model's, the rest the page's).
ITEM_FIELDS = (*PAGE_FIELDS, "query")
STAMP = "2026-02-01T09:00:00Z"


class Chain:
    """The table and the carried/refused verdicts of ``record`` that later steps build on."""

    def __init__(self, run: HostileRun, work: Path, table: Table) -> None:
        self.run = run
        self.work = work
        self.table = table
        #: (field, input) → status after record: PASS (carried), REFUSED or NA.
        self.recorded: dict[tuple[str, str], str] = {}
        #: Wall time of each command (summed where a step runs it twice).
        self.seconds: dict[str, float] = {}

    def timing_note(self, record: Outcome) -> str:
        """One line: how long each command took on the hostile run."""
        times = {"record": record.seconds, **self.seconds}
        return "seconds: " + ", ".join(f"{name} {value:.1f}" for name, value in times.items())

    def cells(self) -> list[tuple[str, str]]:
        """Every (field, input) pair of the table."""
        return [(f, c) for f in FIELDS for c in COLUMNS]

    def step(
        self, command: str, outcome: Outcome, *, checked: Callable[[str, str], bool | None] | None = None
    ) -> None:
        """Mark ``command``'s column from its outcome; ``checked(field, input)`` says a value was
        found in its output (``pass``), fields it does not cover are ``ok``."""
        self.seconds[command] = self.seconds.get(command, 0.0) + outcome.seconds
        completed = outcome.clean and outcome.code == 0
        if not completed:
            self.table.notes.append(f"FAILED {outcome.describe()}")
        for name, column in self.cells():
            before = self.recorded.get((name, column), FAIL)
            if before in (NA, REFUSED):
                self.table.mark(name, column, command, NA if before == NA else OK if completed else FAIL)
                continue
            if not completed or before == FAIL:
                self.table.mark(name, column, command, FAIL)
            elif checked is None:
                self.table.mark(name, column, command, OK)
            else:
                verdict = checked(name, column)
                self.table.mark(name, column, command, OK if verdict is None else PASS if verdict else FAIL)

    # -- the steps -------------------------------------------------------------------------------

    def replay(self) -> None:
        outcome = oracleproto(
            "replay", self.run.run_dir, "--out", self.work / "replayed", "--dataset", self.run.dataset,
            "--no-progress",
        )  # fmt: skip
        same = "reproduced byte for byte" in outcome.output
        if not same:
            self.table.notes.append(f"replay did not reproduce: {outcome.describe()}")
        self.step("replay", outcome, checked=lambda _f, _c: same)

    def verify(self) -> None:
        outcome = oracleproto("verify", self.run.run_dir, "--dataset", self.run.dataset, "--quiet")
        self.step("verify", outcome, checked=lambda _f, _c: "VERIFIED" in outcome.output)

    def report(self) -> None:
        self.step("report", oracleproto("report", self.run.run_dir, "--out", self.work / "report"))

    def export(self) -> None:
        jsonl, table = self.work / "export.jsonl", self.work / "export.csv"
        outcome = oracleproto("export", self.run.run_dir, "--out", jsonl)
        csv_outcome = oracleproto("export", self.run.run_dir, "--format", "csv", "--out", table)
        if csv_outcome.code != 0:
            outcome = csv_outcome
        lines = jsonl.read_text(encoding="utf-8").splitlines() if jsonl.exists() else []
        # Any line splitter must see one object a line (U+2028 and friends are escaped).
        readable = bool(lines) and all(isinstance(json.loads(line), dict) for line in lines)
        rows = (
            list(csv.reader(io.StringIO(table.read_text(encoding="utf-8"), newline="")))
            if table.exists()
            else []
        )
        readable = readable and len(rows) == len(lines) + 1
        self.step("export", outcome, checked=lambda _f, _c: readable or None)

    def view(self) -> None:
        page = self.work / "view.html"
        outcome = oracleproto("view", self.run.run_dir, "--out", page, "--quiet")
        written = page.is_file() and page.stat().st_size > 0
        self.step("view", outcome, checked=lambda _f, _c: written or None)

    def audit_sample(self) -> None:
        audit = self.work / "audit"
        outcome = oracleproto("audit", "sample", self.run.run_dir, "--out", audit, "--per-item", "20")
        items = read_items(audit) if outcome.code == 0 else []
        longest = max((len(i.raw_content or "") for i in items), default=0)

        def checked(name: str, column: str) -> bool | None:
            if name not in ITEM_FIELDS:
                return None
            if column == BIG:
                return longest >= 8_000  # cut to SEARCH_RESULT_MAX_CHARS, as the detector saw it
            return any(holds(getattr(item, name), column) for item in items)

        self.step("audit sample", outcome, checked=checked)

    def audit_label(self) -> None:
        """Label through the labels API (as the page saves) and a spreadsheet (``audit import``)."""
        audit = self.work / "audit"
        items = read_items(audit)
        page = load_page_items(audit)
        note = "seen: " + " ".join(INPUTS[c] for c in INPUTS if c != "invalid UTF-8")
        given = [
            Label(item_id=i.item_id, label="leak" if n % 2 else "no-leak", note=note, labelled_at=STAMP)
            for n, i in enumerate(items)
        ]
        append_labels(audit, "alice", given)
        round_trip = read_labels(audit, "alice") == {label.item_id: label for label in given}
        sheet = self.work / "bob.csv"
        with sheet.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["item_id", "label", "note"])
            for n, item in enumerate(items):
                writer.writerow(
                    [item.item_id, "leak" if n % 3 else "no-leak", note.replace("\ud800|\udfff", "")]
                )
        outcome = oracleproto("audit", "import", audit, sheet, "--annotator", "bob")
        shown = {p["item_id"]: p for p in page}

        def checked(name: str, column: str) -> bool | None:
            if not round_trip:
                return False
            if name not in ITEM_FIELDS:
                return None
            if name == "query" or column == BIG:
                return None  # the page is not sent the query; the body is cut as in the item
            return any(
                holds(shown[i.item_id][name], column) for i in items if holds(getattr(i, name), column)
            )

        self.step("audit label", outcome, checked=checked)

    def audit_score(self) -> None:
        self.step("audit score", oracleproto("audit", "score", self.work / "audit"))

    def bundle(self) -> None:
        archive, dest = self.work / "bundle.tar.gz", self.work / "imported"
        exported = oracleproto("bundle", "export", self.run.run_dir, archive, "--dataset", self.run.dataset)
        self.step("bundle export", exported, checked=lambda _f, _c: archive.is_file())
        imported = oracleproto("bundle", "import", archive, dest)
        copy = dest / "run" / self.run.run_dir.name

        def same(_f: str, _c: str) -> bool:
            return all(_same_file(self.run.run_dir / rel, copy / rel) for rel in _published(self.run.run_dir))

        self.step("bundle import", imported, checked=same)


def _published(run_dir: Path) -> list[Path]:
    """The files a bundle carries that hold the hostile text: the DBs and the cassettes."""
    return sorted(
        p.relative_to(run_dir)
        for p in [*(run_dir / "db").glob("*.db"), *(run_dir / "cassettes").rglob("*.yaml")]
    )


def _same_file(a: Path, b: Path) -> bool:
    if a.suffix == ".db":
        return _dump(a) == _dump(b)
    return filecmp.cmp(a, b, shallow=False)


def _dump(path: Path) -> list[tuple[object, ...]]:
    con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return sorted(tuple(r) for r in con.execute("SELECT * FROM run_results"))
    finally:
        con.close()


def record_verdicts(
    chain: Chain,
    refusals: dict[str, bool],
    values: dict[str, list[str]],
    refused_pages: tuple[int, int],
    longest: int,
) -> None:
    """Fill ``record``'s column: carried values, refused ones (with their messages), n/a cells."""
    undecodable, failed = refused_pages
    for name, column in chain.cells():
        reason = not_applicable(name, column)
        if reason is not None:
            status = NA
        elif column == BIG:
            status = PASS if longest >= 5_000_000 else FAIL
        elif name in ("display names",) or (
            column == "invalid UTF-8" and name in ("question text", "option labels")
        ):
            status = REFUSED if refusals[f"{name}/{column}"] else FAIL
        elif column == "invalid UTF-8" and name in (*PAGE_FIELDS, "answer"):
            # A Tavily body that is not UTF-8: that search fails (the model is told) and the run goes on.
            status = REFUSED if undecodable and failed else FAIL
        else:
            status = PASS if any(holds(v, column) for v in values.get(name, [])) else FAIL
        chain.recorded[(name, column)] = status
        chain.table.mark(name, column, "record", status)
