"""Bad-input cases of the set-up commands: ``init`` and ``demo fetch`` never overwrite silently."""

from __future__ import annotations

from bad_input_support import Case, all_of, mkdir, write


def setup_cases() -> list[Case]:
    """init and demo fetch: existing files, folders that are files, unknown options."""
    existing_run = "x/cassettes/demo/20260101-000000-de00"
    return [
        Case(
            "init:env-exists",
            ("init",),
            2,
            ".env already exists; nothing was written: edit it, or pass --force to replace it",
            write(".env", "OPENAI_API_KEY=\n"),
        ),
        Case(
            "init:toml-exists",
            ("init",),
            2,
            "oracleproto.toml already exists; nothing was written: edit it",
            write("oracleproto.toml", "[run]\n"),
        ),
        Case(
            "init:both-exist",
            ("init",),
            2,
            ".env and oracleproto.toml already exist; nothing was written: edit them, or pass --force to "
            "replace them",
            all_of(write(".env", "X=1\n"), write("oracleproto.toml", "[run]\n")),
        ),
        Case("init:folder-is-file", ("init", "f"), 2, "Directory 'f' is a file", write("f", "x")),
        Case("init:unknown-option", ("init", "--yes"), 2, "No such option '--yes'"),
        Case(
            "demo-fetch:dir-is-file",
            ("demo", "fetch", "--dir", "f"),
            2,
            "Directory 'f' is a file",
            write("f", "x"),
        ),
        Case(
            "demo-fetch:already-there",
            ("demo", "fetch", "--dir", "x"),
            2,
            "already exists; it is the demo run",
            mkdir(existing_run),
        ),
        Case("demo-fetch:extra-argument", ("demo", "fetch", "somewhere"), 2, "Got unexpected extra argument"),
    ]
