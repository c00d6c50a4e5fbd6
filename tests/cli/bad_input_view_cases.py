"""Bad-input cases of ``oracleproto view``: what was asked for is not a (readable) run or bundle."""

from __future__ import annotations

import json
from pathlib import Path

from bad_input_support import RUN_ID, Case, in_run, mkdir, run_db, write


def _schema_99(run: Path) -> None:
    path = run / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["schema_version"] = 99
    path.write_text(json.dumps(manifest), encoding="utf-8")


def view_cases() -> list[Case]:
    """view: arguments, missing and damaged runs, bundles that are not bundles, the output path."""
    run = "{run}"
    out = ("--out", "v.html")
    return [
        Case("view:no-arg", ("view",), 2, "Missing argument 'RUN'"),
        Case("view:nonexistent", ("view", "nope", *out), 2, "nope: run directory not found"),
        Case(
            "view:unknown-id",
            ("view", "20990101-000000-0000", "--runs-root", "runs", *out),
            2,
            "run directory not found",
        ),
        Case(
            "view:manifest-missing",
            ("view", "runs/" + RUN_ID, *out),
            2,
            "manifest not found",
            mkdir("runs/" + RUN_ID),
        ),
        Case(
            "view:not-a-bundle",
            ("view", "b.tar.gz", *out),
            2,
            "not a readable .tar.gz bundle",
            write("b.tar.gz", "garbage"),
        ),
        Case(
            "view:empty-bundle",
            ("view", "b.tar.gz", *out),
            2,
            "b.tar.gz: not a readable .tar.gz bundle (empty file)",
            write("b.tar.gz", b""),
        ),
        Case(
            "view:schema-99",
            ("view", run, *out),
            2,
            "schema_version 99 is not one this oracleproto reads",
            in_run(_schema_99),
        ),
        Case(
            "view:db-missing",
            ("view", run, *out),
            2,
            "but its database is absent",
            in_run(lambda r: run_db(r).unlink()),
        ),
        Case("view:port-range", ("view", run, "--port", "70000"), 2, "Invalid value for '--port'"),
        Case(
            "view:out-is-directory",
            ("view", run, "--out", "d"),
            2,
            "is a directory",
            in_run(lambda r: (r.parent.parent / "d").mkdir()),
        ),
    ]
