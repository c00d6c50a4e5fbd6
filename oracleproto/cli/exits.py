"""Exit statuses of the command line, in one place (README and docs/design/architecture.md list them)."""

from __future__ import annotations

from oracleproto.errors import ProviderUnavailableError, RunStoppedError

#: A check failed: a replay did not reproduce its recording, verify found a difference, a diff drifted.
EXIT_FAILED = 1
#: Bad input or an error the tool reports with one message (what, where, how to fix).
EXIT_INVALID = 2
#: A run or refresh aborted by an authentication failure (401/403) or exhausted credit/quota; resumable.
EXIT_AUTH = 3
#: A run or refresh stopped because a provider cannot serve it now (a Retry-After above
#: ``RETRY_AFTER_MAX_S``, or the circuit breaker), or a shard's ledger (``LEDGER_URL``) stopped
#: answering; it is resumable.
EXIT_UNAVAILABLE = 4
#: A run stopped at ``--max-cost``: this session's spend reached the cap (with ``LEDGER_URL``: every
#: shard's spend together would pass it); it is resumable.
EXIT_SPEND_CAP = 5
#: The user interrupted a run or refresh (Ctrl-C, as shells report SIGINT); it is resumable.
EXIT_INTERRUPTED = 130
#: An internal error (a bug): one line asks for a report; the traceback went to a log file.
EXIT_INTERNAL = 70
#: SIGTERM stopped a run or refresh (docker stop, a cancelled CI job, a scheduler); it is resumable.
EXIT_TERMINATED = 143
#: A recording finished but more of its samples ended in a call error than ``--allow-errors``
#: allows (default none): the run is complete on disk, and ``--run-id`` redoes exactly those samples.
EXIT_SAMPLE_ERRORS = 6


def stopped_exit_status(exc: RunStoppedError) -> int:
    """The exit status of a run stopped resumably: 5 at --max-cost, 4 when a provider is unavailable,
    2 for a model slug the provider does not serve (a configuration error), else 3."""
    # Imported here: every command imports this module at start-up, few ever stop at a cap.
    from oracleproto.providers.model_not_found import ModelNotFoundError
    from oracleproto.runner.spend_cap import SpendCapError

    if isinstance(exc, SpendCapError):
        return EXIT_SPEND_CAP
    if isinstance(exc, ModelNotFoundError):
        return EXIT_INVALID
    return EXIT_UNAVAILABLE if isinstance(exc, ProviderUnavailableError) else EXIT_AUTH
