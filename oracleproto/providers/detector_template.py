"""The leak detector's prompt (paper App. B.5, profile §8): the profile's, or ``LEAK_DETECTOR_PROMPT_FILE``.

The template is data: ``{{field}}`` placeholders for the six whitelisted fields are replaced
literally, in one pass; every other brace is text. What a field the result lacks shows, and
whether the page body carries its truncation marker, are the profile's (built in: ``(not given)``,
no marker). Nothing else of the run can reach the detector: there is no placeholder for it.

``LEAK_DETECTOR_PROMPT_FILE`` is a shorthand that replaces only the profile's template text; the
missing-field texts and the marker rule stay the profile's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from oracleproto.errors import ConfigError
from oracleproto.primitives.hashing import sha256_16
from oracleproto.profile.builtin import DETECTOR_TEMPLATE, builtin_profile
from oracleproto.profile.model import HarnessProfile, MissingText
from oracleproto.profile.placeholders import fill, format_spelling
from oracleproto.prompts.placeholders import line_of, spelled, unknown_placeholders
from oracleproto.prompts.text_file import read_text_file
from oracleproto.providers.types import SearchResult
from oracleproto.settings.model import DetectorSettings

#: The only fields of a result the detector may see (paper App. B.5), plus the cutoff.
WHITELISTED_FIELDS = ("title", "url", "published_date", "content", "raw_content", "cutoff_date")
_PAGE_FIELDS = WHITELISTED_FIELDS[:-1]
PROMPT_FILE_SETTING = "LEAK_DETECTOR_PROMPT_FILE"
#: What the built-in profile shows for a missing published date or page body.
NOT_GIVEN = "(not given)"
#: The built-in template's fingerprint as first recorded (sha256-16 of its ``str.format``
#: spelling, ``{cutoff_date}`` and ``{{"verdict": …}}``): kept so runs recorded before the template
#: became data still resume, and the published snapshots keep their value.
BUILTIN_DETECTOR_PROMPT_HASH = "e5ec48d2ffbe0c46"
#: (field, what it shows when missing) pairs: hashable, so a template stays a frozen value.
MissingRules = tuple[tuple[str, MissingText], ...]

# Re-exported: the built-in text's single source is the built-in profile.
__all__ = [
    "BUILTIN_DETECTOR_PROMPT_HASH",
    "DETECTOR_TEMPLATE",
    "NOT_GIVEN",
    "PROMPT_FILE_SETTING",
    "WHITELISTED_FIELDS",
    "DetectorTemplate",
    "file_fingerprint",
    "profile_fingerprint",
    "template_problems",
]


def _builtin_missing() -> MissingRules:
    return tuple(sorted(builtin_profile().detector.missing.items()))


def file_fingerprint(text: str) -> str:
    """A prompt file's ``leak_detector_prompt_hash``: sha256-16 of its text (built-in text: its own)."""
    return BUILTIN_DETECTOR_PROMPT_HASH if text == DETECTOR_TEMPLATE else sha256_16(text)


def profile_fingerprint(profile: HarnessProfile) -> str:
    """A profile template's fingerprint, computed as ``fingerprints.detector_template`` says (§11)."""
    template = profile.detector.template
    if profile.fingerprints.detector_template == "format_spelling":
        return sha256_16(format_spelling(template))
    return sha256_16(template)


