"""Read the fields back out of a detector prompt, given the template that rendered it.

A harness profile writes its detector template with literal ``{{name}}`` placeholders. The
normative reading is an anchored regular expression: literal parts escaped, each placeholder a
lazy DOTALL group, a repeated placeholder a back-reference, ``fullmatch``. Python's backtracking
makes that expression cubic (or worse) on hostile prompts full of separator look-alikes, so
:meth:`DetectorTemplateMatcher.parse` first walks the regex's own first path in linear time:
every lazy group stops at the first occurrence of what follows it. Without back-references that
path decides the match exactly (a later occurrence only leaves less text for the rest); with
them, a failed first path falls back to the regex, within a budget of candidate paths.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from oracleproto.conformance.text import safe_text
from oracleproto.errors import ConfigError

#: The fields a detector prompt may carry (the six whitelisted ones of the paper's App. B.5).
FIELDS = ("title", "url", "published_date", "content", "raw_content", "cutoff_date")
#: What a position needs from a prompt.
REQUIRED = ("url", "cutoff_date")
_PLACEHOLDER = re.compile(r"\{\{([^{}]*)\}\}")
#: Candidate paths the regex fallback may have to try before it is refused (hostile prompts).
_PATH_BUDGET = 10_000


@dataclass(frozen=True)
class _Token:
    kind: str  # "literal", "group" (first use of a name) or "backref" (a repeat)
    text: str  # the literal text, or the placeholder name


def _tokens(template: str) -> list[_Token]:
    tokens: list[_Token] = []
    seen: set[str] = set()
    last = 0
    for match in _PLACEHOLDER.finditer(template):
        name = match.group(1)
        if name not in FIELDS:
            raise ConfigError(
                f"detector template: unknown placeholder {{{{{safe_text(name)}}}}} at character "
                f"{match.start()}; the template may use {', '.join(FIELDS)}"
            )
        if match.start() > last:
            tokens.append(_Token("literal", template[last : match.start()]))
        tokens.append(_Token("backref" if name in seen else "group", name))
        seen.add(name)
        last = match.end()
    if last < len(template):
        tokens.append(_Token("literal", template[last:]))
    missing = [name for name in REQUIRED if name not in seen]
    if missing:
        raise ConfigError(
            f"detector template: no {{{{{missing[0]}}}}} placeholder; a conformance position needs "
            f"{' and '.join(REQUIRED)}: give the template text the harness used "
            "(the profile's detector.template)"
        )
    return tokens


def template_regex(tokens: list[_Token]) -> re.Pattern[str]:
    """The normative expression: escaped literals, lazy DOTALL groups, back-references for repeats."""
    parts = []
    for token in tokens:
        if token.kind == "literal":
            parts.append(re.escape(token.text))
        elif token.kind == "group":
            parts.append(f"(?P<{token.text}>.*?)")
        else:
            parts.append(f"(?P={token.text})")
    return re.compile("".join(parts), re.DOTALL)


class DetectorTemplateMatcher:
    """Parse prompts rendered from one detector template (``{{name}}`` placeholders)."""

    def __init__(self, template: str) -> None:
        self.template = template
        self._tokens = _tokens(template)
        self.regex = template_regex(self._tokens)
        self._has_repeats = any(t.kind == "backref" for t in self._tokens)

    def parse(self, prompt: str) -> dict[str, str] | None:
        """The placeholder values of ``prompt``, or None when the template does not produce it."""
        found = self._first_path(prompt)
        if found is not None or not self._has_repeats:
            return found
        if self._paths(prompt) > _PATH_BUDGET:
            return None
        match = self.regex.fullmatch(prompt)
        return match.groupdict() if match is not None else None

    def _fixed(self, token: _Token, values: dict[str, str]) -> str | None:
        """What ``token`` must match exactly, or None for a group (it matches anything)."""
        if token.kind == "literal":
            return token.text
        if token.kind == "backref":
            return values.get(token.text, "")
        return None

    def _first_path(self, prompt: str) -> dict[str, str] | None:
        values: dict[str, str] = {}
        tokens = self._tokens
        pos = 0
        for index, token in enumerate(tokens):
            if token.kind == "group":
                end = self._group_end(prompt, pos, index, values)
                if end is None:
                    return None
                values[token.text] = prompt[pos:end]
                pos = end
                continue
            fixed = self._fixed(token, values) or ""
            if not prompt.startswith(fixed, pos):
                return None
            pos += len(fixed)
        return values if pos == len(prompt) else None

    def _group_end(self, prompt: str, pos: int, index: int, values: dict[str, str]) -> int | None:
        """Where the lazy group at ``index`` stops on the first path, or None when it cannot."""
        tokens = self._tokens
        if index + 1 == len(tokens):
            return len(prompt)
        follower = tokens[index + 1]
        if follower.kind == "group":
            return pos  # lazy: empty, the next group takes the text
        fixed = "" if follower.text == tokens[index].text else self._fixed(follower, values) or ""
        if index + 2 == len(tokens):  # the follower ends the prompt
            end = len(prompt) - len(fixed)
            return end if end >= pos and prompt.endswith(fixed) else None
        found = prompt.find(fixed, pos)
        return found if found >= 0 else None

    def _paths(self, prompt: str) -> int:
        """An upper bound on the regex's candidate paths: the product of its literals' occurrences."""
        counts = [prompt.count(t.text) + 1 for t in self._tokens if t.kind == "literal" and t.text]
        return math.prod(counts)
