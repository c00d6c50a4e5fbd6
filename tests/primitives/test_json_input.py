"""``load_json``: JSON nested too deeply is a decode error like any other text that is not JSON."""

from __future__ import annotations

import json

import pytest

from oracleproto.primitives.json_input import load_json


@pytest.mark.parametrize("data", ["[" * 100_000, b'{"a":' * 100_000])
def test_nesting_too_deep_is_a_json_decode_error(data: str | bytes) -> None:
    with pytest.raises(json.JSONDecodeError, match="nested too deeply to read") as caught:
        load_json(data)
    assert isinstance(caught.value, ValueError) and caught.value.__cause__ is None


def test_json_is_read_as_json_loads_reads_it() -> None:
    assert load_json(b'{"a": [1, 2.5, "\\u00e9", null]}') == {"a": [1, 2.5, "é", None]}
    assert load_json("[" * 100 + "]" * 100) == json.loads("[" * 100 + "]" * 100)
    with pytest.raises(json.JSONDecodeError, match="Expecting value"):
        load_json("[1,")
