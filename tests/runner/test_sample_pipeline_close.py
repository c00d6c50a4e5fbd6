"""A run's pipeline releases its cache (and so the recording's live connections) even when releasing
its channels fails or is cancelled on the way."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from oracleproto.runner.sample_pipeline import SamplePipeline


class _Channels:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def aclose(self) -> None:
        raise self.error


class _Cache:
    closed = False

    async def aclose(self) -> None:
        self.closed = True


@pytest.mark.parametrize("error", [OSError("socket already gone"), asyncio.CancelledError()])
async def test_the_cache_is_closed_when_closing_the_channels_fails(error: BaseException) -> None:
    cache = _Cache()
    fields: dict[str, Any] = dict.fromkeys(
        ("monitor", "in_flight", "questions", "settings", "clock", "identity")
    )
    pipeline = SamplePipeline(cache=cast(Any, cache), channels=cast(Any, _Channels(error)), **fields)
    with pytest.raises(type(error)):
        await pipeline.aclose()
    assert cache.closed
