"""Run ``oracleproto`` in-process the way a terminal does: output encoded as UTF-8, strictly."""

from __future__ import annotations

import contextlib
import io
import time
from dataclasses import dataclass

from oracleproto.cli.main import cli


@dataclass(frozen=True)
class Outcome:
    """How one command ended."""

    args: tuple[str, ...]
    code: int
    output: str
    seconds: float

    @property
    def clean(self) -> bool:
        """Ended by itself: no traceback, not the internal-error status."""
        return self.code != 70 and "Traceback" not in self.output

    def describe(self) -> str:
        """The command, its status and its output (for assertion messages)."""
        return f"oracleproto {' '.join(self.args)} → exit {self.code}\n{self.output[-3000:]}"


def oracleproto(*args: object) -> Outcome:
    """``oracleproto ARGS`` through the console script's entry (``cli.main``); stdout and stderr
    go to one UTF-8 stream with strict errors, so text a real terminal cannot take fails here too."""
    argv = tuple(str(a) for a in args)
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8", errors="strict", write_through=True)
    started = time.perf_counter()
    code = 0
    with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
        try:
            cli.main(args=list(argv), prog_name="oracleproto")
        except SystemExit as exc:
            code = int(exc.code or 0)
    seconds = time.perf_counter() - started
    stream.flush()
    return Outcome(argv, code, raw.getvalue().decode("utf-8", "replace"), seconds)
