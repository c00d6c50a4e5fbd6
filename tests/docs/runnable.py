"""Runnable documentation examples: find them in Markdown, mask their volatile parts, match output.

The convention (also stated in docs/contributing-docs.md):

- ``<!-- runnable -->`` on the line right before a fenced ``console`` block marks it runnable. Lines
  starting with ``$ `` are commands (a trailing ``\\`` continues one on the next line); the lines
  after a command, up to the next ``$ ``, are its shown output (stdout and stderr together). A
  command with no shown output only has to exit 0. ``<!-- runnable exit=2 -->`` expects that status
  from the block's last command instead (the others must exit 0).
- ``<!-- file: NAME -->`` right before any fenced block writes the block's text to ``NAME`` in the
  working folder of every runnable block after it in the same document (an ``oracleproto.toml`` the
  reader is told to write, a ``names.json``…).
- A marker inside another fenced block (an example of the convention itself) is text, not a marker.
- In shown output, a line that is only ``…`` matches any number of lines (none included), and ``…``
  inside a line matches any text on that line. Everything else must match exactly once both sides
  went through :data:`MASKS` and lost trailing spaces and trailing blank lines.

Every block runs in a new empty folder, offline: the console script ``oracleproto`` of the
interpreter running the tests comes first on ``PATH``, ``HOME`` and the XDG folders are inside the
temporary folder, no setting comes from the machine's environment, and HTTP(S) proxies point at a
closed port so a command that tried the network would fail (``127.0.0.1`` stays direct: the
simulator). ``demo`` is the bundled demo run.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ELLIPSIS = "…"
_MARKER = re.compile(r"^<!--\s*(runnable(?:\s+exit=(?P<exit>\d+))?|file:\s*(?P<file>[^\s>]+))\s*-->\s*$")
_FENCE = re.compile(r"^(?P<fence>```+|~~~+)\s*(?P<info>[^\n]*)$")

#: What is masked in shown and actual output alike, in this order: (name, pattern, replacement).
#: Paths are masked first (they can hold run ids); {tmp} and {repo} are filled in per block.
MASKS: tuple[tuple[str, str, str], ...] = (
    ("working folder", "{tmp}", "<TMP>"),
    ("repository", "{repo}", "<REPO>"),
    ("timestamp", r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?", "<TIME>"),
    ("run id", r"\b\d{8}-\d{6}-[0-9a-f]{4}\b", "<RUN-ID>"),
    ("duration", r"\b\d+(?:\.\d+)?\s?(?:ms|s|min)\b", "<DURATION>"),
)


@dataclass
class Command:
    """One ``$`` line (continuations joined) and the output shown under it."""

    text: str
    shown: list[str] = field(default_factory=list)


@dataclass
class Block:
    """A runnable block: where it is, its commands, the files written before it, its exit status."""

    source: Path
    line: int
    commands: list[Command]
    files: dict[str, str]
    exit_status: int = 0

    @property
    def id(self) -> str:
        return f"{self.source.as_posix()}:{self.line}"


@dataclass
class Problem:
    """A marker that marks nothing runnable (wrong fence, no fence, no command)."""

    source: Path
    line: int
    message: str


def parse(text: str, source: Path) -> tuple[list[Block], list[Problem]]:
    """The runnable blocks of one Markdown text, and markers that do not bind to a proper block."""
    lines = text.splitlines()
    blocks: list[Block] = []
    problems: list[Problem] = []
    files: dict[str, str] = {}
    i = 0
    while i < len(lines):
        marker = _MARKER.match(lines[i].strip())
        if marker is None:
            plain = _FENCE.match(lines[i].strip())
            i = _closing(lines, i + 1, plain["fence"]) + 1 if plain else i + 1  # nothing inside counts
            continue
        opening = _FENCE.match(lines[i + 1].strip()) if i + 1 < len(lines) else None
        if opening is None:
            problems.append(Problem(source, i + 1, "the marker is not followed by a fenced block"))
            i += 1
            continue
        end = _closing(lines, i + 2, opening["fence"])
        body = lines[i + 2 : end]
        if marker["file"]:
            files[marker["file"]] = "\n".join(body) + "\n"
        elif opening["info"].split()[:1] != ["console"]:
            problems.append(Problem(source, i + 1, "a runnable block must be a ```console block"))
        else:
            commands = _commands(body)
            if not commands:
                problems.append(Problem(source, i + 1, "a runnable block has no `$ ` command"))
            else:
                status = int(marker["exit"]) if marker["exit"] else 0
                blocks.append(Block(source, i + 2, commands, dict(files), status))
        i = end + 1
    return blocks, problems


def _closing(lines: list[str], start: int, fence: str) -> int:
    """The index of the line closing ``fence`` from ``start`` on (``len(lines)`` if none does)."""
    end = start
    while end < len(lines) and lines[end].strip() != fence:
        end += 1
    return end


def _commands(body: list[str]) -> list[Command]:
    commands: list[Command] = []
    lines = iter(body)
    for line in lines:
        if line.startswith("$ "):
            text = line[2:]
            while text.endswith("\\"):
                text = text[:-1] + " " + next(lines, "").strip()
            commands.append(Command(text.strip()))
        elif commands:
            commands[-1].shown.append(line)
    return commands


def markdown_files(root: Path) -> Iterator[Path]:
    """README.md and every Markdown file under docs/, sorted."""
    yield root / "README.md"
    yield from sorted((root / "docs").rglob("*.md"))


def mask(text: str, *, tmp: str, repo: str) -> str:
    """``text`` with every volatile part replaced (:data:`MASKS`), trailing spaces and blank lines gone."""
    for _, pattern, replacement in MASKS:
        if pattern == "{tmp}":
            text = text.replace(tmp, replacement) if tmp else text
        elif pattern == "{repo}":
            text = text.replace(repo, replacement) if repo else text
        else:
            text = re.sub(pattern, replacement, text)
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def matches(shown: str, actual: str) -> bool:
    """True when ``actual`` (masked) is what ``shown`` (masked) says, ``…`` being a wildcard."""
    parts: list[str] = []
    for line in shown.splitlines() if shown else []:
        if line.strip() == ELLIPSIS:
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(r"[^\n]*?".join(re.escape(piece) for piece in line.split(ELLIPSIS)) + r"\n")
    return re.fullmatch("".join(parts), actual + "\n" if actual else "", flags=re.DOTALL) is not None


def difference(shown: str, actual: str) -> str:
    """A unified diff of shown against actual output, for a failure message."""
    diff = difflib.unified_diff(shown.splitlines(), actual.splitlines(), "shown", "actual", lineterm="")
    return "\n".join(diff)
