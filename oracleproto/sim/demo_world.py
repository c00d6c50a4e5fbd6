"""The demo world: what the simulator knows about the bundled fictional demo questions.

Only the packaged demo rows (``oracleproto/data/demo_questions.jsonl``) are read — fiction we
wrote, with outcomes we chose — so the demo corpus can hint at and, after the cutoff, report the
true outcome. Any other dataset's answers never reach the simulator: a query whose topic is not
a demo event gets the seeded synthetic corpus instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from functools import cache
from typing import Any

from oracleproto.dataset.demo import demo_questions_path
from oracleproto.sim.evidence import normalise


@dataclass(frozen=True)
class DemoEvent:
    """One demo question as the corpus sees it: its subjects and which of them come true."""

    question_id: str
    event: str
    resolves_on: date
    subjects: tuple[str, ...]
    """``("Yes",)`` for yes/no questions, else the option labels (the personas' subjects)."""
    true_subjects: frozenset[str]

    def happened(self, subject: str) -> bool:
        """Whether ``subject`` comes true in the fiction."""
        return subject in self.true_subjects

    def subject(self, name: str) -> str | None:
        """The known subject matching ``name`` (case/space-insensitive), else ``None``."""
        wanted = normalise(name)
        return next((s for s in self.subjects if normalise(s) == wanted), None)


def _event(row: dict[str, Any]) -> DemoEvent:
    options = tuple(str(o) for o in row["options"])
    letters = {part.strip() for part in str(row["answer"]).split(",")}
    chosen = {options[ord(letter) - 65] for letter in letters}
    if row["question_type"] == "yes_no":
        # The yes/no subject is "Yes": it comes true when the answer is the "Yes" option.
        return DemoEvent(
            row["id"],
            row["event"],
            date.fromisoformat(row["end_time"]),
            ("Yes",),
            frozenset(chosen & {"Yes"}),
        )
    return DemoEvent(row["id"], row["event"], date.fromisoformat(row["end_time"]), options, frozenset(chosen))


@cache
def demo_events() -> dict[str, DemoEvent]:
    """Demo events keyed by normalised event text (read once; the packaged file is immutable)."""
    events: dict[str, DemoEvent] = {}
    with demo_questions_path().open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                event = _event(json.loads(line))
                events[normalise(event.event)] = event
    return events


def lookup(topic: str) -> DemoEvent | None:
    """The demo event a search topic is about, or ``None`` for any other topic."""
    return demo_events().get(normalise(topic))
