"""Run many transfers at once, with a bound on the bytes held in memory.

Objects are sent in one PUT each (a conditional PUT cannot be multipart), so an upload holds its
object's bytes; the budget keeps ``jobs`` parallel uploads of large DBs from holding them all at
once. An object larger than the budget runs alone.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: Bytes held by uploads in flight at most (unless one object alone is larger).
MEMORY_BUDGET = 512 << 20


class ByteBudget:
    """A counting semaphore over bytes."""

    def __init__(self, limit: int = MEMORY_BUDGET) -> None:
        self._limit = limit
        self._used = 0
        self._cond = threading.Condition()

    def acquire(self, size: int) -> None:
        with self._cond:
            # An object larger than the whole budget waits for an empty budget, then runs alone.
            self._cond.wait_for(lambda: self._used == 0 or self._used + size <= self._limit)
            self._used += size

    def release(self, size: int) -> None:
        with self._cond:
            self._used -= size
            self._cond.notify_all()


def run_all(items: Iterable[T], work: Callable[[T], R], jobs: int) -> list[R]:
    """``work`` over every item on ``jobs`` threads; the first failure is raised once the rest stop.

    obstore releases the GIL while a request is on the wire, so threads overlap the transfers.
    """
    todo = list(items)
    if jobs <= 1 or len(todo) <= 1:
        return [work(item) for item in todo]
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="store") as pool:
        futures = [pool.submit(work, item) for item in todo]
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = next((f for f in done if f.exception() is not None), None)
        if failed is not None:
            for future in futures:
                future.cancel()
            exc = failed.exception()
            assert exc is not None
            raise exc
        return [f.result() for f in futures]
