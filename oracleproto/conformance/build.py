"""One call from a capture file to a ready responder (what the ``conformance`` command wires in)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from oracleproto.conformance.capture import read_capture
from oracleproto.conformance.questions import QuestionMatcher
from oracleproto.conformance.responder import CaptureResponder
from oracleproto.conformance.samples import classify_capture
from oracleproto.conformance.template import DetectorTemplateMatcher
from oracleproto.dataset.models import Question


def build_responder(
    capture: Path,
    *,
    detector_model: str,
    detector_template: str,
    questions: Sequence[Question],
    rendered_prompts: Mapping[str, str] | None = None,
) -> CaptureResponder:
    """Read, validate and classify ``capture``, and return the transport that replays it.

    ``detector_template``: the harness profile's detector template (``{{name}}`` placeholders);
    ``rendered_prompts``: question id → our rendered user prompt, to identify questions exactly
    (the fallback is the question's event text). Raises ``CaptureError`` for a bad capture and
    ``ConfigError`` for a template without ``{{url}}`` and ``{{cutoff_date}}``.
    """
    template = DetectorTemplateMatcher(detector_template)
    classified = classify_capture(
        read_capture(capture),
        detector_model=detector_model,
        template=template,
        questions=QuestionMatcher(questions, rendered_prompts),
    )
    return CaptureResponder(classified, detector_model=detector_model, template=template)
