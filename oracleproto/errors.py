"""Exception hierarchy and the error-kind vocabulary of the paper (Table 14).

OracleprotoError
├── ConfigError                  bad settings / environment (startup, Table 10 row 1)
├── DatasetError                 a source DB failed validation (carries every problem)
├── TransportError               record/replay layer
│   ├── ReplayMissError          replay found no entry for a request
│   ├── CassetteIntegrityError   a stored entry does not match its digest / is malformed
│   └── SampleContextError       a sampled main-LLM call without sample identity
├── ProviderError                provider channels (llm, search, detector)
│   ├── BrowsingBarrierError     a send-time barrier assertion failed (Table 10)
│   ├── CallFailedError          a logical call ended in a terminal failure (has a kind)
│   │   └── RunStoppedError      a failure that stops the whole run, leaving it resumable
│   │       ├── AuthError        401/403 (exit 3)
│   │       ├── QuotaError       credit, balance or plan limit exhausted (exit 3)
│   │       └── ProviderUnavailableError  Retry-After above the cap, circuit breaker (exit 4)
├── StoreError                   run directory / per-model SQLite problems
├── DiskFullError                a write failed with ENOSPC/EDQUOT; the run stays resumable
└── AnalysisError                analysis could not be computed from a run directory
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class ErrorKind(StrEnum):
    """The paper's seven failure kinds (Table 14) plus ``quota`` (our extension, see
    docs/design/reliability.md, "Quota")."""

    NETWORK = "network"
    RATE_LIMIT = "rate_limit"
    SERVER_5XX = "server_5xx"
    AUTH = "auth"
    CONTENT_POLICY = "content_policy"
    BAD_REQUEST = "bad_request"
    UNKNOWN = "unknown"
    #: Our extension, after the paper's seven: credit, balance or plan limit exhausted (HTTP 402,
    #: Tavily 432/433, quota bodies). Not retried; it stops the run like an auth failure.
    QUOTA = "quota"


class OracleprotoError(Exception):
    """Base class of every error this package raises on purpose."""


class ConfigError(OracleprotoError):
    """Settings or environment are invalid; the message says which and how to fix it."""


@dataclass(frozen=True)
class DatasetProblem:
    """One validation problem of a source DB row (or of the metadata)."""

    row_id: str | None
    column: str
    reason: str

    def __str__(self) -> str:
        where = f"row {self.row_id!r}" if self.row_id is not None else "dataset"
        return f"{where}, column {self.column!r}: {self.reason}"


class DatasetError(OracleprotoError):
    """A source DB failed validation; ``problems`` lists every problem found."""

    def __init__(self, source: str, problems: list[DatasetProblem]) -> None:
        self.source = source
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{source}: {len(self.problems)} problem(s):\n{lines}")


class TransportError(OracleprotoError):
    """Base class of record/replay transport errors."""


class ReplayMissError(TransportError):
    """Replay mode found no recorded entry for a request."""


class CassetteIntegrityError(TransportError):
    """A cassette entry is corrupt, hand-edited or does not match its digest."""


class SampleContextError(TransportError):
    """A sampled (temperature > 0) main-LLM request carried no sample identity."""


class ProviderError(OracleprotoError):
    """Base class of provider-channel errors."""


class BrowsingBarrierError(ProviderError):
    """A request violated a send-time browsing barrier (paper Table 10)."""


class CallFailedError(ProviderError):
    """A logical call ended in a terminal failure of the given kind."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status_code: int | None = None,
        latency_ms: int | None = None,
        received_at: datetime | None = None,
    ) -> None:
        self.kind = kind
        self.status_code = status_code
        #: The message without the ``kind:`` prefix (for wrappers that add their own context).
        self.detail = message
        #: Latency and time of the call's final outcome (recorded under the record/replay cache);
        #: ``received_at`` stamps a sample that ends on this failure.
        self.latency_ms = latency_ms
        self.received_at = received_at
        super().__init__(f"{kind.value}: {message}")


class RunStoppedError(CallFailedError):
    """A call failure that no other sample can avoid: it stops the run, which stays resumable.

    ``channel`` names the provider channel (``llm``, ``search``, ``detector``) when known;
    ``remedy`` says what the user should do before resuming.
    """

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status_code: int | None = None,
        channel: str | None = None,
        remedy: str = "",
    ) -> None:
        super().__init__(kind, message, status_code=status_code)
        self.channel = channel
        self.remedy = remedy


class AuthError(RunStoppedError):
    """An authentication failure (HTTP 401/403); aborts the run, which stays resumable."""

    def __init__(
        self, message: str, *, status_code: int | None = None, channel: str | None = None, remedy: str = ""
    ) -> None:
        super().__init__(
            ErrorKind.AUTH, message, status_code=status_code, channel=channel, remedy=remedy or "fix the key"
        )


class QuotaError(RunStoppedError):
    """Credit, balance or plan limit exhausted; aborts the run, which stays resumable."""

    def __init__(
        self, message: str, *, status_code: int | None = None, channel: str | None = None, remedy: str = ""
    ) -> None:
        super().__init__(ErrorKind.QUOTA, message, status_code=status_code, channel=channel, remedy=remedy)


class ProviderUnavailableError(RunStoppedError):
    """A provider cannot serve this session (Retry-After above the cap, circuit breaker open)."""


class StoreError(OracleprotoError):
    """A run directory or per-model database is missing, malformed or inconsistent."""


class AnalysisError(OracleprotoError):
    """Metrics or tables could not be computed from a run directory."""


class DiskFullError(OracleprotoError):
    """A write failed because the disk (or quota) is full; the message says what to free."""

    def __init__(self, message: str, *, needed_bytes: int | None = None) -> None:
        self.needed_bytes = needed_bytes
        super().__init__(message)
