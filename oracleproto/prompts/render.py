"""Renderer R: the user prompt as a deterministic function of the question and the templates."""

from __future__ import annotations

from dataclasses import dataclass

from oracleproto.dataset.models import TEMPLATE_KEYS, PromptTemplates, Question, letter
from oracleproto.errors import DatasetError, DatasetProblem
from oracleproto.primitives.hashing import sha256_hex
from oracleproto.profile.placeholders import fill
from oracleproto.prompts.protocol_texts import DEFAULT_SEPARATOR
from oracleproto.prompts.protocols import RuntimeProtocols


@dataclass(frozen=True)
class OutcomeLines:
    """How one multiple-choice option is written (a harness profile's ``prompt`` texts)."""

    #: For letters A–Z; placeholders ``{{letter}}`` and ``{{label}}``.
    standard: str
    #: For any other letter.
    other: str

    def render(self, letter: str, label: str) -> str:
        """The filled line of one option."""
        text = self.standard if "A" <= letter <= "Z" else self.other
        return fill(text, {"letter": letter, "label": label})


#: Default separator before each runtime protocol block (a protocols file may set another).
PROTOCOL_SEPARATOR = DEFAULT_SEPARATOR

_TEMPLATE_SOURCE = "prompt templates"
_NO_PROTOCOLS = RuntimeProtocols.none()


def prompt_templates_hash(templates: PromptTemplates) -> str:
    """sha256 hex of the ``key=value`` lines of every template key, sorted by key (run-layout.md)."""
    lines = [f"{key}={value}" for key, value in sorted(templates.as_dict().items())]
    return sha256_hex("\n".join(lines))


def templates_as_recorded(
    rendered: PromptTemplates, written: PromptTemplates, recorded_hash: str | None
) -> PromptTemplates:
    """The form of a dataset's templates a run stored and hashed: as written (run-layout.md), unless
    ``recorded_hash`` is that of the rendered form, as for a legacy dataset's stand-in keys in a run
    oracleproto recorded before it stored the keys as written."""
    stand_ins = recorded_hash not in (None, prompt_templates_hash(written))
    return rendered if stand_ins and recorded_hash == prompt_templates_hash(rendered) else written


#: The outcome lines of the built-in harness profile: ``A. label`` for every letter.
DEFAULT_OUTCOME_LINES = OutcomeLines("{{letter}}. {{label}}", "{{letter}}. {{label}}")


def outcomes_block(question: Question, lines: OutcomeLines = DEFAULT_OUTCOME_LINES) -> str:
    """Empty for yes/no and binary_named; ``"\\nA. label\\nB. label"`` for multiple choice."""
    if question.question_type != "multiple_choice":
        return ""
    # outcomes_block_rule: '\n' + 'A. <label>\nB. <label>\n...' — the newlines separate lines;
    # there is none after the last label (the template closes the quote right after it). Letters
    # past Z (the card's chr(65 + i)) take the profile's other line.
    return "\n" + "\n".join(lines.render(letter(i), label) for i, label in enumerate(question.options))


def output_format(question: Question, templates: PromptTemplates) -> str:
    """The output-format block for the question's type (and choice type for multiple choice)."""
    values = _checked(templates)
    if question.question_type == "yes_no":
        return values["yes_no_output_format"]
    if question.question_type == "binary_named":
        first, second = question.options[0], question.options[1]
        text = values["binary_named_output_format"]
        return text.replace("<options[0]>", first).replace("<options[1]>", second)
    key = f"multiple_choice_{question.choice_type}_output_format"
    return values[key]


def render_template(
    question: Question, templates: PromptTemplates, lines: OutcomeLines = DEFAULT_OUTCOME_LINES
) -> str:
    """The bare template rendering: ``prompt_template`` formatted with the six fields."""
    values = _checked(templates)
    fields = {
        "agent_role": values["agent_role"],
        "event": question.event,
        "end_time": question.end_time.isoformat(),
        "outcomes_block": outcomes_block(question, lines),
        "output_format": output_format(question, templates),
        "guidance": values["guidance"],
    }
    try:
        return values["prompt_template"].format(**fields)
    except (KeyError, IndexError, ValueError) as exc:
        allowed = ", ".join("{" + name + "}" for name in sorted(fields))
        reason = (
            f"cannot be formatted ({type(exc).__name__}: {exc}); it may only use the placeholders "
            f"{allowed} and must escape literal braces by doubling them"
        )
        raise DatasetError(_TEMPLATE_SOURCE, [DatasetProblem(None, "prompt_template", reason)]) from exc


def render_prompt(
    question: Question,
    templates: PromptTemplates,
    *,
    protocols: RuntimeProtocols = _NO_PROTOCOLS,
    lines: OutcomeLines = DEFAULT_OUTCOME_LINES,
) -> str:
    """The user prompt: the template rendering, then each enabled runtime protocol block."""
    return protocols.append_to(render_template(question, templates, lines))


def _checked(templates: PromptTemplates) -> dict[str, str]:
    values = templates.as_dict()
    problems = [
        DatasetProblem(None, key, "missing template key; the renderer needs all eight keys of paper Table 9")
        for key in TEMPLATE_KEYS
        if key not in values
    ]
    if problems:
        raise DatasetError(_TEMPLATE_SOURCE, problems)
    return values
