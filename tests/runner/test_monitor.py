"""The run's monitor: long waits reach the log and the display; the circuit breaker's rule."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from oracleproto.errors import ErrorKind, ProviderUnavailableError
from oracleproto.primitives.clock import FakeClock
from oracleproto.providers.monitor import CallFailure
from oracleproto.runner.monitor import RunMonitor
from oracleproto.runner.progress import RunProgress
from oracleproto.runner.runlog import RunLog

URL = "http://127.0.0.1:9/v1/chat/completions"
REFUSED = CallFailure(ErrorKind.NETWORK, "ConnectError", URL)


def monitor(tmp_path: Path, calls: int = 3) -> tuple[RunMonitor, Path, list[str]]:
    path = tmp_path / "run.log"
    shown: list[str] = []
    return (
        RunMonitor(
            RunLog(path, FakeClock()), retry_after_max_s=300, breaker_calls=calls, notify=shown.append
        ),
        path,
        shown,
    )


def events(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_long_waits_are_logged_and_shown_short_ones_are_not(tmp_path: Path) -> None:
    mon, path, shown = monitor(tmp_path)
    mon.waiting("llm", "sim/hasty", "rate_limit, Retry-After", 4.9)
    mon.waiting("llm", "sim/hasty", "rate_limit, Retry-After", 30)
    logged = events(path)
    assert [{k: e[k] for k in ("event", "channel", "model", "reason", "seconds")} for e in logged] == [
        {
            "event": "waiting",
            "channel": "llm",
            "model": "sim/hasty",
            "reason": "rate_limit, Retry-After",
            "seconds": 30,
        }
    ]
    assert shown == ["waiting 30 s: llm sim/hasty (rate_limit, Retry-After)"]


def test_the_breaker_trips_on_n_equal_failures_and_names_channel_error_and_host(tmp_path: Path) -> None:
    mon, _, _ = monitor(tmp_path, calls=3)
    mon.call_done("search", None)  # another channel's success does not disarm llm
    mon.call_done("llm", REFUSED)
    mon.call_done("llm", REFUSED)
    with pytest.raises(ProviderUnavailableError) as info:
        mon.call_done("llm", REFUSED)
    message = str(info.value)
    assert "first 3 llm calls" in message and "ConnectError" in message and "127.0.0.1:9" in message
    assert info.value.channel == "llm" and info.value.kind is ErrorKind.NETWORK
    # Tripped: calls still in flight fail the same way instead of being stored as failed samples.
    with pytest.raises(ProviderUnavailableError):
        mon.call_done("llm", CallFailure(ErrorKind.NETWORK, "ReadTimeout", URL))
    mon.call_done("llm", None)


@pytest.mark.parametrize(
    "first",
    [
        None,
        CallFailure(ErrorKind.NETWORK, "ReadTimeout", URL),
        CallFailure(ErrorKind.SERVER_5XX, "HTTP 503", URL),
    ],
)
def test_anything_else_first_disarms_the_channel(tmp_path: Path, first: CallFailure | None) -> None:
    mon, _, _ = monitor(tmp_path, calls=2)
    mon.call_done("llm", REFUSED)
    mon.call_done("llm", first)
    for _ in range(5):
        mon.call_done("llm", REFUSED)


def test_zero_turns_the_breaker_off(tmp_path: Path) -> None:
    mon, _, _ = monitor(tmp_path, calls=0)
    for _ in range(20):
        mon.call_done("llm", REFUSED)


def test_notices_print_as_plain_lines_when_not_a_terminal() -> None:
    stream = io.StringIO()
    with RunProgress({"m": 1}, {}, enabled=True, stream=stream) as progress:
        progress.note("waiting 30 s: llm m (rate_limit, Retry-After)")
    assert stream.getvalue() == "waiting 30 s: llm m (rate_limit, Retry-After)\n"
    quiet = io.StringIO()
    with RunProgress({"m": 1}, {}, enabled=False, stream=quiet) as progress:
        progress.note("x")
    assert quiet.getvalue() == ""
