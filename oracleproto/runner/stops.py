"""The message and log reason of a run stopped by a ``RunStoppedError`` (auth, quota, unavailable,
an unknown model slug)."""

from __future__ import annotations

from oracleproto.errors import AuthError, ProviderUnavailableError, QuotaError, RunStoppedError
from oracleproto.ledger.errors import LedgerUnavailableError
from oracleproto.providers.model_not_found import ModelNotFoundError
from oracleproto.runner.spend_cap import SpendCapError
from oracleproto.runner.stopping import resumable, resume_arguments


def stop_reason(failure: RunStoppedError) -> str:
    """The ``run_aborted`` reason: ``auth``, ``quota``, ``provider_unavailable``, ``ledger_unavailable``,
    ``spend_cap`` or ``model_not_found``."""
    if isinstance(failure, SpendCapError):
        return "spend_cap"
    if isinstance(failure, ModelNotFoundError):
        return "model_not_found"
    if isinstance(failure, LedgerUnavailableError):
        return "ledger_unavailable"
    if isinstance(failure, ProviderUnavailableError):
        return "provider_unavailable"
    return failure.kind.value


def resumable_stop(failure: RunStoppedError, run_id: str) -> RunStoppedError:
    """The same failure, its message ending with what to do and the exact resume argument."""
    return with_resume_hint(failure, f"run {run_id}", resume_arguments(run_id))


def with_resume_hint(failure: RunStoppedError, what: str, resume: str) -> RunStoppedError:
    """The same failure with "<what> stopped and is resumable: <remedy>, then rerun with <resume>"."""
    shown = failure.detail.split("\nrun ", 1)[0]  # drop an inner hint (a refresh wraps a run)
    message = f"{shown}\n{resumable(what, again=resume, fix=failure.remedy or 'fix the cause')}"
    status, channel = failure.status_code, failure.channel
    if isinstance(failure, SpendCapError):
        return SpendCapError(message, remedy=failure.remedy)
    if isinstance(failure, AuthError):
        return AuthError(message, status_code=status, channel=channel, remedy=failure.remedy)
    if isinstance(failure, ModelNotFoundError):
        return ModelNotFoundError(
            message, model=failure.model, status_code=status, channel=channel, remedy=failure.remedy
        )
    if isinstance(failure, QuotaError):
        return QuotaError(message, status_code=status, channel=channel, remedy=failure.remedy)
    if isinstance(failure, LedgerUnavailableError):
        return LedgerUnavailableError(message, remedy=failure.remedy)
    if isinstance(failure, ProviderUnavailableError):
        return ProviderUnavailableError(
            failure.kind, message, status_code=status, channel=channel, remedy=failure.remedy
        )
    return RunStoppedError(failure.kind, message, status_code=status, channel=channel, remedy=failure.remedy)
