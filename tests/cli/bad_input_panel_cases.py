"""Bad input of ``panel build|verify|replay``: refused with exit 2, a message saying what and how
to fix it, and nothing written (the panel is built in a temporary folder and renamed into place)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from bad_input_support import RUN_ID, Case, all_of, in_run, mkdir, write

ZERO = "0" * 64


def _member(sha: str = ZERO, path: str = f"runs/{RUN_ID}") -> str:
    return f'[[member]]\npath = "{path}"\nsha256 = "{sha}"\n'


def _unchanged(_: Path) -> None:
    return None


def _listed_twice(run: Path) -> None:
    sha = hashlib.sha256((run / "attestation.json").read_bytes()).hexdigest()
    (run.parents[1] / "P.toml").write_text(_member(sha) * 2, encoding="utf-8")


def _case(cid: str, args: tuple[str, ...], message: str, **kw: object) -> Case:
    return Case(f"panel:{cid}", args, 2, message, **kw)  # type: ignore[arg-type]


def panel_cases() -> list[Case]:
    """The table's rows for panels."""
    build = ("panel", "build", "P.toml", "--out", "out")
    return [
        _case("no-file", build, "P.toml: panel file not found"),
        _case("not-toml", build, "not valid TOML", setup=write("P.toml", "name = \n")),
        _case("not-utf8", build, "cannot be read", setup=write("P.toml", b"name = '\xe9'\n")),
        _case("no-members", build, "member: Field required", setup=write("P.toml", "name = 'x'\n")),
        _case("bad-sha", build, "is not 64 lower-case hex digits", setup=write("P.toml", _member("abc"))),
        _case(
            "path-and-store",
            build,
            "give exactly one of 'path' and 'store'",
            setup=write("P.toml", _member() + 'store = "x"\n'),
        ),
        _case(
            "missing-member",
            build,
            "member path runs/nope: missing",
            setup=write("P.toml", _member(path="runs/nope")),
        ),
        _case(
            "sha-mismatch",
            build,
            f"sha256 mismatch — the panel file pins {ZERO} but its attestation.json has",
            setup=all_of(in_run(_unchanged), write("P.toml", _member())),
        ),
        _case(
            "out-not-empty",
            build,
            "exists and is not an empty folder",
            setup=all_of(write("P.toml", _member()), write("out/x", "x")),
        ),
        _case(
            "run-given-twice",
            build,
            "give each run once",
            setup=in_run(_listed_twice),
        ),
        _case(
            "verify-a-run",
            ("panel", "verify", "{run}"),
            "not a panel (no panel.json)",
            setup=in_run(_unchanged),
        ),
        _case(
            "replay-a-run",
            ("panel", "replay", "{run}"),
            "not a panel (no panel.json)",
            setup=in_run(_unchanged),
        ),
        _case(
            "verify-nothing", ("panel", "verify", "nope"), "nope: run directory not found", setup=mkdir("x")
        ),
    ]
