"""The structured run log ``logs/{run_id}.log``: one JSON object per line."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oracleproto.primitives import safe_text
from oracleproto.primitives.redact import redact_urls_in_text

if TYPE_CHECKING:
    # A type only: clock.py imports asyncio, and every command imports this module (cli/failures.py).
    from oracleproto.primitives.clock import Clock


class RunLog:
    """Append-only JSON-lines log of a run (never holds secrets: no settings, no headers)."""

    def __init__(self, path: Path, clock: Clock) -> None:
        self._clock = clock
        self._logger = logging.getLogger(f"oracleproto.run.{path.stem}")
        self._logger.setLevel(logging.INFO)
        self._logger.propagate = False
        self._handler = logging.FileHandler(path, encoding="utf-8")
        self._handler.setFormatter(logging.Formatter("%(message)s"))
        self._logger.addHandler(self._handler)
        _OPENED.append(path)

    def event(self, name: str, **fields: Any) -> None:
        """Write one event with a UTC timestamp."""
        record = {"ts": self._clock.now().isoformat(), "event": name, **fields}
        # Fields may quote strangers' text (a page, a provider's error): escaped so the line is
        # UTF-8 and one line (safe_text); a lone surrogate would make the handler print a traceback.
        line = safe_text.dumps(record, sort_keys=True, default=str)
        # Messages may quote a URL; its userinfo and credential parameters never reach the log.
        self._logger.info(redact_urls_in_text(line))

    def close(self) -> None:
        """Flush and detach the file handler."""
        self._logger.removeHandler(self._handler)
        self._handler.close()


#: Run logs opened by this process, latest last: the CLI's internal-error handler writes there.
_OPENED: list[Path] = []


def last_run_log() -> Path | None:
    """The run log this process opened last, if any (where an internal error's traceback goes)."""
    return _OPENED[-1] if _OPENED else None


def append_internal_error(path: Path, text: str) -> bool:
    """Append an ``internal_error`` event holding ``text`` (a traceback) to a run log; False if unwritable."""
    record = {"ts": datetime.now(UTC).isoformat(), "event": "internal_error", "traceback": text}
    try:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(safe_text.dumps(record, sort_keys=True) + "\n")
    except OSError:
        return False
    return True
