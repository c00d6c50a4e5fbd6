"""Progress display: ``[done/total]`` per model with an ETA, quiet when stderr is not a TTY.

Notices (a long wait on a provider) are printed above the bars on a terminal, and as plain lines
when the display is enabled but stderr is not a terminal (CI logs), so a stalled run says why.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


class RunProgress:
    """One bar per virtual model; a no-op unless enabled and attached to a terminal."""

    def __init__(
        self, totals: dict[str, int], done: dict[str, int], *, enabled: bool, stream: TextIO | None = None
    ):
        out = stream or sys.stderr
        self._out = out
        self._enabled = enabled
        self._active = enabled and out.isatty()
        self._progress: Progress | None = None
        self._tasks: dict[str, TaskID] = {}
        if self._active:
            # rich is imported only for a terminal: replays, CI and scripted runs never draw bars.
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=Console(file=out),
                transient=False,
            )
            for slug, total in totals.items():
                self._tasks[slug] = self._progress.add_task(slug, total=total, completed=done.get(slug, 0))

    def advance(self, slug: str) -> None:
        """One more slot of ``slug`` is done."""
        if self._progress is not None:
            self._progress.advance(self._tasks[slug])

    def annotate(self, slug: str, text: str) -> None:
        """Show ``text`` (a model's retries and failures so far) after the model's name."""
        if self._progress is not None and slug in self._tasks:
            self._progress.update(self._tasks[slug], description=f"{slug}  {text}" if text else slug)

    def note(self, text: str) -> None:
        """Show one notice line (above the bars on a terminal, plain otherwise)."""
        if self._progress is not None:
            self._progress.console.print(text, markup=False, highlight=False)
        elif self._enabled:
            print(text, file=self._out, flush=True)

    def __enter__(self) -> RunProgress:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()
