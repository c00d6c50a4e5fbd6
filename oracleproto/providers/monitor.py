"""What the providers report while they work: waits and call outcomes, to an injected monitor.

The runner passes a monitor that logs waits, shows them in the progress display and runs the
circuit breaker; tests and library users get ``NullMonitor``. No globals: each provider holds the
monitor it was given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

from oracleproto.errors import ErrorKind, ProviderUnavailableError

#: Longest wait a provider may ask for before the call counts as exhausted for this session
#: (``RETRY_AFTER_MAX_S``'s default).
DEFAULT_RETRY_AFTER_MAX_S = 300.0


@dataclass(frozen=True)
class CallFailure:
    """The terminal failure of one live logical call, as the circuit breaker compares them."""

    kind: ErrorKind
    #: What failed, comparable across calls: an exception class (``ConnectError``) or ``HTTP 404``.
    signature: str
    #: The URL the call went to (only its host is shown).
    url: str
    #: What went wrong, secrets scrubbed (the end-of-run summary shows it next to the errored samples).
    detail: str = ""


class CallMonitor(Protocol):
    """The observer a provider reports to."""

    @property
    def retry_after_max_s(self) -> float:
        """The longest wait a call may take; longer ones stop the run resumably."""
        ...

    def waiting(self, channel: str, model: str, reason: str, seconds: float) -> None:
        """A call is about to sleep ``seconds`` (backoff, ``Retry-After`` or a key cooldown)."""
        ...

    def call_done(self, channel: str, failure: CallFailure | None) -> None:
        """A live logical call ended (``None`` = success); may raise ``ProviderUnavailableError``."""
        ...


class NullMonitor:
    """A monitor that shows nothing and never trips; only the wait cap applies."""

    def __init__(self, retry_after_max_s: float = DEFAULT_RETRY_AFTER_MAX_S) -> None:
        self._cap = retry_after_max_s

    @property
    def retry_after_max_s(self) -> float:
        """The wait cap."""
        return self._cap

    def waiting(self, channel: str, model: str, reason: str, seconds: float) -> None:
        """Nothing to show."""

    def call_done(self, channel: str, failure: CallFailure | None) -> None:
        """Nothing to count."""


def host_of(url: str) -> str:
    """The host (and port) of ``url``, for messages; the URL itself when it has none."""
    netloc = urlsplit(url).netloc
    return netloc.rsplit("@", 1)[-1] or url


def check_wait(
    monitor: CallMonitor,
    seconds: float,
    *,
    channel: str,
    model: str,
    reason: str,
    url: str,
    status_code: int | None = None,
) -> None:
    """Report a wait, or raise ``ProviderUnavailableError`` when it exceeds the cap.

    ``status_code``: the HTTP status of the reply that asked for the wait (named in the message).
    """
    cap = monitor.retry_after_max_s
    if seconds > cap:
        # The status tells the user which limit this is (a 429 rate limit, a 503 with Retry-After).
        answered = f"answered HTTP {status_code} and " if status_code is not None else ""
        raise ProviderUnavailableError(
            ErrorKind.RATE_LIMIT,
            f"{channel} ({model or 'no model'}) at {host_of(url)} {answered}asked to wait {seconds:.0f} s "
            f"({reason}), more than RETRY_AFTER_MAX_S={cap:g} s",
            status_code=status_code,
            channel=channel,
            remedy=f"rerun after about {seconds:.0f} s, or raise RETRY_AFTER_MAX_S to wait inside the run",
        )
    monitor.waiting(channel, model, reason, seconds)
