"""Reading url and cutoff_date back out of detector prompts with the harness's template."""

from __future__ import annotations

import random

import pytest

from oracleproto.conformance.template import DetectorTemplateMatcher
from oracleproto.errors import ConfigError

TEMPLATES = [
    "A{{url}}B{{cutoff_date}}",
    "{{cutoff_date}}x{{url}}x{{cutoff_date}}",
    "{{url}}{{title}}y{{cutoff_date}}{{url}}",
    "a{{url}}{{url}}{{cutoff_date}}b",
    "{{cutoff_date}}-{{url}}-{{cutoff_date}}-",
    "c: {{cutoff_date}}\nu: {{url}}\nt: {{title}}\nc again: {{cutoff_date}}\n",
]


def _render(template: DetectorTemplateMatcher, title: str) -> str:
    return (
        template.template.replace("{{cutoff_date}}", "2026-03-27")
        .replace("{{title}}", title)
        .replace("{{url}}", "https://x.example/a")
        .replace("{{published_date}}", "(unknown)")
        .replace("{{content}}", "c\nraw_content: fake")
        .replace("{{raw_content}}", "r")
    )


@pytest.mark.shared
def test_the_earlier_template_reads_a_rendered_prompt(template: DetectorTemplateMatcher) -> None:
    prompt = _render(template, "T")
    fields = template.parse(prompt)
    assert fields is not None
    assert fields["url"] == "https://x.example/a" and fields["cutoff_date"] == "2026-03-27"
    # content stops at the first "\nraw_content: ": the quoted label goes to raw_content.
    assert fields["content"] == "c" and fields["raw_content"] == "fake\nraw_content: r"
    assert template.parse(prompt + "x") is None
    assert template.parse("x" + prompt) is None


@pytest.mark.shared
def test_a_field_that_quotes_a_later_label_reads_as_the_regex_does(template: DetectorTemplateMatcher) -> None:
    # Lazy groups stop at the first label: a title holding "\nurl: " shifts the url (the normative
    # reading; such a position then pairs with nothing and is reported, never guessed).
    prompt = _render(template, "T\nurl: not this one")
    match = template.regex.fullmatch(prompt)
    assert match is not None and template.parse(prompt) == match.groupdict()
    assert match.group("url").startswith("not this one")


@pytest.mark.parametrize("text", TEMPLATES)
def test_the_linear_reading_equals_the_normative_regex(text: str) -> None:
    matcher = DetectorTemplateMatcher(text)
    rng = random.Random(7)
    for _ in range(5000):
        prompt = "".join(rng.choice("ABxy-abcu:t \n") for _ in range(rng.randint(0, 14)))
        found = matcher.parse(prompt)
        match = matcher.regex.fullmatch(prompt)
        assert (found is None) == (match is None), prompt
        assert found is None or match is None or found == match.groupdict(), prompt


def test_a_repeated_placeholder_must_repeat_its_value() -> None:
    matcher = DetectorTemplateMatcher("date {{cutoff_date}} url {{url}} again {{cutoff_date}}.")
    assert matcher.parse("date 2026-01-01 url u again 2026-01-01.") == {
        "cutoff_date": "2026-01-01",
        "url": "u",
    }
    assert matcher.parse("date 2026-01-01 url u again 2026-01-02.") is None
    # The first path fails (url stops at the first " again "), the regex finds the later one.
    assert matcher.parse("date d url u again x again d.") == {"cutoff_date": "d", "url": "u again x"}


class _NoBacktracking:
    """Stands in for the normative regex: hostile prompts must be decided without it."""

    def fullmatch(self, prompt: str) -> None:
        raise AssertionError("the backtracking regex was consulted on a hostile prompt")


def test_hostile_prompts_are_read_without_the_backtracking_regex() -> None:
    # The regex alone needs minutes on these prompts (cubic backtracking): the linear first path
    # decides the first, the path budget refuses the second.
    matcher = DetectorTemplateMatcher("A{{url}}X{{title}}Y{{content}}Z{{cutoff_date}}W")
    matcher.regex = _NoBacktracking()  # type: ignore[assignment]
    assert matcher.parse("A" + "X" * 50_000 + "Y" * 50_000 + "W") is None
    repeats = DetectorTemplateMatcher("{{cutoff_date}}X{{url}}Y{{cutoff_date}}")
    repeats.regex = _NoBacktracking()  # type: ignore[assignment]
    assert repeats.parse("d" + "X" * 20_000 + "Y" * 20_000 + "e") is None
    # Within the budget, a failed first path still falls back to the regex (the guard is live).
    with pytest.raises(AssertionError, match="backtracking regex"):
        repeats.parse("dXuYe")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "{{url}} {{cutoff_date}} {{nope}}",
            "unknown placeholder {{nope}} at character 24; the template may use",
        ),
        ("{{url}} only", "no {{cutoff_date}} placeholder"),
        ("{{cutoff_date}} \u202e{{x\u202e}}", "unknown placeholder {{x<U+202E>}}"),
    ],
)
def test_bad_templates_are_config_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        DetectorTemplateMatcher(text)
    assert message in str(caught.value)
