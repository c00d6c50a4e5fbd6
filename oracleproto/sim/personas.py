"""Scripted forecaster personas: how a simulated model searches and answers.

A persona reads the conversation (question, tool results, harness status) and returns one
turn: either ``web_search`` calls or reasoning text ending in ``\\boxed{…}``. All draws come
from ``key`` (the request's randomness key), so the same key gives the same turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from oracleproto.sim import evidence, rng
from oracleproto.sim.openai_wire import ToolCallOut, tool_call_id
from oracleproto.sim.prompt_reader import (
    QuestionView,
    first_user_prompt,
    last_status,
    message_text,
    offers_web_search,
    read_question,
    searches_made,
    tool_texts,
)


@dataclass(frozen=True)
class Persona:
    """Knobs of one simulated forecaster."""

    name: str
    accuracy: float
    """Probability of answering from its best estimate (else a uniform random pick)."""
    search_min: int
    search_max: int
    """Searches it wants per sample, drawn in [search_min, search_max]."""
    prior_noise: int
    """Error (± percent points) of its estimate for subjects it did not search."""
    misformat_rate: float
    """Probability that the final answer is malformed (no box, empty box, out-of-range)."""
    overrun_rate: float
    """Probability per sample of ignoring the search budget announced by the harness."""
    parallel_calls: int
    """Tool calls per turn when it searches (more than one stresses budget accounting)."""
    reasoning_factor: float
    """Hidden reasoning tokens reported per visible completion token."""
    cost_style: str | None = None
    """How the gateway serving it reports each call's cost in ``usage``: ``cost`` (OpenRouter's
    USD float), ``ticks`` (xAI's ``cost_in_usd_ticks``) or ``None`` (no cost reported)."""
    usd_per_million: tuple[float, float] = (0.0, 0.0)
    """(input, output) USD per million tokens behind the reported cost."""
    hedge_rate: float = 0.0
    """Probability that a single-answer multiple-choice answer boxes two letters (real models hedge
    so; the parser modes differ exactly there: Algorithm 2 scores it wrong, ``strict`` nudges)."""


PERSONAS: dict[str, Persona] = {
    p.name: p
    for p in (
        Persona("careful", 0.9, 3, 4, 25, 0.02, 0.0, 1, 3.0, "cost", (0.3, 1.2)),
        Persona("hasty", 0.8, 1, 1, 40, 0.05, 0.0, 1, 0.0, "ticks", (0.2, 0.5)),
        Persona("sloppy", 0.5, 1, 2, 40, 0.3, 0.25, 1, 0.5, hedge_rate=0.3),
        Persona("greedy", 0.75, 5, 8, 30, 0.05, 1.0, 2, 1.0, "cost", (0.5, 2.0)),
        Persona("oracle", 1.0, 4, 4, 0, 0.0, 0.0, 1, 0.0),
        Persona("random", 0.0, 0, 2, 50, 0.0, 0.0, 1, 0.0, "cost", (0.05, 0.1)),
    )
}

#: Weight of a persona's prior (its hunch) against 50 for subjects it found no report on.
PRIOR_WEIGHT = 0.4

#: Model slug of the detector persona.
DETECTOR_SLUG = "sim/detector"
#: The detector is served like an OpenRouter model: it reports ``usage.cost`` at these prices.
DETECTOR_COST_STYLE = "cost"
DETECTOR_USD_PER_MILLION = (0.02, 0.1)


#: Suffix of a persona's replicas (``sim/careful-r2``): more simulated models than personas, for
#: paper-scale panels (30 models); a replica forecasts as its persona, with its own model slug.
REPLICA_MARK = "-r"
#: Replicas per persona, the persona itself counted as the first (``-r2`` … ``-r5``).
REPLICAS = 5


def replica_slugs() -> list[str]:
    """Every replica model id (``sim/careful-r2`` … ``sim/random-r5``), round by round."""
    return [f"sim/{name}{REPLICA_MARK}{k}" for k in range(2, REPLICAS + 1) for name in PERSONAS]


def persona_for_model(model: str) -> Persona | None:
    """The persona of ``sim/<name>``, ``sim/persona-<name>`` or ``sim/<name>-r<N>``; ``None`` if unknown."""
    prefix, _, name = model.partition("/")
    if prefix != "sim":
        return None
    name = name.removeprefix("persona-")
    base, mark, replica = name.rpartition(REPLICA_MARK)
    if (
        mark
        and base in PERSONAS
        and replica.isascii()
        and replica.isdigit()
        and 2 <= int(replica) <= REPLICAS
    ):
        return PERSONAS[base]
    return PERSONAS.get(name)


@dataclass(frozen=True)
class Turn:
    """One assistant turn: text or tool calls, plus hidden reasoning tokens."""

    content: str | None
    tool_calls: list[ToolCallOut]
    reasoning_factor: float


def _subjects(view: QuestionView) -> tuple[str, ...]:
    # A yes/no question has one subject: whether "Yes" happens.
    return ("Yes",) if view.kind == "yes_no" else view.labels


def _estimates(view: QuestionView, persona: Persona, texts: list[str], key: str) -> dict[str, int]:
    seen = evidence.read_chances(texts, _subjects(view))
    out: dict[str, int] = {}
    for subject in _subjects(view):
        if subject in seen:
            out[subject] = seen[subject]
        else:
            noise = (rng.unit("noise", key, subject) - 0.5) * 2 * persona.prior_noise
            prior = evidence.strength(view.event, subject) + noise
            # A hunch counts for less than a report: unsearched subjects are pulled towards 50.
            out[subject] = round(50 + PRIOR_WEIGHT * (prior - 50))
    return out


def _choose(view: QuestionView, persona: Persona, texts: list[str], key: str) -> list[int]:
    """Indices into ``view.labels`` of the chosen answer."""
    if rng.unit("skill", key) >= persona.accuracy:
        if view.kind == "multi":
            chosen = [i for i in range(len(view.labels)) if rng.unit("multi", key, i) < 0.35]
            return chosen or [rng.randint(0, len(view.labels) - 1, "one", key)]
        return [rng.randint(0, len(view.labels) - 1, "random", key)]
    est = _estimates(view, persona, texts, key)
    if view.kind == "yes_no":
        return [0 if est["Yes"] >= 50 else 1]
    ranked = sorted(range(len(view.labels)), key=lambda i: (-est[view.labels[i]], i))
    if view.kind == "multi":
        chosen = [i for i in ranked if est[view.labels[i]] >= 50]
        return sorted(chosen) or ranked[:1]
    return ranked[:1]


def _box_payload(view: QuestionView, chosen: list[int]) -> str:
    if view.kind in ("yes_no", "binary_named"):
        return view.labels[chosen[0]]
    return ", ".join(chr(65 + i) for i in chosen)


def _misformat(view: QuestionView, reasoning: str, key: str) -> str:
    style = rng.pick(("no_box", "empty_box", "out_of_range"), "misformat-style", key)
    if style == "no_box":
        return reasoning + "\nI lean towards the outcome discussed above."
    if style == "empty_box":
        return reasoning + "\nFinal answer: \\boxed{}"
    bad = chr(65 + len(view.labels)) if view.kind in ("single", "multi") else "Maybe"
    return reasoning + f"\nFinal answer: \\boxed{{{bad}}}"


def _answer(view: QuestionView, persona: Persona, texts: list[str], key: str) -> str:
    seen = evidence.read_chances(texts, _subjects(view))
    if seen:
        notes = "; ".join(f"{s}: {p}%" for s, p in sorted(seen.items()))
        reasoning = f"Weighing the reports I found ({notes}) against base rates for this kind of event."
    else:
        reasoning = "Without further sources, I rely on base rates and what I know about this kind of event."
    if rng.unit("misformat", key) < persona.misformat_rate:
        return _misformat(view, reasoning, key)
    chosen = _choose(view, persona, texts, key)
    if view.kind == "single" and len(view.labels) > 1 and rng.unit("hedge", key) < persona.hedge_rate:
        other = (chosen[0] + 1 + rng.randint(0, len(view.labels) - 2, "hedge-other", key)) % len(view.labels)
        chosen = sorted({chosen[0], other})
    payload = _box_payload(view, chosen)
    return f"{reasoning}\nFinal answer: \\boxed{{{payload}}}"


def _queries(view: QuestionView, made: int, count: int, key: str) -> list[str]:
    subjects = list(_subjects(view))
    subjects.sort(key=lambda s: rng.unit("order", key, s))
    order: list[str | None] = [None, *subjects]
    return [evidence.make_query(view.event, order[(made + i) % len(order)]) for i in range(count)]


def _sample_key(messages: list[dict[str, Any]], key: str) -> str:
    # Draws that must stay stable across the turns of one sample (appetite, overrun) need a
    # per-sample identity. The first tool-call id is one: it derives from the first turn's key,
    # so samples of the same question differ while the turns of one sample agree.
    for message in messages:
        if message.get("role") == "assistant":
            calls = message.get("tool_calls") or []
            if calls and calls[0].get("id"):
                return str(calls[0]["id"])
            return rng.digest("first-content", message_text(message)).hex()
    return tool_call_id(key, 0)


def play_turn(
    persona: Persona, messages: list[dict[str, Any]], tools: list[dict[str, Any]], key: str
) -> Turn:
    """The persona's next turn for this conversation."""
    view = read_question(first_user_prompt(messages))
    if view is None:
        return Turn("I can only forecast events given in the benchmark's prompt format.", [], 0.0)
    sample_key = _sample_key(messages, key)
    made = searches_made(messages)
    want = rng.randint(persona.search_min, persona.search_max, "appetite", sample_key, persona.name)
    overrun = rng.unit("overrun", sample_key, persona.name) < persona.overrun_rate
    status = last_status(messages)
    budget_left = None if status is None else status.searches_left
    may_search = offers_web_search(tools) and made < want
    if may_search and not overrun and budget_left is not None and budget_left <= 0:
        may_search = False
    if may_search and not overrun and status is not None and status.remaining <= 1:
        may_search = False
    if may_search:
        count = persona.parallel_calls if overrun else 1
        if budget_left is not None and not overrun:
            count = min(count, budget_left)
        queries = _queries(view, made, max(count, 1), sample_key)
        return Turn(
            None, [ToolCallOut("web_search", {"query": q}) for q in queries], persona.reasoning_factor
        )
    return Turn(_answer(view, persona, tool_texts(messages), key), [], persona.reasoning_factor)
