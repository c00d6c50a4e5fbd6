"""The suite's workers take what collection built out of the collector's full passes (conftest.py)."""

from __future__ import annotations

import gc

import pytest


def test_collection_objects_are_frozen(request: pytest.FixtureRequest) -> None:
    assert gc.get_freeze_count() > 10_000
    # The session's test items were built during collection, so they are among the frozen objects:
    # a collection only reaches objects it tracks, and frozen ones are not.
    node = request.node
    assert not any(tracked is node for tracked in gc.get_objects())