@dataclass(frozen=True)
class DetectorTemplate:
    """A validated detector prompt: its text, the profile's filling rules, its fingerprint.

    ``fingerprint`` is the run's ``leak_detector_prompt_hash``; left empty it is the prompt-file
    rule (sha256-16 of the text, the built-in text keeping its recorded value).
    """

    text: str
    #: Per page field, the text shown when its value counts as missing (profile ``detector.missing``).
    missing: MissingRules = field(default_factory=_builtin_missing)
    #: The page body is shown with its truncation marker (profile ``truncation.detector_sees_marker``).
    sees_marker: bool = False
    fingerprint: str = ""
    #: An empty page body counts as absent (profile ``tool_result.raw_content_empty_is_absent``, §7).
    empty_body_is_absent: bool = False

    def __post_init__(self) -> None:
        if not self.fingerprint:
            # A frozen dataclass sets a derived default only this way.
            object.__setattr__(self, "fingerprint", file_fingerprint(self.text))

    @classmethod
    def builtin(cls) -> DetectorTemplate:
        """The built-in profile's template."""
        return cls.from_profile(builtin_profile())

    @classmethod
    def from_profile(cls, profile: HarnessProfile) -> DetectorTemplate:
        """``profile``'s template and rules (the profile reader has validated its placeholders)."""
        return cls(
            profile.detector.template,
            tuple(sorted(profile.detector.missing.items())),
            profile.truncation.detector_sees_marker,
            profile_fingerprint(profile),
            profile.tool_result.raw_content_empty_is_absent,
        )

    @classmethod
    def from_text(cls, text: str, *, source: str, profile: HarnessProfile | None = None) -> DetectorTemplate:
        """``text`` checked (placeholders, the cutoff and a page field), with ``profile``'s rules.

        ConfigError naming ``source``. The fingerprint is the prompt-file rule whatever the profile says.
        """
        problems = template_problems(text)
        if problems:
            listed = "\n".join(f"  - {problem}" for problem in problems)
            raise ConfigError(f"{source} is not a usable detector prompt template:\n{listed}")
        rules = cls.from_profile(profile if profile is not None else builtin_profile())
        return cls(text, rules.missing, rules.sees_marker, empty_body_is_absent=rules.empty_body_is_absent)

    @classmethod
    def from_file(
        cls, path: Path, *, setting: str = PROMPT_FILE_SETTING, profile: HarnessProfile | None = None
    ) -> DetectorTemplate:
        """The template in ``path`` (UTF-8 text, at most 1 MiB), with ``profile``'s rules."""
        text = read_text_file(path, setting=setting)
        return cls.from_text(text, source=f"{setting} {path}", profile=profile)

    @classmethod
    def from_settings(
        cls, settings: DetectorSettings, profile: HarnessProfile | None = None
    ) -> DetectorTemplate:
        """``LEAK_DETECTOR_PROMPT_FILE``'s template with ``profile``'s rules, else ``profile``'s own."""
        if settings.prompt_file is not None:
            return cls.from_file(settings.prompt_file, profile=profile)
        return cls.from_profile(profile if profile is not None else builtin_profile())

    @property
    def is_builtin(self) -> bool:
        """True for the built-in text (also when a file holds exactly that text)."""
        return self.text == DETECTOR_TEMPLATE

    def _shown(self, name: str, value: str | None) -> str:
        rule = dict(self.missing).get(name)
        if rule is None:
            return value if value is not None else ""
        if value is None or (value == "" and rule.when == "absent_null_or_empty"):
            return rule.text
        return value

    def render(self, result: SearchResult, cutoff: date) -> str:
        """The prompt for one result: the template filled with the whitelisted fields only."""
        body = None if result.raw_content == "" and self.empty_body_is_absent else result.raw_content
        # Only a cut body has a marker, and a cut body is never empty (M > 0): the missing-text
        # rules below see the body as Tavily sent it, never a bare marker.
        if body and self.sees_marker:
            body += result.truncation_marker
        values = {
            "title": result.title,
            "url": result.url,
            "published_date": result.published_date,
            "content": result.content,
            "raw_content": body,
        }
        fields = {name: self._shown(name, value) for name, value in values.items()}
        fields["cutoff_date"] = cutoff.isoformat()
        return fill(self.text, fields)


def template_problems(text: str) -> list[str]:
    """What makes ``text`` unusable as a detector template (empty when it is fine)."""
    if not text.strip():
        return ["the template is empty; write the prompt, with {{cutoff_date}} and the page fields"]
    allowed = ", ".join(spelled(name) for name in WHITELISTED_FIELDS)
    problems = [
        f"unknown placeholder {token} (line {line_of(text, token)}); the allowed placeholders are {allowed} "
        "(the detector sees nothing else of a run; other braces are literal text)"
        for token in unknown_placeholders(text, WHITELISTED_FIELDS)
    ]
    if spelled("cutoff_date") not in text:
        problems.append(
            "no {{cutoff_date}}: the detector cannot judge leakage without the cutoff; add it "
            "(placeholders take double braces — {cutoff_date} is literal text)"
        )
    if not any(spelled(name) in text for name in _PAGE_FIELDS):
        pages = ", ".join(spelled(name) for name in _PAGE_FIELDS)
        problems.append(f"no page field: the detector would judge nothing; add at least one of {pages}")
    return problems
