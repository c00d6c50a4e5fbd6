"""Hand-written templates and questions for renderer tests (fictional wording, not the paper's)."""

from __future__ import annotations

from datetime import date

from oracleproto.dataset.models import ChoiceType, PromptTemplates, Question, QuestionType

TEMPLATES = PromptTemplates.from_mapping(
    {
        "agent_role": "ROLE.",
        "guidance": "GUIDE.",
        "prompt_template": '{agent_role} Event: "{event} (by {end_time}).{outcomes_block}"\n\n'
        "FORMAT:\n{output_format}\n{guidance}",
        "outcomes_block_rule": "rule text (not used by the renderer)",
        "yes_no_output_format": "Say \\boxed{Yes} or \\boxed{No}",
        "binary_named_output_format": "Say \\boxed{<options[0]>} or \\boxed{<options[1]>}",
        "multiple_choice_single_output_format": "One letter, e.g. \\boxed{A}",
        "multiple_choice_multi_output_format": "Letters, e.g. \\boxed{A, C}",
    }
)


def make_question(
    question_type: QuestionType,
    options: tuple[str, ...],
    choice_type: ChoiceType = "single",
    event: str = "Will the fictional Lake Vell ferry resume service?",
) -> Question:
    """A fictional question for rendering."""
    return Question(
        id="t1",
        choice_type=choice_type,
        question_type=question_type,
        event=event,
        options=options,
        answer=frozenset({"A"}),
        end_time=date(2031, 4, 5),
    )
