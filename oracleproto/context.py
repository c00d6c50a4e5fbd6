"""Harness context that travels with a request inside the process, never to a provider.

Two pieces of context ride on ``contextvars`` so that they survive ``asyncio`` task
boundaries and need no extra parameters through SDKs such as ``tavily-python``:

* ``CallContext`` — who is asking: (virtual model slug, question id, sample index, step).
  The record/replay transport makes it part of the cache key for the main-LLM channel,
  and names it in replay-miss errors for every channel.
* ``LogicalCall`` — one logical call and its attempts. Providers retry inside one
  ``logical_call()`` block and set ``attempt`` before each send; the transport keys the
  logical call (not the attempt), keeps attempts as audit history, and advances the
  per-trajectory occurrence counter only on attempt 0.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class CallContext:
    """Identity of the sample on whose behalf a request is made."""

    model: str
    question_id: str
    sample: int
    step: int = 0

    def at_step(self, step: int) -> CallContext:
        """The same sample at another step."""
        return replace(self, step=step)


@dataclass
class LogicalCall:
    """Mutable attempt counter of one logical call (one provider-level request)."""

    attempt: int = 0
    attempts: list[dict[str, object]] = field(default_factory=list)
    #: Called once when the ``logical_call()`` block exits (the transport releases waiters).
    on_finish: list[Callable[[], None]] = field(default_factory=list)


_call_context: ContextVar[CallContext | None] = ContextVar("oracleproto_call_context", default=None)
_logical_call: ContextVar[LogicalCall | None] = ContextVar("oracleproto_logical_call", default=None)


def current_call_context() -> CallContext | None:
    """The sample identity of the running task, if the harness set one."""
    return _call_context.get()


@contextmanager
def call_context(ctx: CallContext) -> Iterator[CallContext]:
    """Run the block on behalf of ``ctx``."""
    token = _call_context.set(ctx)
    try:
        yield ctx
    finally:
        _call_context.reset(token)


def current_logical_call() -> LogicalCall | None:
    """The logical call being attempted by the running task, if any."""
    return _logical_call.get()


@contextmanager
def logical_call() -> Iterator[LogicalCall]:
    """Group the retries of one provider request into one logical call."""
    call = LogicalCall()
    token = _logical_call.set(call)
    try:
        yield call
    finally:
        _logical_call.reset(token)
        for callback in call.on_finish:
            callback()
