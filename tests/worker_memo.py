"""What the suite's per-worker memos share (tests/plot_memo.py, tests/cassette_memo.py).

Each memo is an object with an ``enabled`` switch that stands in for one product function for a
whole worker session; an environment variable set to ``0`` leaves the product function in place,
and a test carrying the memo's marker runs with the memo switched off.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, Protocol, TypeVar

import pytest


class Switchable(Protocol):
    enabled: bool


M = TypeVar("M", bound=Switchable)


def installed(memo: M, module: Any, attribute: str, env_var: str) -> Iterator[M]:
    """Body of a session fixture: ``memo`` replaces ``module.attribute`` unless ``env_var`` is ``0``."""
    if os.environ.get(env_var, "1") == "0":
        yield memo
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, attribute, memo)
        yield memo


def off_when_marked(request: pytest.FixtureRequest, memo: Switchable, marker: str) -> Iterator[None]:
    """Body of an autouse fixture: ``memo`` switched off for the duration of a test marked ``marker``."""
    if request.node.get_closest_marker(marker) is None:
        yield
        return
    memo.enabled = False
    try:
        yield
    finally:
        memo.enabled = True
