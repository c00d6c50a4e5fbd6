"""The demo world's dated corpus: hints lean true before the cutoff, outcomes are stated after it."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest

from oracleproto.dataset.demo import demo_db_path
from oracleproto.dataset.loader import load_questions, load_templates
from oracleproto.prompts import render_prompt
from oracleproto.sim import corpus, demo_corpus, demo_world, evidence, search_api
from oracleproto.sim.detector import verdict
from oracleproto.sim.loopback import LoopbackRequest
from oracleproto.sim.prompt_reader import read_question
from oracleproto.sim.server import SimConfig, SimHandler

EVENTS = sorted(demo_world.demo_events().values(), key=lambda e: e.question_id)
SEEDS = (0, 1, 2)


def _percent(text: str, subject: str) -> int | None:
    return evidence.read_chances([text], (subject,)).get(subject)


def _judge(doc: corpus.Document, cutoff: date) -> str:
    item = {
        "title": doc.title,
        "url": doc.url,
        "published_date": doc.published_date.isoformat() if doc.published_date else None,
        "content": doc.content,
        "raw_content": doc.raw_content,
        "cutoff_date": cutoff.isoformat(),
    }
    return verdict(json.dumps(item))[0]


def test_every_demo_row_is_an_event_with_its_true_subjects() -> None:
    assert len(EVENTS) == 16
    by_id = {e.question_id: e for e in EVENTS}
    assert by_id["demo-01"].subjects == ("Yes",) and not by_id["demo-01"].true_subjects  # answer B = No
    assert by_id["demo-02"].true_subjects == {"Yes"}
    assert by_id["demo-07"].true_subjects == {"Tomas Rinn"}
    assert by_id["demo-13"].true_subjects == {"The Salt Road", "A Quiet Ledger"}
    assert by_id["demo-15"].true_subjects == {
        "Ashford Owls",
        "Caldera Suns",
        "Dunmere Wolves",
        "Fenwick Foxes",
    }
    assert by_id["demo-10"].resolves_on == date(2026, 3, 27)


def test_the_persona_reads_each_demo_prompt_back_to_its_event() -> None:
    # The topic a persona searches for is the event it parsed from the rendered prompt.
    templates = load_templates(demo_db_path())
    for question in load_questions(demo_db_path()):
        view = read_question(render_prompt(question, templates))
        assert view is not None, question.id
        event = demo_world.lookup(view.event)
        assert event is not None and event.question_id == question.id
        assert set(view.labels) >= set(event.subjects)


def test_other_topics_get_the_synthetic_corpus() -> None:
    query = "Will the fictional Vessa ferry resume? — Yes"
    assert demo_world.lookup("Will the fictional Vessa ferry resume?") is None
    assert search_api.documents(3, query, date(2026, 3, 1), 5) == corpus.search(3, query, date(2026, 3, 1), 5)


@pytest.mark.parametrize("seed", SEEDS)
def test_pre_cutoff_hints_lean_towards_the_truth_but_single_articles_can_mislead(seed: int) -> None:
    right = wrong = misleading = 0
    for event in EVENTS:
        for subject in event.subjects:
            hints = [
                d for d in demo_corpus.pool(seed, event, subject) if "Outcome confirmed" not in d.content
            ]
            percents = [p for d in hints if (p := _percent(d.content, subject)) is not None]
            assert len(percents) == demo_corpus.POOL.count("hint")
            mean = sum(percents) / len(percents)
            leans_true = mean > 50
            right += leans_true == event.happened(subject)
            wrong += leans_true != event.happened(subject)
            misleading += sum((p > 50) != event.happened(subject) for p in percents)
    assert right >= 0.9 * (right + wrong)
    assert misleading > 0  # the strength varies: some articles point the wrong way


@pytest.mark.parametrize("seed", SEEDS)
def test_after_the_cutoff_articles_state_the_outcome_and_the_mask_plus_detector_remove_them(
    seed: int,
) -> None:
    for event in EVENTS:
        cutoff = event.resolves_on - timedelta(days=1)  # the runner's chi with delta = 1
        for subject in (None, *event.subjects):
            for doc in demo_corpus.pool(seed, event, subject):
                stated = evidence.read_chances([doc.content], event.subjects)
                if "Outcome confirmed" in doc.content:
                    # Outcomes are stated correctly, and only ever outside the mask's reach.
                    assert all((stated[s] == 100) == event.happened(s) for s in stated)
                    after = doc.published_date is not None and doc.published_date > cutoff
                    assert after or _judge(doc, cutoff) == "drop", doc
                else:
                    assert doc.published_date is None or doc.published_date <= cutoff
                    assert _judge(doc, cutoff) == "keep", doc
            masked = demo_corpus.search(seed, event, subject, cutoff, 20)
            assert all(d.published_date is None or d.published_date <= cutoff for d in masked)
            assert any("Outcome confirmed" in d.content for d in masked)  # stale pages pass the date mask


def test_ignoring_end_date_serves_post_cutoff_results() -> None:
    event = demo_world.demo_events()[evidence.normalise(EVENTS[0].event)]
    cutoff = event.resolves_on - timedelta(days=1)
    body = {
        "query": evidence.make_query(event.event, "Yes"),
        "end_date": cutoff.isoformat(),
        "max_results": 20,
    }

    def dates(config: SimConfig) -> list[str | None]:
        request = LoopbackRequest("POST", "/search", {"authorization": "Bearer k"}, json.dumps(body).encode())
        response = SimHandler(config)(request)
        assert response.status == 200
        return [r["published_date"] for r in json.loads(response.body)["results"]]

    honoured = dates(SimConfig(seed=1))
    ignored = dates(SimConfig(seed=1, honour_end_date=False))
    assert all(d is None or date.fromisoformat(d) <= cutoff for d in honoured)
    assert any(d is not None and date.fromisoformat(d) > cutoff for d in ignored)
    assert len(ignored) == len(demo_corpus.POOL) > len(honoured)


def test_the_demo_corpus_is_a_function_of_seed_and_query() -> None:
    event = EVENTS[8]
    assert demo_corpus.pool(4, event, None) == demo_corpus.pool(4, event, None)
    assert demo_corpus.pool(4, event, None) != demo_corpus.pool(5, event, None)
    unknown = search_api.documents(4, evidence.make_query(event.event, "Someone else"), None, 20)
    assert unknown == demo_corpus.search(4, event, None, None, 20)  # free-form subject → round-ups
