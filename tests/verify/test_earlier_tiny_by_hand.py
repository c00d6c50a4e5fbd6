"""A six-question earlier-layout run whose reference-v4 analysis is worked out by hand.

Issue 28 §4: ``test_earlier_runs.py`` regenerates the analysis and compares it with the files
our own analysis wrote, so a wrong metric would pass both ways. Here the numbers ``verify``
regenerates are compared with values derived on paper from ``tests/earlier_layout.py``'s
trial rules, for its first six demo questions (end-time order), n = 2:

====  =========  ========  ====  ==============  ========================
 i    id         bucket    gold  model 0 (d)     model 1 (a, κ 2026-03-12)
====  =========  ========  ====  ==============  ========================
 0    demo-08    binary    A     B ✗, A ✓        excluded (ends 03-01)
 1    demo-02    yes_no    A     A ✓, A ✓        excluded (ends 03-10)
 2    demo-09    mc_single B     B ✓, C ✗        C ✗, B ✓
 3    demo-01    yes_no    B     A ✗, call error B ✓, B ✓
 4    demo-06    binary    A     A ✓, A ✓        A ✓, B ✗
 5    demo-10    mc_single C     parse fail, D ✗ D ✗, C ✓
====  =========  ========  ====  ==============  ========================

(a trial is right unless ``(i + sample + model) % 3 == 0``; a wrong single answer is the next
letter, cyclically among the options.) Counters of a trial: ``(i + s) % 3`` searches, react
steps one more, prompt tokens ``1000 + 10 i + s``, completion ``200 + i``, reasoning ``50 ·
model``, latency ``1500 + 100 i + 7 s``; a call error stores zeros.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from oracleproto.verify.run import verify_run
from tests.earlier_layout import SLUGS, write_earlier_run

M0, M1 = SLUGS


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_earlier_run(tmp_path_factory.mktemp("tiny") / "runs", questions=6)


@pytest.fixture(scope="module")
def summary(tiny_run: Path) -> dict[str, Any]:
    report = verify_run(tiny_run)
    assert report.ok, report.failures  # so analysis/ is what verify regenerates from db/, byte for byte
    data: dict[str, Any] = json.loads((tiny_run / "analysis" / "summary.json").read_text(encoding="utf-8"))
    return data


def test_counts(summary: dict[str, Any]) -> None:
    m0, m1 = summary["models"][M0], summary["models"][M1]
    counts = ("questions", "excluded_questions", "admitted_questions", "eligible_trials", "resolvable_trials")
    # model 0: 6 questions, none excluded, 12 eligible trials, of which 1 call error and 1 parse failure.
    assert [m0[k] for k in counts] == [6, 0, 6, 12, 10]
    assert (m0["call_error_trials"], m0["parse_failure_trials"]) == (1, 1)
    # model 1: questions 0 and 1 end on or before its cutoff: 4 admitted, 8 trials, all parsed.
    assert [m1[k] for k in counts] == [6, 2, 4, 8, 8]
    assert (m1["call_error_trials"], m1["parse_failure_trials"]) == (0, 0)


def test_pass_rates(summary: dict[str, Any]) -> None:
    m0, m1 = summary["models"][M0], summary["models"][M1]
    # reference-v4 pass@1 pools the resolvable trials: model 0 has 6 right of 10, model 1 5 of 8.
    assert (m0["pass_at_1_avg"], m1["pass_at_1_avg"]) == (0.6, 0.625)
    # pass-any: model 0 is right somewhere on questions 0, 1, 2, 4 (of 6); model 1 on all 4.
    assert (m0["pass_any_at_n"], m1["pass_any_at_n"]) == (0.666667, 1.0)
    assert (m0["pass_at_least_majority"], m1["pass_at_least_majority"]) == (0.666667, 1.0)
    # pass-all needs both trials resolvable and right: model 0 questions 1 and 4; model 1 question 3.
    assert (m0["pass_all_at_n"], m1["pass_all_at_n"]) == (0.333333, 0.25)
    # Majority vote over parsed answers, ties dropped: model 0 keeps 1 (A ✓), 3 (A ✗), 4 (A ✓),
    # 5 (D ✗) → 2/4; model 1 keeps only question 3 (B ✓).
    assert (m0["majority_vote_accuracy"], m1["majority_vote_accuracy"]) == (0.5, 1.0)


def test_exam_means_per_bucket(summary: dict[str, Any]) -> None:
    # Per question: right answers over counted trials (call errors not counted, a parse failure
    # counts 0); per bucket, the mean over its questions.
    # model 0: q0 1/2, q1 1, q2 1/2, q3 0/1, q4 1, q5 0/2.
    assert summary["models"][M0]["exam_avg"] == {
        "yes_no": 0.5,  # (q1 1 + q3 0) / 2
        "binary": 0.75,  # (q0 0.5 + q4 1) / 2
        "mc_single": 0.25,  # (q2 0.5 + q5 0) / 2
        "mc_multi": None,
    }
    # model 1: q2 1/2, q3 1, q4 1/2, q5 1/2.
    assert summary["models"][M1]["exam_avg"] == {
        "yes_no": 1.0,
        "binary": 0.5,
        "mc_single": 0.5,
        "mc_multi": None,
    }


def test_validity_rates(summary: dict[str, Any]) -> None:
    m0, m1 = summary["models"][M0], summary["models"][M1]
    # Over eligible trials: model 0 has 1 call error and 1 parse failure in 12.
    assert (m0["error_rate"], m0["parse_failure_rate"], m0["resolvable_rate"]) == (
        0.083333,
        0.083333,
        0.833333,
    )
    assert (m1["error_rate"], m1["parse_failure_rate"], m1["resolvable_rate"]) == (0.0, 0.0, 1.0)


def test_counter_totals_and_averages(summary: dict[str, Any]) -> None:
    m0, m1 = summary["models"][M0], summary["models"][M1]
    # model 1, questions 2..5, samples 0 and 1:
    #   prompt 2·(1020 + 1030 + 1040 + 1050) + 4 = 8284 → 1035.5 per trial;
    #   searches (2,0) (0,1) (1,2) (2,0) = 8 → 1.0; steps 8 + 8 = 16 → 2.0;
    #   completion 2·(202 + 203 + 204 + 205) = 1628; reasoning 50·8 = 400;
    #   latency 2·(4·1500 + 100·14) + 7·4 = 14828 → 1853.5.
    assert (m1["prompt_tokens"], m1["avg_prompt_tokens"]) == (8284, 1035.5)
    assert (m1["search_calls"], m1["avg_tool_calls"], m1["avg_react_steps"]) == (8, 1.0, 2.0)
    assert (m1["completion_tokens"], m1["reasoning_tokens"], m1["avg_latency_ms"]) == (1628, 400, 1853.5)
    # model 0, questions 0..5: the call error (q3, s1) stores zeros and is averaged as such.
    #   prompt 2·(1000 + … + 1050) + 6 − 1031 = 11275 → 11275 / 12 = 939.583333;
    #   searches (0,1) (1,2) (2,0) (0,–) (1,2) (2,0) = 11 → 0.916667; steps 11 + 11 = 22 → 1.833333;
    #   completion 2·(200 + … + 205) − 203 = 2227; reasoning 0.
    assert (m0["prompt_tokens"], m0["avg_prompt_tokens"]) == (11275, 939.583333)
    assert (m0["search_calls"], m0["avg_tool_calls"], m0["avg_react_steps"]) == (11, 0.916667, 1.833333)
    assert (m0["completion_tokens"], m0["reasoning_tokens"]) == (2227, 0)
