"""``oracleproto.verify``'s lazy public names (PEP 562), called directly: each name resolves to the
object its module defines, an unknown name is an AttributeError, ``dir()`` lists every name.

A fresh import (tests/test_lazy_imports.py, in a child process) shows the names load lazily; here
the package's ``__getattr__`` and ``__dir__`` run in this process, whatever is already cached.
"""

from __future__ import annotations

import importlib

import pytest

from oracleproto import verify


@pytest.mark.parametrize("name", sorted(verify.__all__))
def test_each_public_name_is_its_modules_object(name: str) -> None:
    module = importlib.import_module(verify._EXPORTS[name])
    assert verify.__getattr__(name) is getattr(module, name)


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    message = r"module 'oracleproto\.verify' has no attribute 'verify_nothing'"
    with pytest.raises(AttributeError, match=message):
        verify.__getattr__("verify_nothing")


def test_dir_lists_every_public_name_sorted() -> None:
    listed = verify.__dir__()
    assert set(verify.__all__) <= set(listed) and listed == sorted(listed)
    assert set(verify.__all__) == set(verify._EXPORTS)
