"""PEP 562 lazy re-exports: a package names its public API without importing it up front.

A package ``__init__`` keeps a table ``name -> defining module`` and forwards its module-level
``__getattr__`` here, so ``import oracleproto`` costs only what a caller then touches (start-up
of every CLI command, issue 18). The names stay importable (``from pkg import X``), listed in
``__all__``, and visible to the type checker through ``if TYPE_CHECKING:`` imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from typing import Any


def load_export(package: str, exports: Mapping[str, str], name: str) -> Any:
    """Import ``name`` from its module in ``exports``, cache it on ``package``, and return it."""
    module_name = exports.get(name)
    if module_name is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    # Cached as a plain attribute: the next access does not come back through __getattr__.
    setattr(sys.modules[package], name, value)
    return value


def export_dir(module_globals: Mapping[str, Any], exports: Mapping[str, str]) -> list[str]:
    """``dir()`` of a lazy package: what is already bound plus every lazy name."""
    return sorted(set(module_globals) | set(exports))
