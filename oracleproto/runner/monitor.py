"""The run's ``CallMonitor``: waits go to the run log and the progress display; a circuit breaker.

Circuit breaker: when the first ``CIRCUIT_BREAKER_CALLS`` live logical calls of a channel in a
session all end with the same network or unknown failure (same kind, same exception class or
HTTP status), the channel is broken (a wrong base URL, a dead host, a proxy answering 404), so the
call that completes the series raises ``ProviderUnavailableError`` and the run stops resumably
instead of storing every sample as failed. Any other outcome first — a success, another kind, a
different failure — disarms the channel for the rest of the session.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from oracleproto.context import current_call_context
from oracleproto.errors import ErrorKind, ProviderUnavailableError
from oracleproto.providers.monitor import CallFailure, host_of
from oracleproto.runner.failure_tally import FailureTally
from oracleproto.runner.runlog import RunLog

#: Waits at least this long are shown (shorter backoffs are routine and would flood the display).
WAIT_NOTICE_S = 5.0
#: Failure kinds the breaker counts: the ones that say "this endpoint is wrong or unreachable".
BREAKER_KINDS = frozenset({ErrorKind.NETWORK, ErrorKind.UNKNOWN})


@dataclass
class _ChannelState:
    armed: bool = True
    #: The breaker tripped: every later failure of the channel raises too, so calls that were
    #: already in flight do not store more failed samples while the run is being cancelled.
    tripped: bool = False
    signature: tuple[ErrorKind, str] | None = None
    failures: int = 0


class RunMonitor:
    """Logs and shows waits; trips the circuit breaker (``breaker_calls`` = 0 turns it off)."""

    def __init__(
        self,
        log: RunLog,
        *,
        retry_after_max_s: float,
        breaker_calls: int,
        notify: Callable[[str], None] | None = None,
        tally: FailureTally | None = None,
    ) -> None:
        self._log = log
        #: Counts every wait per model and channel (the summary's retries), short ones included.
        self.tally = tally
        #: Shows a model's failure counts next to its progress bar; set once the display exists.
        self.annotate: Callable[[str, str], None] | None = None
        self._cap = retry_after_max_s
        self._breaker_calls = breaker_calls
        #: Shows one line to the user (the progress display); set once the display exists.
        self.notify = notify
        self._channels: dict[str, _ChannelState] = {}
        self._lock = threading.Lock()

    @property
    def retry_after_max_s(self) -> float:
        """The wait cap (``RETRY_AFTER_MAX_S``)."""
        return self._cap

    def waiting(self, channel: str, model: str, reason: str, seconds: float) -> None:
        """Count every wait; log a long one and show it, short ones stay silent."""
        if self.tally is not None:
            failures = self.tally.wait(channel, model, seconds)
            context = current_call_context()
            if self.annotate is not None and context is not None:
                self.annotate(context.model, failures.short())
        if seconds < WAIT_NOTICE_S:
            return
        self._log.event("waiting", channel=channel, model=model, reason=reason, seconds=round(seconds, 3))
        if self.notify is not None:
            self.notify(f"waiting {seconds:.0f} s: {channel} {model} ({reason})")

    def call_done(self, channel: str, failure: CallFailure | None) -> None:
        """Count a live call's outcome; raise when the channel's first calls all failed alike."""
        if failure is not None and self.tally is not None:
            self.tally.failure_detail(channel, failure.kind.value, failure.detail)
        if self._breaker_calls <= 0:
            return
        with self._lock:
            state = self._channels.setdefault(channel, _ChannelState())
            if state.tripped and failure is not None:
                raise self._open(channel, state.failures, failure)
            if not state.armed:
                return
            if failure is None or failure.kind not in BREAKER_KINDS:
                state.armed = False
                return
            signature = (failure.kind, failure.signature)
            if state.signature is not None and state.signature != signature:
                state.armed = False
                return
            state.signature = signature
            state.failures += 1
            if state.failures < self._breaker_calls:
                return
            state.armed, state.tripped = False, True
        raise self._open(channel, state.failures, failure)

    @staticmethod
    def _open(channel: str, failures: int, failure: CallFailure) -> ProviderUnavailableError:
        return ProviderUnavailableError(
            failure.kind,
            f"circuit breaker: the first {failures} {channel} calls of this session all failed with "
            f"{failure.signature} ({failure.kind.value}) at {host_of(failure.url)}",
            channel=channel,
            remedy=f"check the {channel} base URL, the network and the provider's status "
            "(CIRCUIT_BREAKER_CALLS sets how many calls it takes; 0 turns the breaker off)",
        )
