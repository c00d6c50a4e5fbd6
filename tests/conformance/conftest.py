"""Fixtures of the conformance tests: the earlier harness's captures, read in place from ../shared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oracleproto.conformance.questions import QuestionMatcher
from oracleproto.conformance.template import DetectorTemplateMatcher
from oracleproto.dataset.loader import load_questions
from oracleproto.dataset.models import Question
from tests.conftest import SHARED

EARLIER = SHARED / "fixtures" / "earlier-harness"
DETECTOR_MODEL = "sim/detector"


@pytest.fixture(scope="session")
def earlier() -> Path:
    """../shared/fixtures/earlier-harness (never copied into the repository)."""
    if not EARLIER.exists():
        pytest.fail(f"{EARLIER} is missing: tests need ../shared beside the repository")
    return EARLIER


@pytest.fixture(scope="session")
def detector_template_text(earlier: Path) -> str:
    """The earlier harness's detector template, from its profile (key detector.template)."""
    profile = json.loads((earlier / "earlier-harness.profile.json").read_text(encoding="utf-8"))
    template: str = profile["detector"]["template"]
    return template


@pytest.fixture(scope="session")
def template(detector_template_text: str) -> DetectorTemplateMatcher:
    return DetectorTemplateMatcher(detector_template_text)


@pytest.fixture(scope="session")
def subset_questions(earlier: Path) -> list[Question]:
    """The 6 questions of subset6.db the captures ran on."""
    return load_questions(earlier / "subset6.db")


@pytest.fixture(scope="session")
def matcher(subset_questions: list[Question]) -> QuestionMatcher:
    return QuestionMatcher(subset_questions)
