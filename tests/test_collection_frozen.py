"""The suite's workers take what collection built out of the collector's full passes (conftest.py)."""

from __future__ import annotations

import gc

import pytest


def test_collection_objects_are_frozen(request: pytest.FixtureRequest) -> None:
    assert gc.get_freeze_count() > 10_000
    # This test's item was built during collection, so it is frozen: ``gc.get_objects`` lists the
    # collector's three generations, not the frozen objects.
    node = request.node
    assert not any(tracked is node for tracked in gc.get_objects())
