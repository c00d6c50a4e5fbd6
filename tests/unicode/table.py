"""The measured table: one row per (field, hostile input), one column per command."""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.unicode.inputs import COLUMNS, COMMANDS, FIELDS

#: The value was checked in the command's output (or, for replay, reproduced byte for byte).
PASS = "pass"
#: The command completed; the field is not part of what it reads or writes.
OK = "ok"
#: The one item holding the value was refused with a message (the rest went on).
REFUSED = "refused"
NA = "n/a"
FAIL = "FAIL"


@dataclass
class Table:
    """Statuses by (field, input, command), and the notes that explain the non-pass ones."""

    cells: dict[tuple[str, str, str], str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def mark(self, name: str, column: str, command: str, status: str) -> None:
        """Set one cell (the first FAIL sticks)."""
        if self.cells.get((name, column, command)) != FAIL:
            self.cells[(name, column, command)] = status

    def failures(self) -> list[tuple[str, str, str]]:
        """Every cell marked FAIL or never marked."""
        return [
            (f, c, k)
            for f in FIELDS
            for c in COLUMNS
            for k in COMMANDS
            if self.cells.get((f, c, k), FAIL) == FAIL
        ]

    def render(self) -> str:
        """A Markdown table, then the notes."""
        lines = [
            "| field | input | " + " | ".join(COMMANDS) + " |",
            "|---|---|" + "---|" * len(COMMANDS),
        ]
        for name in FIELDS:
            for column in COLUMNS:
                row = [self.cells.get((name, column, k), FAIL) for k in COMMANDS]
                lines.append(f"| {name} | {column} | " + " | ".join(row) + " |")
        return "\n".join([*lines, "", *self.notes, ""])
