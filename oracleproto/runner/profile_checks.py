"""Refuse, before any call, a harness profile that cannot send what this run's settings ask for.

Load-time validation checks a profile on its own; these checks need the run settings too: which
body members the models make present, whether nudges or the final-answer retry are switched on.
"""

from __future__ import annotations

from oracleproto.errors import ConfigError
from oracleproto.profile import HarnessProfile
from oracleproto.providers.llm_body import check_llm_key_order
from oracleproto.settings.model import Settings


def check_profile_settings(profile: HarnessProfile, settings: Settings) -> None:
    """Raise ``ConfigError`` naming the profile, the setting and the fix when they do not fit."""
    react = settings.react
    where = f"harness profile {profile.name!r}"
    if react.min_search_calls > 0 and profile.injection_policy != "earlier":
        raise ConfigError(
            f"REACT_MIN_SEARCH_CALLS={react.min_search_calls}: the {where} uses the 'oracleproto' injection "
            "policy, which has no nudges (the paper runs with 0 and the reflection scaffold drives search "
            "depth); set it to 0, or use a profile with the 'earlier' policy"
        )
    injections = profile.texts.injections
    if react.min_search_calls > 0 and react.max_nudges > 0 and injections.nudge is None:
        raise ConfigError(
            f"REACT_MIN_SEARCH_CALLS={react.min_search_calls} sends nudges, but the {where} has no "
            "texts.injections.nudge; write the text or set REACT_MIN_SEARCH_CALLS=0"
        )
    if react.final_answer_retry and injections.final_answer_retry is None:
        raise ConfigError(
            f"REACT_FINAL_ANSWER_RETRY=true, but the {where} has no texts.injections.final_answer_retry; "
            "write the text or set REACT_FINAL_ANSWER_RETRY=false"
        )
    searching = any(c > 0 for c in settings.run.grid_c_list)
    check_llm_key_order(profile, settings.llm, tools=searching)
