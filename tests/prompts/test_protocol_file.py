"""PROTOCOLS_FILE: loading (JSON, TOML), every refusal, literal placeholders, layout and fingerprints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oracleproto.errors import ConfigError
from oracleproto.primitives.hashing import canonical_json, sha256_16
from oracleproto.prompts import (
    BELIEF_PROTOCOL_TEXT,
    BUDGET_FOOTER_TEXT,
    BUILTIN_LAYOUT,
    REFLECTION_PROTOCOL_TEXT,
    ProtocolBlock,
    ProtocolLayout,
    RuntimeProtocols,
    load_protocol_file,
    render_prompt,
    render_template,
)
from oracleproto.prompts.text_file import MAX_TEXT_FILE_BYTES

from .conftest import TEMPLATES, make_question

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
QUESTION = make_question("yes_no", ("Yes", "No"))

TOML = '''\
separator = "\\n\\n---\\n"
suffix = "\\n"

[[blocks]]
name = "budget"
text = "Rounds: {{max_steps}}; searches: {{max_search_calls}}; braces {stay} and {{ spaced }} no."

[[blocks]]
name = "reflection"
text = """Think in {steps} — JSON {"a": 1} stays."""
'''


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def as_json(data: object) -> str:
    return json.dumps(data)


def refusal(path: Path) -> str:
    with pytest.raises(ConfigError) as refused:
        load_protocol_file(path)
    return str(refused.value)


# --- loading ---------------------------------------------------------------------------------


def test_toml_and_json_give_the_same_layout(tmp_path: Path) -> None:
    data = {
        "separator": "\n\n---\n",
        "suffix": "\n",
        "blocks": [
            {"name": "budget", "text": "At most {{max_steps}} rounds."},
            {"name": "belief", "text": 'Give <belief>{"A": 0.5}</belief>.'},
        ],
    }
    from_json = load_protocol_file(write(tmp_path, "p.json", as_json(data)))
    toml = (
        'separator = "\\n\\n---\\n"\nsuffix = "\\n"\n'
        '[[blocks]]\nname = "budget"\ntext = "At most {{max_steps}} rounds."\n'
        '[[blocks]]\nname = "belief"\ntext = \'Give <belief>{"A": 0.5}</belief>.\'\n'
    )
    from_toml = load_protocol_file(write(tmp_path, "p.TOML", toml))
    assert from_json == from_toml
    assert from_json.names == ("budget", "belief")
    assert from_json.separator == "\n\n---\n" and from_json.suffix == "\n"


def test_separator_and_suffix_default_to_a_blank_line_and_nothing(tmp_path: Path) -> None:
    layout = load_protocol_file(
        write(tmp_path, "p.json", as_json({"blocks": [{"name": "budget", "text": "B"}]}))
    )
    assert (layout.separator, layout.suffix) == ("\n\n", "")


def test_an_empty_block_list_appends_only_the_suffix(tmp_path: Path) -> None:
    layout = load_protocol_file(write(tmp_path, "p.json", as_json({"blocks": [], "suffix": "\n"})))
    protocols = RuntimeProtocols.from_layout(layout, 6, 4)
    assert (protocols.reflection, protocols.belief, protocols.budget) == (False, False, None)
    assert (
        render_prompt(QUESTION, TEMPLATES, protocols=protocols) == render_template(QUESTION, TEMPLATES) + "\n"
    )


def test_a_utf8_bom_is_not_part_of_the_text(tmp_path: Path) -> None:
    body = as_json({"blocks": [{"name": "budget", "text": "B"}]})
    assert load_protocol_file(write(tmp_path, "p.json", b"\xef\xbb\xbf" + body.encode())).names == ("budget",)


# --- rendering --------------------------------------------------------------------------------


def test_placeholders_are_literal_and_other_braces_are_data(tmp_path: Path) -> None:
    path = write(tmp_path, "p.toml", TOML.replace(" and {{ spaced }} no", ""))
    protocols = RuntimeProtocols.from_layout(load_protocol_file(path), 12, 8)
    prompt = render_prompt(QUESTION, TEMPLATES, protocols=protocols)
    bare = render_template(QUESTION, TEMPLATES)
    assert prompt == (
        bare
        + "\n\n---\nRounds: 12; searches: 8; braces {stay}."
        + '\n\n---\nThink in {steps} — JSON {"a": 1} stays.'
        + "\n"
    )


def test_a_value_is_never_expanded_again() -> None:
    layout = ProtocolLayout((ProtocolBlock("budget", "{{max_steps}}{{max_search_calls}}"),))
    protocols = RuntimeProtocols.from_layout(layout, 1, 0)
    assert protocols.blocks() == ["10"]


def test_placeholders_work_in_any_block_even_with_the_footer_off() -> None:
    layout = ProtocolLayout((ProtocolBlock("reflection", "Plan for {{max_steps}} rounds."),))
    protocols = RuntimeProtocols.from_layout(layout, 9, 3)
    assert protocols.budget is None
    assert protocols.blocks() == ["Plan for 9 rounds."]
    assert protocols.with_search_calls(1).blocks() == ["Plan for 9 rounds."]
    # The reflection fingerprint is of the unformatted text: one value per run, whatever T and C.
    assert protocols.fingerprints()["reflection_protocol_hash"] == sha256_16("Plan for {{max_steps}} rounds.")


def test_a_grid_cell_announces_its_own_search_cap(tmp_path: Path) -> None:
    path = write(
        tmp_path, "p.json", as_json({"blocks": [{"name": "budget", "text": "C={{max_search_calls}}"}]})
    )
    protocols = RuntimeProtocols.from_layout(load_protocol_file(path), 6, 4)
    assert protocols.with_search_calls(8).blocks() == ["C=8"]
    assert protocols.with_search_calls(8).budget_footer_text == "C=8"


def test_the_layouts_order_is_the_append_order() -> None:
    layout = ProtocolLayout(
        (ProtocolBlock("budget", BUDGET_FOOTER_TEXT), ProtocolBlock("reflection", REFLECTION_PROTOCOL_TEXT))
    )
    blocks = RuntimeProtocols.from_layout(layout, 6, 4).blocks()
    default = RuntimeProtocols.default(6, 4).blocks()
    assert blocks == list(reversed(default))


# --- fingerprints -----------------------------------------------------------------------------


def test_the_built_in_layout_keeps_every_fingerprint_and_has_no_layout_fingerprint() -> None:
    assert BUILTIN_LAYOUT.is_builtin
    assert RuntimeProtocols.all(6, 4).layout_fingerprint() is None
    prints = RuntimeProtocols.all(6, 4).fingerprints()
    assert prints["reflection_protocol_hash"] == sha256_16(REFLECTION_PROTOCOL_TEXT)
    assert prints["belief_protocol_hash"] == sha256_16(BELIEF_PROTOCOL_TEXT)


def test_the_built_in_fingerprints_are_pinned() -> None:
    # Recorded runs (the published demo's manifest among them) carry these: they must not move.
    assert RuntimeProtocols.all(6, 4).fingerprints() == {
        "reflection_protocol_hash": "b926a4f8d7ac42ff",
        "belief_protocol_hash": "4854e37a7452d6c0",
        "budget_footer_hash": "e9b9576bc9d76a94",
    }


def test_a_file_with_the_built_in_texts_in_order_is_the_built_in_layout(tmp_path: Path) -> None:
    data = {
        "blocks": [
            {"name": "reflection", "text": REFLECTION_PROTOCOL_TEXT},
            {"name": "budget", "text": BUDGET_FOOTER_TEXT},
        ]
    }
    protocols = RuntimeProtocols.from_layout(
        load_protocol_file(write(tmp_path, "p.json", as_json(data))), 6, 4
    )
    assert protocols.layout.is_builtin and protocols.layout_fingerprint() is None
    assert protocols.blocks() == RuntimeProtocols.default(6, 4).blocks()
    assert protocols.fingerprints() == RuntimeProtocols.default(6, 4).fingerprints()


@pytest.mark.parametrize(
    "change",
    [
        {"separator": "\n"},
        {"suffix": "\n"},
        {
            "blocks": [
                {"name": "budget", "text": BUDGET_FOOTER_TEXT},
                {"name": "reflection", "text": REFLECTION_PROTOCOL_TEXT},
            ]
        },
        {
            "blocks": [
                {"name": "reflection", "text": REFLECTION_PROTOCOL_TEXT + " "},
                {"name": "budget", "text": BUDGET_FOOTER_TEXT},
            ]
        },
    ],
    ids=["separator", "suffix", "order", "text"],
)
def test_separator_suffix_order_and_text_each_change_the_layout_fingerprint(
    tmp_path: Path, change: dict[str, object]
) -> None:
    base = {
        "blocks": [
            {"name": "reflection", "text": REFLECTION_PROTOCOL_TEXT},
            {"name": "budget", "text": BUDGET_FOOTER_TEXT},
        ]
    }
    layout = load_protocol_file(write(tmp_path, "p.json", as_json({**base, **change})))
    assert not layout.is_builtin
    full = {"separator": "\n\n", "suffix": "", **base, **change}
    assert layout.fingerprint() == sha256_16(canonical_json(full))
    assert RuntimeProtocols.from_layout(layout, 6, 4).layout_fingerprint() == layout.fingerprint()


# --- refusals ---------------------------------------------------------------------------------


def test_a_missing_file(tmp_path: Path) -> None:
    message = refusal(tmp_path / "absent.toml")
    assert f"PROTOCOLS_FILE {tmp_path / 'absent.toml'}: no such file" in message
    assert "unset PROTOCOLS_FILE" in message


def test_a_directory(tmp_path: Path) -> None:
    (tmp_path / "d.json").mkdir()
    assert "d.json: is a directory; point PROTOCOLS_FILE at a file" in refusal(tmp_path / "d.json")


@pytest.mark.parametrize("name", ["p.yaml", "p.txt", "protocols"])
def test_an_unknown_suffix(tmp_path: Path, name: str) -> None:
    message = refusal(write(tmp_path, name, "{}"))
    assert "unknown format" in message and "name the file *.json or *.toml" in message


def test_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    message = refusal(write(tmp_path, "p.toml", b'[[blocks]]\nname = "budget"\ntext = "caf\xe9"\n'))
    assert "p.toml: not UTF-8 text: byte 0xe9 at offset 38 (line 3); re-save the file as UTF-8" in message


def test_a_file_over_the_size_bound(tmp_path: Path) -> None:
    path = write(tmp_path, "p.json", b" " * (MAX_TEXT_FILE_BYTES + 1))
    assert f"more than the {MAX_TEXT_FILE_BYTES} bytes allowed" in refusal(path)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("p.json", '{"blocks": [', "not valid JSON: Expecting value at line 1, column 13; fix the syntax"),
        ("p.json", "", "not valid JSON: Expecting value at line 1, column 1"),
        ("p.json", '{"blocks": [], "blocks": []}', "the key 'blocks' appears twice in one object; keep one"),
        ("p.json", "[" * 100_000 + "]" * 100_000, "not valid JSON"),
        ("p.toml", "[[blocks]]\nname = budget\n", "not valid TOML: Invalid value (at line 2, column 8)"),
        ("p.toml", 'suffix = "a"\nsuffix = "b"\n', "not valid TOML"),
    ],
    ids=[
        "json-truncated",
        "json-empty",
        "json-duplicate-key",
        "json-deep",
        "toml-bare-word",
        "toml-duplicate",
    ],
)
def test_bad_syntax(tmp_path: Path, name: str, content: str, message: str) -> None:
    text = refusal(write(tmp_path, name, content))
    assert f"PROTOCOLS_FILE {tmp_path / name}: " in text
    assert message in text


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "the top level must be an object (JSON) or a table (TOML), got list"),
        ({}, "no 'blocks' list; add one {name, text} entry per protocol to append"),
        ({"blocks": {"name": "budget"}}, "'blocks' must be a list, got dict"),
        ({"blocks": [], "seperator": "x"}, "unknown key(s) 'seperator'; allowed: blocks, separator, suffix"),
        ({"blocks": ["budget"]}, "block #1 must be an object with 'name' and 'text', got str"),
        ({"blocks": [{"text": "x"}]}, "block #1 has no 'name'; use one of reflection, belief, budget"),
        ({"blocks": [{"name": "footer", "text": "x"}]}, "block #1: unknown block name 'footer'; use one of"),
        (
            {"blocks": [{"name": "budget", "text": "a"}, {"name": "budget", "text": "b"}]},
            "block #2 (budget): duplicate block, already block #1; list each block once",
        ),
        (
            {"blocks": [{"name": "belief"}]},
            "block #1 (belief) has no 'text'; write the text, or leave the block out",
        ),
        ({"blocks": [{"name": "belief", "text": 3}]}, "block #1 (belief): 'text' must be a string, got int"),
        ({"blocks": [{"name": "belief", "text": " \n"}]}, "block #1 (belief): 'text' is empty"),
        (
            {"blocks": [{"name": "belief", "text": "x", "title": "y"}]},
            "block #1 (belief): unknown key(s) 'title'; allowed: name, text",
        ),
        (
            {"blocks": [{"name": "budget", "text": "ok\n{{foo}} and {{max_steps}}"}]},
            "block #1 (budget): unknown placeholder {{foo}} (line 2 of its text); the only placeholders "
            "are {{max_steps}} and {{max_search_calls}}",
        ),
        ({"blocks": [{"name": "budget", "text": "{{ max_steps }}"}]}, "unknown placeholder {{ max_steps }}"),
        ({"blocks": [{"name": "budget", "text": "{{MAX_STEPS}}"}]}, "unknown placeholder {{MAX_STEPS}}"),
        ({"blocks": [], "separator": 2}, "'separator' must be a string, got int"),
        ({"blocks": [], "suffix": ["\n"]}, "'suffix' must be a string, got list"),
        (
            {"blocks": [], "suffix": "{{max_steps}}"},
            "'suffix' holds {{max_steps}}; placeholders are replaced only in block texts",
        ),
    ],
    ids=lambda v: str(v)[:48],
)
def test_invalid_content_is_refused_by_name(tmp_path: Path, data: object, message: str) -> None:
    text = refusal(write(tmp_path, "p.json", as_json(data)))
    assert f"PROTOCOLS_FILE {tmp_path / 'p.json'}" in text
    assert message in text
    assert "Traceback" not in text


def test_every_problem_is_listed_at_once(tmp_path: Path) -> None:
    data = {"blocks": [{"name": "footer", "text": "x"}, {"name": "budget", "text": "{{foo}}"}], "extra": 1}
    lines = [
        line
        for line in refusal(write(tmp_path, "p.json", as_json(data))).splitlines()
        if line.startswith("  - ")
    ]
    assert len(lines) == 3


def test_a_switched_on_block_needs_a_text_in_the_layout() -> None:
    layout = ProtocolLayout((ProtocolBlock("budget", "B"),))
    with pytest.raises(ConfigError, match="belief switched on, but the protocol layout has no belief block"):
        RuntimeProtocols(belief=True, layout=layout)


# --- the shipped examples -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["protocols-minimal.toml", "protocols-budget-first.json"])
def test_each_shipped_example_loads_and_renders(name: str) -> None:
    layout = load_protocol_file(EXAMPLES / name)
    assert not layout.is_builtin
    protocols = RuntimeProtocols.from_layout(layout, 12, 8)
    prompt = render_prompt(QUESTION, TEMPLATES, protocols=protocols)
    assert prompt.startswith(render_template(QUESTION, TEMPLATES) + layout.separator)
    assert prompt.endswith(layout.suffix)
    assert "{{" not in prompt
    assert "12" in (protocols.budget_footer_text or "") and "8" in (protocols.budget_footer_text or "")
    for text in protocols.blocks():
        assert text in prompt
    # Our own wording, not the built-in texts.
    assert REFLECTION_PROTOCOL_TEXT not in prompt and BELIEF_PROTOCOL_TEXT not in prompt


def test_the_budget_first_example_puts_the_budget_first_with_every_block() -> None:
    layout = load_protocol_file(EXAMPLES / "protocols-budget-first.json")
    assert layout.names == ("budget", "reflection", "belief")
    assert load_protocol_file(EXAMPLES / "protocols-minimal.toml").names == ("budget",)
