"""The counters of a sample and the status texts a harness profile fills with them (schema §1, §4).

Step numbering (every text the model sees): step ``k`` is the k-th LLM call of the sample,
``1 ≤ k ≤ N`` with ``N = REACT_MAX_STEPS``. A text belongs to step ``k``: an injected user message
is read by the step-``k`` call, a tool message answers a tool call of the step-``k`` call. ``s`` is
the number of searches executed so far (failed ones too); ``C_shown`` is the search cap the model
is told (0 when the sample cannot search).

Everything here is pure: the loop feeds in its counters and gets back text.
"""

from __future__ import annotations

from dataclasses import dataclass

from oracleproto.errors import ConfigError
from oracleproto.profile.model import Texts
from oracleproto.profile.placeholders import fill


@dataclass(frozen=True)
class Counters:
    """The live counters of one sample at one step."""

    step: int
    max_steps: int
    searches: int
    #: C_shown: the cap the model is told (0 when the sample cannot search).
    max_searches: int
    #: ``REACT_MIN_SEARCH_CALLS`` (only the nudge text shows it).
    min_searches: int = 0

    def values(self) -> dict[str, str]:
        """The counter placeholders (§1) and their values."""
        return {
            "step": str(self.step),
            "max_steps": str(self.max_steps),
            "steps_left_including_current": str(self.max_steps - self.step + 1),
            "steps_left_after_current": str(self.max_steps - self.step),
            "used": str(self.searches),
            "max_search_calls": str(self.max_searches),
            "searches_left": str(max(self.max_searches - self.searches, 0)),
            "min_search_calls": str(self.min_searches),
        }


@dataclass(frozen=True)
class StatusTexts:
    """A profile's status texts, filled with a sample's counters."""

    texts: Texts

    def search_clause(self, counters: Counters) -> str:
        """``texts.search_clause`` (``search_clause_disabled`` when nothing may be searched)."""
        text = self.texts.search_clause
        if counters.max_searches == 0 and self.texts.search_clause_disabled is not None:
            text = self.texts.search_clause_disabled
        return fill(text, counters.values())

    def values(self, counters: Counters) -> dict[str, str]:
        """Counters plus the derived ``search_clause`` and ``status_header``."""
        values = counters.values()
        values["search_clause"] = self.search_clause(counters)
        values["status_header"] = fill(self.texts.status_header, values)
        return values

    def header(self, counters: Counters) -> str:
        """The status header of this step."""
        return self.values(counters)["status_header"]

    def tool_error_status(self, counters: Counters, *, strips: bool) -> str | None:
        """``texts.tool_error_status`` with the strips or default hint; None when the profile has none."""
        status = self.texts.tool_error_status
        if status is None:
            return None
        values = self.values(counters)
        hint = self.texts.tool_error_hint_strips if strips else self.texts.tool_error_hint_default
        values["tool_error_hint"] = fill(hint or "", counters.values())
        return fill(status, values)

    def injection(self, name: str, counters: Counters) -> str:
        """The user message of injection ``name``, filled."""
        text = getattr(self.texts.injections, name)
        if text is None:
            # Validation refuses a profile whose policy sends a missing text; this is a run setting
            # (nudges, the retry) that needs one the profile does not have.
            raise ConfigError(
                f"the harness profile has no texts.injections.{name}, but this run sends it; "
                "write the text in the profile or change the setting that asks for it"
            )
        return fill(text, self.values(counters))
