"""MkDocs hook: the settings reference, generated from the settings model at build time.

``docs/reference/settings.md`` holds the marker ``<!-- settings-reference -->``; this hook replaces
it with one table per section of ``oracleproto.toml`` (``run_config.SECTION_CLASSES``): every
field's environment variable, its config-file key, its default and its docstring, the same sources
``oracleproto init`` writes its templates from. Nothing generated is committed, so the page cannot
go stale; ``tests/docs/test_site.py`` checks every environment variable reaches the built page.
"""

from __future__ import annotations

from typing import Any

MARKER = "<!-- settings-reference -->"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("``", "`").replace("|", "\\|")


def _default(value: Any) -> str:
    from oracleproto.settings.init_templates import toml_value

    shown = toml_value(value)
    return "unset" if shown is None else f"`{_cell(shown)}`"


def settings_markdown() -> str:
    """Every section and field of the settings model as Markdown tables."""
    import inspect

    from oracleproto.settings.init_templates import _attribute_docs, env_name
    from oracleproto.settings.run_config import REFUSED, SECTION_CLASSES

    out: list[str] = []
    for section, cls in SECTION_CLASSES.items():
        doc = inspect.getdoc(cls) or ""
        out += [f"## `[{section}]`", "", _cell(doc), ""]
        out += ["| Environment variable | `oracleproto.toml` key | Default | Meaning |", "|---|---|---|---|"]
        docs = _attribute_docs(cls)
        for name, info in cls.model_fields.items():
            env = env_name(info)
            key = "— (`.env` or environment only)" if (section, name) in REFUSED else f"`{name}`"
            meaning = _cell(docs.get(name, "")).removesuffix(f"`{env}`.").rstrip()
            default = _default(info.get_default(call_default_factory=True))
            out.append(f"| `{env}` | {key} | {default} | {meaning} |")
        out.append("")
    return "\n".join(out)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Fill the settings page's marker; every other page is left as it is."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, settings_markdown())
