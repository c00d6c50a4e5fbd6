"""The first difference between our body and the captured one, one test per kind."""

from __future__ import annotations

import pytest

from oracleproto.conformance.compare import Difference, compare_bodies
from oracleproto.conformance.mask import mask_api_key, redact_header


def _diff(ours: bytes, captured: bytes) -> Difference:
    found = compare_bodies(ours, captured)
    assert found is not None
    assert found.summary().isprintable()
    return found


def test_identical_bodies_and_bodies_differing_only_in_the_key_are_equal() -> None:
    assert compare_bodies(b'{"a":1}', b'{"a":1}') is None
    assert (
        compare_bodies(b'{"api_key":"tvly-one","query":"q"}', b'{"api_key":"tvly-two","query":"q"}') is None
    )
    assert compare_bodies(b"plain", b"plain") is None


def test_key_order_is_a_difference_with_both_orders() -> None:
    ours = b'{"model":"m","messages":[{"role":"user","content":"x"}]}'
    captured = b'{"model":"m","messages":[{"content":"x","role":"user"}]}'
    found = _diff(ours, captured)
    assert (found.kind, found.path) == ("json", "messages[0]")
    assert found.detail == "keys [role, content] vs [content, role]"


def test_a_value_difference_comes_before_a_later_key_difference() -> None:
    found = _diff(b'{"model":"a","x":1}', b'{"model":"b","y":1}')
    assert found.summary() == 'model: at character 0: "a" vs "b" (lengths 1 vs 1)'


def test_missing_and_duplicate_keys() -> None:
    assert _diff(b'{"a":1}', b'{"a":1,"b":2}').summary() == "(body): keys [a] vs [a, b]"
    assert _diff(b'{"a":1,"a":1}', b'{"a":1}').summary() == "(body): keys [a, a] vs [a]"


def test_lists_differ_by_index_then_length() -> None:
    assert _diff(b'{"m":[1,2]}', b'{"m":[1,3]}').summary() == "m[1]: 2 vs 3"
    assert _diff(b'{"m":[1,2]}', b'{"m":[1,2,3]}').summary() == "m: length 2 vs 3"


def test_types_and_scalars() -> None:
    assert _diff(b'{"t":0.7}', b'{"t":"0.7"}').summary() == 't: number 0.7 vs string "0.7"'
    assert _diff(b'{"t":true}', b'{"t":1}').summary() == "t: boolean true vs number 1"
    assert _diff(b'{"t":null}', b'{"t":[1]}').summary() == "t: null null vs array of 1"
    assert _diff(b'{"t":0.7}', b'{"t":0.5}').summary() == "t: 0.7 vs 0.5"


def test_a_string_difference_shows_context_on_both_sides() -> None:
    prefix = "p" * 100
    ours = f'{{"messages":[{{"content":"{prefix}Alpha tail"}}]}}'.encode()
    captured = f'{{"messages":[{{"content":"{prefix}Beta tail"}}]}}'.encode()
    found = _diff(ours, captured)
    assert found.path == "messages[0].content" and found.offset == 100
    assert (
        found.detail
        == f'at character 100: "…{"p" * 40}Alpha tail" vs "…{"p" * 40}Beta tail" (lengths 110 vs 109)'
    )


def test_strings_with_control_bidi_and_lone_surrogates_are_escaped() -> None:
    found = _diff(b'{"c":"a\\n\\u202e\\u001b[2J\\ud800x"}', b'{"c":"a\\n\\u202e\\u001b[2J\\ud800y"}')
    shown = '"a<LF><U+202E><U+001B>[2J<U+D800>{}"'
    assert found.detail == f"at character 8: {shown.format('x')} vs {shown.format('y')} (lengths 9 vs 9)"


def test_a_non_identifier_key_is_quoted_in_the_path() -> None:
    found = _diff(b'{"a b":{"\\u202e":1}}', b'{"a b":{"\\u202e":2}}')
    assert (found.path, found.detail) == ('["a b"]["<U+202E>"]', "1 vs 2")


@pytest.mark.parametrize(
    ("ours", "captured", "expected"),
    [
        (
            b'{"a": 1, "b": 2}',
            b'{"a":1,"b":2}',
            'at byte 5: "{"a": 1, "b": 2}" vs "{"a":1,"b":2}" (sizes 16 vs 13)',
        ),
        (
            '{"q":"é"}'.encode(),
            b'{"q":"\\u00e9"}',
            'at byte 6: "{"q":"é"}" vs "{"q":"\\u00e9"}" (sizes 10 vs 14)',
        ),
        (b'{"t":1}', b'{"t":1.0}', 'at byte 6: "{"t":1}" vs "{"t":1.0}" (sizes 7 vs 9)'),
    ],
)
def test_equal_json_with_different_bytes_is_a_serialisation_difference(
    ours: bytes, captured: bytes, expected: str
) -> None:
    found = _diff(ours, captured)
    assert (found.kind, found.path, found.detail) == ("serialisation", "", expected)


def test_serialisation_context_is_cut_at_whole_characters() -> None:
    ours = ('{"q":"' + "é" * 30 + '", "z":1}').encode()
    captured = ('{"q":"' + "é" * 30 + '","z":1}').encode()
    found = _diff(ours, captured)
    assert found.kind == "serialisation" and "<0x" not in found.detail


def test_non_json_bodies_compare_as_bytes_and_show_invalid_bytes() -> None:
    found = _diff(b"abc\xff\x00rest", b"abc\xfe\x00rest")
    assert (found.kind, found.offset) == ("bytes", 3)
    assert found.detail == 'at byte 3: "abc<0xFF><U+0000>rest" vs "abc<0xFE><U+0000>rest" (sizes 9 vs 9)'
    assert _diff(b"abc", b"abcd").detail == 'at byte 3: "abc" vs "abcd" (sizes 3 vs 4)'


def test_hostile_nesting_falls_back_to_bytes() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    found = _diff(deep, deep[:-1])
    assert found.kind == "bytes"


def test_mask_rewrites_only_the_top_level_api_key_token() -> None:
    body = b'{ "api_key" : "sk-1",\t"q":"\xff raw \x01", "n":{"api_key":"keep"}, "api_key":"again"}'
    assert mask_api_key(body) == (
        b'{ "api_key" : "<redacted>",\t"q":"\xff raw \x01", "n":{"api_key":"keep"}, "api_key":"<redacted>"}'
    )
    assert mask_api_key(b'{"api\\u005fkey":"sk"}') == b'{"api\\u005fkey":"<redacted>"}'
    assert mask_api_key(b'{"api_key":5}') == b'{"api_key":5}'
    assert mask_api_key(b'[{"api_key":"x"}]') == b'[{"api_key":"x"}]'
    # A body that breaks off still loses the key it shows before the break.
    assert mask_api_key(b'{"api_key":"sk-1","query":') == b'{"api_key":"<redacted>","query":'


def test_header_redaction_keeps_the_scheme() -> None:
    assert redact_header("Authorization", "Bearer sk-1") == "Bearer <redacted>"
    assert redact_header("authorization", "sk-1") == "<redacted>"
    assert redact_header("X-Api-Key", "k") == "<redacted>"
    assert redact_header("Content-Type", "application/json") == "application/json"
