"""The verdict vocabulary of ``verify``: one line per check, with where a difference is."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Status = Literal["pass", "FAIL", "skip", "n/a"]
#: Told each stage's name as a verification (or the demo's recording) reaches it.
Progress = Callable[[str], None]


def quiet(_: str) -> None:
    """A :data:`Progress` that shows nothing."""
    return None


@dataclass(frozen=True)
class Check:
    """One verification: what was checked, its status, and (on failure) the precise location."""

    what: str
    status: Status
    detail: str = ""

    @property
    def ok(self) -> bool:
        """True unless the check failed (a skipped or not-applicable check does not fail the verdict)."""
        return self.status != "FAIL"


def passed(what: str, detail: str = "") -> Check:
    """A passing check."""
    return Check(what, "pass", detail)


def failed(what: str, detail: str) -> Check:
    """A failing check; ``detail`` says where."""
    return Check(what, "FAIL", detail)


def skipped(what: str, detail: str) -> Check:
    """A check that could not run (and why)."""
    return Check(what, "skip", detail)


def not_applicable(what: str, detail: str) -> Check:
    """A check that has nothing to check on this kind of run (e.g. no recording), and why."""
    return Check(what, "n/a", detail)


@dataclass
class VerifyReport:
    """Every check run on one run directory (or bundle)."""

    target: Path
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True only when no check failed."""
        return all(c.ok for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        """The failed checks, in order."""
        return [c for c in self.checks if not c.ok]


def byte_location(expected: bytes, actual: bytes) -> str:
    """Where two byte strings first differ: byte offset, line and column (1-based)."""
    limit = min(len(expected), len(actual))
    offset = next((i for i in range(limit) if expected[i] != actual[i]), limit)
    line = actual.count(b"\n", 0, offset) + 1
    column = offset - (actual.rfind(b"\n", 0, offset) + 1) + 1
    if offset == limit and len(expected) != len(actual):
        sizes = f"lengths differ ({len(expected)} vs {len(actual)})"
        return f"byte offset {offset} (line {line}, column {column}): {sizes}"
    return f"byte offset {offset} (line {line}, column {column})"
