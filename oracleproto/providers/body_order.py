"""Request bodies in a harness profile's key order.

Key order is part of the bytes a provider receives (and of what a published recording holds), so
each channel writes its body members in the order its profile lists. A member the run sends but the
order does not list has no defined place: that is a configuration error, never a silent append.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from oracleproto.errors import ConfigError


def unlisted(present: Sequence[str], order: Sequence[str]) -> list[str]:
    """The names of ``present`` that ``order`` does not list (first-seen order)."""
    listed = set(order)
    return [name for name in present if name not in listed]


def unlisted_error(
    missing: Sequence[str], *, order_name: str, profile_name: str, why: str = ""
) -> ConfigError:
    """The error for body members a profile's key order does not place."""
    names = ", ".join(repr(name) for name in missing)
    plural = "s" if len(missing) > 1 else ""
    return ConfigError(
        f"harness profile {profile_name!r}: {order_name} does not list {names}, which this run "
        f"sends{why}; add the key{plural} to {order_name} at the place the harness writes "
        f"{'them' if plural else 'it'}"
    )


def ordered(
    members: Mapping[str, Any], order: Sequence[str], *, order_name: str, profile_name: str
) -> dict[str, Any]:
    """``members`` in ``order`` (names ``order`` lists but ``members`` lacks are skipped)."""
    missing = unlisted(list(members), order)
    if missing:
        raise unlisted_error(missing, order_name=order_name, profile_name=profile_name)
    return {name: members[name] for name in order if name in members}
