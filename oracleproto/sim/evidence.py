"""The simulator's evidence rule, shared by the search corpus and the personas.

For any dataset but the bundled demo the simulator never sees gold answers: every (topic,
subject) pair has a deterministic "strength" in percent; search documents about a subject
report it in a fixed phrase ("Analysts rate the chances of <subject> at <p>% …"), and a persona
that searched reads the phrase back. The subject with the highest strength is the *evidence
pick*; a skilled persona that searched enough tends to answer it. The demo's own fictional
corpus (``demo_corpus``) uses the same phrase with percentages that lean towards the true
outcome, and states settled outcomes outright ("Outcome confirmed on <date>: <subject> — YES.")
in documents written after the question's cutoff.

Queries carry the subject after an em dash (``<topic> — <subject>``), the convention the
personas use when they search; a query without a dash is a background search on the topic.
"""

from __future__ import annotations

import re

from oracleproto.sim import rng

SUBJECT_SEPARATOR = " — "

_CHANCES = re.compile(r"chances of (.+?) at (\d{1,3})% as of")
_OUTCOME = re.compile(r"Outcome confirmed on \d{4}-\d{2}-\d{2}: (.+?) — (YES|NO)\.")


def normalise(text: str) -> str:
    """Case- and whitespace-insensitive key for topics and subjects."""
    return " ".join(text.lower().split())


def strength(topic: str, subject: str) -> int:
    """The true strength (5..95 percent) of ``subject`` for ``topic``."""
    return 5 + int(rng.unit("strength", normalise(topic), normalise(subject)) * 91)


def split_query(query: str) -> tuple[str, str | None]:
    """``(topic, subject)`` of a query; subject is ``None`` for a background query."""
    topic, sep, subject = query.partition(SUBJECT_SEPARATOR)
    return (topic.strip(), subject.strip() or None) if sep else (query.strip(), None)


def make_query(topic: str, subject: str | None) -> str:
    """The query a persona sends about ``subject`` (or about the topic in general)."""
    return topic if subject is None else f"{topic}{SUBJECT_SEPARATOR}{subject}"


def chances_phrase(subject: str, percent: int, as_of: str) -> str:
    """The sentence that carries evidence in a document."""
    return f"Analysts rate the chances of {subject} at {percent}% as of {as_of}."


def outcome_phrase(subject: str, happened: bool, as_of: str) -> str:
    """The sentence that states a settled outcome outright (only written after the fact)."""
    return f"Outcome confirmed on {as_of}: {subject} — {'YES' if happened else 'NO'}."


def read_chances(texts: list[str], subjects: tuple[str, ...]) -> dict[str, int]:
    """Reported percent per known subject in ``texts``: a stated outcome (100/0) beats the average."""
    by_key = {normalise(s): s for s in subjects}
    seen: dict[str, list[int]] = {}
    settled: dict[str, int] = {}
    for text in texts:
        clean = text.replace('\\"', '"')
        for name, percent in _CHANCES.findall(clean):
            subject = by_key.get(normalise(name))
            if subject is not None:
                seen.setdefault(subject, []).append(int(percent))
        for name, verdict in _OUTCOME.findall(clean):
            subject = by_key.get(normalise(name))
            if subject is not None:
                # A reader who saw the result does not average it with forecasts.
                settled[subject] = 100 if verdict == "YES" else 0
    averaged = {s: round(sum(v) / len(v)) for s, v in seen.items()}
    return {**averaged, **settled}
