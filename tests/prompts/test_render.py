"""Renderer R on hand-written templates: every field, every question type, every error."""

from __future__ import annotations

import pytest

from oracleproto.dataset.models import TEMPLATE_KEYS, PromptTemplates
from oracleproto.errors import DatasetError
from oracleproto.primitives.hashing import sha256_hex
from oracleproto.prompts import (
    RuntimeProtocols,
    outcomes_block,
    output_format,
    prompt_templates_hash,
    render_prompt,
    render_template,
)
from oracleproto.prompts.render import templates_as_recorded

from .conftest import TEMPLATES, make_question


def test_yes_no_render_is_exact() -> None:
    question = make_question("yes_no", ("Yes", "No"))
    assert render_prompt(question, TEMPLATES) == (
        'ROLE. Event: "Will the fictional Lake Vell ferry resume service? (by 2031-04-05)."\n\n'
        "FORMAT:\nSay \\boxed{Yes} or \\boxed{No}\nGUIDE."
    )


def test_binary_named_substitutes_both_labels() -> None:
    question = make_question("binary_named", ("Vell Rovers", "Orin City"), event="Who wins the cup?")
    assert output_format(question, TEMPLATES) == "Say \\boxed{Vell Rovers} or \\boxed{Orin City}"
    assert outcomes_block(question) == ""
    assert render_prompt(question, TEMPLATES) == (
        'ROLE. Event: "Who wins the cup? (by 2031-04-05)."\n\n'
        "FORMAT:\nSay \\boxed{Vell Rovers} or \\boxed{Orin City}\nGUIDE."
    )


def test_multiple_choice_single_lists_options_without_trailing_newline() -> None:
    question = make_question("multiple_choice", ("low", "mid", "high"), event="Which band?")
    assert outcomes_block(question) == "\nA. low\nB. mid\nC. high"
    assert render_prompt(question, TEMPLATES) == (
        'ROLE. Event: "Which band? (by 2031-04-05).\nA. low\nB. mid\nC. high"\n\n'
        "FORMAT:\nOne letter, e.g. \\boxed{A}\nGUIDE."
    )


def test_multiple_choice_multi_uses_the_multi_format() -> None:
    question = make_question("multiple_choice", ("n", "e", "s", "w"), choice_type="multi")
    assert output_format(question, TEMPLATES) == "Letters, e.g. \\boxed{A, C}"
    assert '\nD. w"' in render_prompt(question, TEMPLATES)


def test_yes_no_has_empty_outcomes_block() -> None:
    assert outcomes_block(make_question("yes_no", ("Yes", "No"))) == ""


def test_options_beyond_z_use_the_card_letters() -> None:
    question = make_question("multiple_choice", tuple(f"o{i}" for i in range(28)))
    assert outcomes_block(question).endswith("\nZ. o25\n[. o26\n\\. o27")


def test_braces_in_event_and_labels_are_literal() -> None:
    question = make_question("binary_named", ("{x}", "{0}"), event="Set {a} or {b}?")
    rendered = render_prompt(question, TEMPLATES)
    assert 'Event: "Set {a} or {b}? (by 2031-04-05)."' in rendered
    assert "\\boxed{{x}} or \\boxed{{0}}" in rendered


def test_no_protocols_is_the_bare_template() -> None:
    question = make_question("yes_no", ("Yes", "No"))
    bare = render_template(question, TEMPLATES)
    assert render_prompt(question, TEMPLATES) == bare
    assert render_prompt(question, TEMPLATES, protocols=RuntimeProtocols.none()) == bare


def test_protocols_are_appended_after_the_template_in_order() -> None:
    question = make_question("yes_no", ("Yes", "No"))
    bare = render_template(question, TEMPLATES)
    protocols = RuntimeProtocols.all(12, 8)
    rendered = render_prompt(question, TEMPLATES, protocols=protocols)
    reflection, belief, footer = protocols.blocks()
    assert rendered == f"{bare}\n\n{reflection}\n\n{belief}\n\n{footer}"
    default = render_prompt(question, TEMPLATES, protocols=RuntimeProtocols.default(12, 8))
    assert default == f"{bare}\n\n{reflection}\n\n{footer}"


def test_missing_template_keys_are_all_reported() -> None:
    partial = PromptTemplates.from_mapping(
        {k: v for k, v in TEMPLATES.as_dict().items() if k not in {"guidance", "yes_no_output_format"}}
    )
    with pytest.raises(DatasetError) as info:
        render_prompt(make_question("yes_no", ("Yes", "No")), partial)
    assert sorted(p.column for p in info.value.problems) == ["guidance", "yes_no_output_format"]
    assert "missing template key" in str(info.value)


@pytest.mark.parametrize("template", ["{agent_role} {unknown}", "{agent_role} {", "{0}"])
def test_unformattable_prompt_template_is_a_clear_error(template: str) -> None:
    templates = PromptTemplates.from_mapping({**TEMPLATES.as_dict(), "prompt_template": template})
    with pytest.raises(DatasetError) as info:
        render_prompt(make_question("yes_no", ("Yes", "No")), templates)
    (problem,) = info.value.problems
    assert problem.column == "prompt_template"
    expected = "placeholders {agent_role}, {end_time}, {event}, {guidance}, {outcomes_block}, {output_format}"
    assert expected in str(info.value)


def test_prompt_templates_hash_is_sorted_key_value_lines() -> None:
    lines = "\n".join(f"{key}={TEMPLATES[key]}" for key in sorted(TEMPLATE_KEYS))
    assert prompt_templates_hash(TEMPLATES) == sha256_hex(lines)


def test_prompt_templates_hash_covers_every_key_and_value() -> None:
    base = prompt_templates_hash(TEMPLATES)
    extra = PromptTemplates.from_mapping({**TEMPLATES.as_dict(), "notes": "x"})
    changed = PromptTemplates.from_mapping({**TEMPLATES.as_dict(), "guidance": "GUIDE!"})
    assert len({base, prompt_templates_hash(extra), prompt_templates_hash(changed)}) == 3
    reordered = PromptTemplates.from_mapping(dict(reversed(list(TEMPLATES.as_dict().items()))))
    assert prompt_templates_hash(reordered) == base


def test_templates_as_recorded_picks_the_form_a_run_hashed() -> None:
    written = PromptTemplates.from_mapping({"a": "1"})
    rendered = PromptTemplates.from_mapping({"a": "1", "b": "1"})
    assert templates_as_recorded(rendered, written, None) is written
    assert templates_as_recorded(rendered, written, prompt_templates_hash(written)) is written
    assert templates_as_recorded(rendered, written, prompt_templates_hash(rendered)) is rendered
    assert templates_as_recorded(rendered, written, "0" * 64) is written  # neither: the layout's form
