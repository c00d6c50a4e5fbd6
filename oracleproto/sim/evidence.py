"""The simulator's evidence rule, shared by the search corpus and the personas.

The simulator never sees gold answers. Instead every (topic, subject) pair has a
deterministic "strength" in percent; search documents about a subject report it in a fixed
phrase ("Analysts rate the chances of <subject> at <p>% …"), and a persona that searched
reads the phrase back. The subject with the highest strength is the *evidence pick*; a
skilled persona that searched enough tends to answer it.

Queries carry the subject after an em dash (``<topic> — <subject>``), the convention the
personas use when they search; a query without a dash is a background search on the topic.
"""

from __future__ import annotations

import re

from oracleproto.sim import rng

SUBJECT_SEPARATOR = " — "

_CHANCES = re.compile(r"chances of (.+?) at (\d{1,3})% as of")


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


def read_chances(texts: list[str], subjects: tuple[str, ...]) -> dict[str, int]:
    """Average reported percent per known subject found in ``texts`` (unknown subjects ignored)."""
    by_key = {normalise(s): s for s in subjects}
    seen: dict[str, list[int]] = {}
    for text in texts:
        for name, percent in _CHANCES.findall(text.replace('\\"', '"')):
            subject = by_key.get(normalise(name))
            if subject is not None:
                seen.setdefault(subject, []).append(int(percent))
    return {s: round(sum(v) / len(v)) for s, v in seen.items()}
