"""``oracleproto init``'s files, generated from the settings model so they never drift from it.

Two templates: a ``.env`` with every setting as a commented ``# NAME=default`` line under a one-line
help (keys left empty: real keys are typed in by the user, never written by us), and an experiment
config ``oracleproto.toml`` (``run_config``) with every section and every field a config file may
set, commented out with its default. Both are inert as written (everything commented), so writing
them changes no setting; uncommenting a line sets that one value.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import json
import textwrap
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, SecretStr
from pydantic.fields import FieldInfo

from oracleproto.primitives.fileio import PRIVATE_MODE, SHARED_MODE, atomic_write_text
from oracleproto.settings.run_config import DEFAULT_CONFIG_NAME, REFUSED, SECTION_CLASSES

ENV_NAME = ".env"
CONFIG_NAME = DEFAULT_CONFIG_NAME
#: Help longer than this is cut at its first sentence (one line per setting).
_HELP_MAX = 150


def env_name(info: FieldInfo) -> str:
    """The environment variable a settings field reads (its first alias)."""
    alias = info.validation_alias
    if isinstance(alias, AliasChoices) and alias.choices:
        return str(alias.choices[0])
    raise TypeError("every settings field has an environment alias")


@cache
def _attribute_docs(cls: type) -> dict[str, str]:
    """Field name → the docstring written under it in the class body (what the settings document)."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, after in itertools.pairwise(body):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[node.target.id] = after.value.value
    return docs


def field_help(cls: type, name: str) -> str:
    """One line of help for a field: its docstring, without the trailing ``ENV_NAME`` mention."""
    text = " ".join(_attribute_docs(cls).get(name, "").split())
    info = getattr(cls, "model_fields", {}).get(name)
    if info is not None:
        text = text.removesuffix(f"``{env_name(info)}``.").rstrip()
    if len(text) > _HELP_MAX:
        text = _first_sentence(text)
    return text.replace("``", "`") or "(undocumented)"


def _first_sentence(text: str) -> str:
    """Up to the first full stop outside parentheses (``(paper App. B.4)`` does not end it)."""
    depth = 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "." and depth == 0 and text[i + 1 : i + 2] == " ":
            return text[: i + 1]
    return text


def _default(info: FieldInfo) -> Any:
    return info.get_default(call_default_factory=True)


def env_value(value: Any) -> str:
    """A default as a ``.env`` value the settings read back to the same value."""
    if value is None or isinstance(value, SecretStr):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(env_value(v) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k}={env_value(v)}" for k, v in value.items())
    return str(value)


def toml_value(value: Any) -> str | None:
    """A default as a TOML value; ``None`` when it has none (an unset optional setting)."""
    if value is None or isinstance(value, SecretStr):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) or '""' for v in value) + "]"
    if isinstance(value, dict):
        pairs = ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items())
        return "{ " + pairs + " }" if pairs else "{}"
    return json.dumps(str(value))


def _section_title(cls: type) -> str:
    return (inspect.getdoc(cls) or "").splitlines()[0] if inspect.getdoc(cls) else cls.__name__


def env_template() -> str:
    """The commented ``.env`` template: every setting, its default and one line of help."""
    lines = [
        "# oracleproto settings, written by `oracleproto init`: every line is commented, the defaults apply.",
        "# Uncomment a line to set it. API keys go here or in the environment, never in oracleproto.toml;",
        "# keep this file out of version control. Precedence: command line > environment >",
        "# oracleproto.toml > this file > defaults.",
    ]
    for section, cls in SECTION_CLASSES.items():
        lines += ["", f"# ── [{section}] {_section_title(cls)}"]
        for name, info in cls.model_fields.items():
            lines.append(f"# {field_help(cls, name)}")
            lines.append(f"# {env_name(info)}={env_value(_default(info))}")
    return "\n".join(lines) + "\n"


def config_template() -> str:
    """The commented experiment config (TOML): every section, every field a config file may set."""
    lines = [
        "# oracleproto experiment config (written by `oracleproto init`), read by `oracleproto run`",
        "# from the working folder (or --config FILE) and recorded with the run. Every key is",
        "# commented: the defaults apply. Uncomment a key to set it; keys stay in .env (refused here).",
        "# Each key names the environment variable it stands for.",
    ]
    for section, cls in SECTION_CLASSES.items():
        lines += ["", f"# {_section_title(cls)}", f"[{section}]"]
        for name, info in cls.model_fields.items():
            if (section, name) in REFUSED:
                continue
            value = toml_value(_default(info))
            shown = f"{name} = {value}" if value is not None else f"{name} =  # unset by default"
            lines.append(f"# {field_help(cls, name)} ({env_name(info)})")
            lines.append(f"# {shown}")
    return "\n".join(lines) + "\n"


def write_templates(folder: Path, *, force: bool = False) -> list[Path]:
    """Write ``.env`` and ``oracleproto.toml`` into ``folder``; refuses existing files unless ``force``.

    Both are checked before either is written, so a refusal writes nothing; each file is written
    to a temporary name and renamed, so an interruption leaves no half file.
    """
    from oracleproto.errors import ConfigError

    targets = {folder / ENV_NAME: env_template(), folder / CONFIG_NAME: config_template()}
    existing = [p for p in targets if p.exists()]
    if existing and not force:
        names = " and ".join(str(p) for p in existing)
        them = "them" if len(existing) > 1 else "it"
        verb = "exist" if len(existing) > 1 else "exists"
        raise ConfigError(
            f"{names} already {verb}; nothing was written: edit {them}, or pass --force to replace {them}"
        )
    folder.mkdir(parents=True, exist_ok=True)
    for path, text in targets.items():
        # .env is where keys go: owner-only, like a key file; oracleproto.toml as any file the user makes.
        atomic_write_text(path, text, mode=PRIVATE_MODE if path.name == ".env" else SHARED_MODE)
    return list(targets)
