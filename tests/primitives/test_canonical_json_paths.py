"""``canonical_json`` has a fast path on CPython's private ``_json.make_encoder`` and a fallback on
``json.dumps``; both write the same text, and the fast path is dropped when the private encoder is
missing or does not behave as called."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.primitives import hashing

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.sampled_from([math.inf, -math.inf])
    | st.text()
)
JSON_VALUES = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=25,
)


def _reference(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_the_fast_path_and_the_fallback_write_json_dumps_text(value: Any) -> None:
    assert hashing.make_encoder is not None  # CPython: the fast path is on
    fast = hashing.canonical_json(value)
    long_text = hashing.canonical_json_long_text(value)
    saved = hashing.make_encoder
    hashing.make_encoder = None  # the fallback, as on a Python without a usable _json
    try:
        fallback = hashing.canonical_json(value)
        fallback_long = hashing.canonical_json_long_text(value)
    finally:
        hashing.make_encoder = saved
    assert fast == fallback == long_text == fallback_long == _reference(value)


def test_both_paths_refuse_what_json_refuses_and_use_default() -> None:
    saved = hashing.make_encoder
    try:
        for encoder in (saved, None):
            hashing.make_encoder = encoder
            with pytest.raises(TypeError, match="not JSON serializable"):
                hashing.canonical_json({"a": object()})
            assert hashing.canonical_json({"s": {3, 1}}, default=sorted) == '{"s":[1,3]}'
    finally:
        hashing.make_encoder = saved


def test_a_private_encoder_that_changed_is_not_used() -> None:
    def other_signature(*args: Any) -> Any:
        raise TypeError("make_encoder() takes 10 positional arguments")

    def other_text(*args: Any) -> Any:
        return lambda value, level: iter([json.dumps(value)])  # spaces, unsorted, ASCII-escaped

    escape = json.encoder.py_encode_basestring
    assert hashing._usable(other_signature, escape) is False
    assert hashing._usable(other_text, escape) is False
    import _json

    assert hashing._usable(_json.make_encoder, _json.encode_basestring) is True


def test_without_the_private_module_the_fallback_is_chosen() -> None:
    program = (
        "import sys; sys.modules['_json'] = None\n"
        "from oracleproto.primitives import hashing as h\n"
        "assert h.make_encoder is None\n"
        "print(h.canonical_json({'b': [1, 'é'], 'a': float('nan')}))"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == '{"a":NaN,"b":[1,"é"]}\n'
