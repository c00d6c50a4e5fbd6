"""Which dataset question a main-LLM request is about, from its first user message.

Our own rendered prompts identify a question exactly. Another harness renders its own prompt,
so the fallback is the question whose ``event`` text occurs in the message; when several do
(one event quoting another), the longest wins, and two different questions tied at the longest
leave the request unidentified rather than guessed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from oracleproto.dataset.models import Question


class QuestionMatcher:
    """Identify question ids from first user messages (results memoised: samples share prompts)."""

    def __init__(self, questions: Sequence[Question], rendered: Mapping[str, str] | None = None) -> None:
        self._exact = {text: qid for qid, text in (rendered or {}).items()}
        by_event: dict[str, set[str]] = {}
        for question in questions:
            if question.event:
                by_event.setdefault(question.event, set()).add(question.id)
        #: Longest events first, so the first hit is the longest one.
        self._events = sorted(by_event.items(), key=lambda item: -len(item[0]))
        self._memo: dict[str, tuple[str | None, str | None]] = {}

    def identify(self, message: str) -> tuple[str | None, str | None]:
        """``(question id, None)``, or ``(None, why not)`` when no single question fits."""
        found = self._memo.get(message)
        if found is None:
            found = self._memo[message] = self._identify(message)
        return found

    def _identify(self, message: str) -> tuple[str | None, str | None]:
        exact = self._exact.get(message)
        if exact is not None:
            return exact, None
        for index, (event, ids) in enumerate(self._events):
            if event not in message:
                continue
            tied = set(ids)
            for other, other_ids in self._events[index + 1 :]:
                if len(other) < len(event):
                    break
                if other in message:
                    tied |= other_ids
            if len(tied) == 1:
                return next(iter(tied)), None
            return None, f"the events of questions {', '.join(sorted(tied))} all occur in it"
        return None, "no question's event text occurs in the first user message"
