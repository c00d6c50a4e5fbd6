"""``oracleproto render``: print the user prompts a run would send — the dry run before spending money."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from oracleproto.cli.experiment import profile_option
from oracleproto.dataset.demo import demo_db_path
from oracleproto.dataset.loader import load_questions, load_templates
from oracleproto.dataset.models import PromptTemplates, Question
from oracleproto.errors import ConfigError, OracleprotoError
from oracleproto.primitives import safe_text
from oracleproto.primitives.hashing import sha256_hex
from oracleproto.profile import (
    PROFILE_SETTING,
    HarnessProfile,
    builtin_profile,
    load_profile,
    profile_fingerprint,
)
from oracleproto.prompts import (
    Budget,
    RuntimeProtocols,
    load_protocol_file,
    prompt_templates_hash,
    render_prompt,
)
from oracleproto.runner.run_texts import outcome_lines, profile_layout
from oracleproto.settings.model import ReactSettings
from oracleproto.settings.values import check_env_file

#: The argument value that selects the bundled demo dataset.
DEMO = "demo"
PROTOCOL_CHOICES = ("none", "default", "all")
#: ``--protocols file:PATH`` renders with a protocols file (the PROTOCOLS_FILE format).
FILE_PREFIX = "file:"


class ProtocolsChoice(click.ParamType[str]):
    """``--protocols``: one of ``PROTOCOL_CHOICES``, or ``file:PATH`` (checked when rendering)."""

    name = "protocols"

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:
        """How ``--help`` shows the value."""
        return "[none|default|all|file:PATH]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        """The value, unchanged, when it names a choice or a file."""
        text = str(value)
        if text in PROTOCOL_CHOICES:
            return text
        if text.startswith(FILE_PREFIX) and text[len(FILE_PREFIX) :]:
            return text
        choices = ", ".join(repr(c) for c in PROTOCOL_CHOICES)
        self.fail(f"{text!r} is not one of {choices}, or 'file:PATH' (a protocols file)", param, ctx)


class RenderInputError(click.ClickException):
    """Bad input to ``render``: message printed, exit status 2 (as for every invalid input)."""

    exit_code = 2


def resolve_db(db: str) -> Path:
    """The DB path for the ``DB`` argument; ``demo`` is the bundled demo dataset."""
    if db == DEMO:
        return demo_db_path()
    return Path(db)


def select_questions(questions: list[Question], ids: tuple[str, ...]) -> list[Question]:
    """Questions whose id is in ``ids`` (all when empty), in dataset order; unknown ids fail."""
    if not ids:
        return questions
    known = {q.id for q in questions}
    unknown = [i for i in dict.fromkeys(ids) if i not in known]
    if unknown:
        listed = ", ".join(repr(i) for i in unknown)
        raise RenderInputError(
            f"unknown question id(s): {listed}; list the ids with `oracleproto render DB --json`"
        )
    wanted = set(ids)
    return [q for q in questions if q.id in wanted]


def build_protocols(
    name: str, max_steps: int, max_search_calls: int, profile: HarnessProfile | None = None
) -> RuntimeProtocols:
    """The ``--protocols`` choice as a ``RuntimeProtocols`` value (a file's blocks are all on).

    ``default`` and ``all`` switch the blocks of ``profile`` (default: the built-in one), which also
    decides how the fingerprints are computed.
    """
    profile = profile if profile is not None else builtin_profile()
    rules = profile.fingerprints
    if name.startswith(FILE_PREFIX):
        path = Path(name[len(FILE_PREFIX) :])
        layout = load_protocol_file(path, setting="--protocols")
        chosen = RuntimeProtocols.from_layout(layout, max_steps, max_search_calls)
    elif name == "none":
        chosen = RuntimeProtocols.none()
    else:
        budget = Budget(max_steps, max_search_calls)
        chosen = RuntimeProtocols(
            reflection=True,
            belief=name == "all",
            budget=budget,
            layout=profile_layout(profile),
            limits=budget,
        )
    return replace(chosen, block_hash=rules.protocol_blocks, budget_hash=rules.budget_block)


def render_document(
    db: str,
    questions: list[Question],
    templates: PromptTemplates,
    protocols: RuntimeProtocols,
    profile: HarnessProfile | None = None,
) -> dict[str, Any]:
    """The ``--json`` document: hashes, protocol fingerprints and one entry per prompt."""
    profile = profile if profile is not None else builtin_profile()
    lines = outcome_lines(profile)
    prompts = []
    for question in questions:
        text = render_prompt(question, templates, protocols=protocols, lines=lines)
        prompts.append(
            {
                "id": question.id,
                "question_type": question.question_type,
                "choice_type": question.choice_type,
                "end_time": question.end_time.isoformat(),
                "user_prompt": text,
                # A lone surrogate has no UTF-8 form: hashed as its surrogate-pass bytes.
                "user_prompt_sha256": sha256_hex(text.encode("utf-8", "surrogatepass")),
            }
        )
    budget = protocols.budget
    return {
        "db": db,
        "harness_profile": {"name": profile.name, "fingerprint": profile_fingerprint(profile)},
        "prompt_templates_hash": prompt_templates_hash(templates),
        "protocols": {
            "reflection": protocols.reflection,
            "belief": protocols.belief,
            "budget_footer": budget is not None,
            "max_steps": budget.max_steps if budget else None,
            "max_search_calls": budget.max_search_calls if budget else None,
            **protocols.fingerprints(),
            "order": protocols.order(),
            "separator": protocols.layout.separator,
            "suffix": protocols.layout.suffix,
            "protocols_file_hash": protocols.layout_fingerprint(),
        },
        "count": len(prompts),
        "prompts": prompts,
    }


def _react_defaults() -> ReactSettings:
    # Same sources as a run (environment and .env), so the dry run announces the run's budget.
    try:
        check_env_file(".env")
        return ReactSettings(_env_file=".env")
    except ConfigError as exc:
        raise RenderInputError(str(exc)) from exc
    except ValueError as exc:
        raise RenderInputError(f"invalid ReAct settings in the environment or .env: {exc}") from exc


def _profile(option: str | None) -> HarnessProfile:
    """``--profile``, else ``HARNESS_PROFILE``, else the built-in profile."""
    if option is not None:
        return load_profile(Path(option), setting="--profile")
    value = os.environ.get(PROFILE_SETTING, "").strip()
    return load_profile(Path(value)) if value else builtin_profile()


@click.command("render")
@click.argument("db", metavar="DB")
@click.option("--id", "ids", multiple=True, metavar="ID", help="Render only this question (repeatable).")
@click.option(
    "--protocols",
    type=ProtocolsChoice(),
    default="none",
    show_default=True,
    help="Runtime protocols to append: none; default (budget footer + reflection, the paper's run); "
    "all (adds the belief block); file:PATH (the blocks, order, separator and suffix of a protocols "
    "file, as PROTOCOLS_FILE gives a run).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of text.")
@profile_option
@click.option(
    "--table", default=None, metavar="T", help="Questions table (default: the one with the 7 columns)."
)
@click.option(
    "--max-steps",
    type=click.IntRange(min=1),
    default=None,
    help="T announced by the budget footer (default: REACT_MAX_STEPS / ReactSettings).",
)
@click.option(
    "--max-searches",
    type=click.IntRange(min=0),
    default=None,
    help="C announced by the budget footer (default: REACT_MAX_SEARCH_CALLS / ReactSettings).",
)
def render_command(
    db: str,
    *,
    ids: tuple[str, ...],
    protocols: str,
    as_json: bool,
    table: str | None,
    max_steps: int | None,
    max_searches: int | None,
    profile_path: str | None,
) -> None:
    """Print the rendered user prompts of DB (a source SQLite file, or `demo`)."""
    if max_steps is None or max_searches is None:
        react = _react_defaults()
        max_steps = react.max_steps if max_steps is None else max_steps
        max_searches = react.max_search_calls if max_searches is None else max_searches
    try:
        path = resolve_db(db)
        questions = select_questions(load_questions(path, table), ids)
        templates = load_templates(path)
        profile = _profile(profile_path)
        chosen = build_protocols(protocols, max_steps, max_searches, profile)
        # Render everything before printing anything: bad input leaves no partial output.
        document = render_document(db, questions, templates, chosen, profile)
    except OracleprotoError as exc:
        raise RenderInputError(str(exc)) from exc
    # A question's text may hold a lone surrogate (a JSON escape in the source DB), which no terminal
    # encoding can write: JSON keeps it as its escape, plain text shows U+FFFD.
    if as_json:
        click.echo(safe_text.dumps(document, indent=2))
        return
    for entry in document["prompts"]:
        header = (
            f"=== {entry['id']} · {entry['question_type']}/{entry['choice_type']} · {entry['end_time']} ==="
        )
        click.echo(safe_text.storable(f"{header}\n{entry['user_prompt']}\n"))
    fingerprints = ", ".join(f"{k}={v}" for k, v in document["protocols"].items() if k.endswith("_hash"))
    click.echo(
        f"{document['count']} prompt(s); prompt_templates_hash={document['prompt_templates_hash']}; "
        f"protocols={protocols} ({fingerprints})",
        err=True,
    )
