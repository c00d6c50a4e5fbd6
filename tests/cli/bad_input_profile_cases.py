"""Bad-input cases for harness profiles (``profile *``, ``--profile``, ``HARNESS_PROFILE``) and
``conformance``: each exits 2 naming the file, the key path or the flag, and writes nothing."""

from __future__ import annotations

import json
from typing import Any

from bad_input_support import RUN_ID, Case, all_of, mkdir, write

from oracleproto.profile import builtin_profile_data

REPLAY = ("--run-id", RUN_ID, "--runs-root", "runs", "--no-progress")
RECORDED = mkdir(f"runs/{RUN_ID}")


def _profile(**edits: Any) -> str:
    data = builtin_profile_data()
    for path, value in edits.items():
        *parents, last = path.split("__")
        target = data
        for key in parents:
            target = target[key]
        target[last] = value
    return json.dumps(data)


#: (case name, content, substring of the message) of a profile file p.json.
PROFILE_FILES: list[tuple[str, str | bytes | None, str]] = [
    ("missing", None, "p.json: no such file"),
    ("not-utf8", b'{"name": "\xff"}', "p.json: not UTF-8 text: byte 0xff"),
    ("not-json", "{", "p.json: not valid JSON (Expecting property name enclosed in double quotes"),
    ("duplicate-key", '{"name": "a", "name": "b"}', "the key 'name' appears twice"),
    ("array", "[]", "<top level>: must be an object, got an array"),
    (
        "placeholder",
        _profile(texts__status_header="{{nope}}"),
        "texts.status_header: unknown placeholder {{nope}}",
    ),
    (
        "policy",
        _profile(injection_policy="later"),
        "injection_policy: must be one of 'earlier', 'oracleproto'",
    ),
    ("version", _profile(profile_version=2), "profile_version: must be 1"),
    ("unknown-key", _profile(extra=True), "extra: unknown key"),
]


def _file_cases() -> list[Case]:
    cases: list[Case] = []
    for name, content, message in PROFILE_FILES:
        setup = write("p.json", content) if content is not None else None
        cases += [
            Case(f"profile:validate-{name}", ("profile", "validate", "p.json"), 2, message, setup),
            Case(f"profile:show-{name}", ("profile", "show", "p.json"), 2, message, setup),
            Case(
                f"profile:render-{name}",
                ("render", "demo", "--protocols", "default", "--profile", "p.json"),
                2,
                message,
                setup,
            ),
        ]
    return cases


def profile_cases() -> list[Case]:
    """Every ``profile`` subcommand, ``--profile`` on run/plan, and ``conformance``."""
    bad = write("p.json", _profile(injection_policy="later"))
    nudges = write("p.json", _profile())
    return [
        *_file_cases(),
        Case("profile:diff-bad-right", ("profile", "diff", "builtin", "p.json"), 2, "injection_policy", bad),
        Case(
            "profile:export-no-run", ("profile", "export", "nowhere"), 2, "nowhere: run directory not found"
        ),
        Case(
            "profile:export-out-is-dir",
            ("profile", "export", "builtin", "--out", "d"),
            2,
            "File 'd' is a directory",
            mkdir("d"),
        ),
        Case(
            "profile:run-bad-file",
            ("run", *REPLAY, "--profile", "p.json"),
            2,
            "injection_policy",
            all_of(bad, RECORDED),
        ),
        Case("profile:run-empty", ("run", *REPLAY, "--profile", ""), 2, "--profile is empty"),
        Case(
            "profile:env-bad-file",
            ("plan", "--models", "sim/careful"),
            2,
            "HARNESS_PROFILE p.json",
            bad,
            env={"HARNESS_PROFILE": "p.json", "MODEL_TRAINING_CUTOFFS": "sim/careful=2026-01"},
        ),
        Case(
            "profile:nudges-need-the-earlier-policy",
            ("plan", "--models", "sim/careful", "--profile", "p.json"),
            2,
            "REACT_MIN_SEARCH_CALLS=2: the harness profile 'oracleproto' uses the 'oracleproto' "
            "injection policy",
            nudges,
            env={"REACT_MIN_SEARCH_CALLS": "2", "MODEL_TRAINING_CUTOFFS": "sim/careful=2026-01"},
        ),
        Case("conformance:no-capture", ("conformance", "absent.jsonl"), 2, "'absent.jsonl' does not exist"),
        Case(
            "conformance:bad-capture",
            ("conformance", "c.jsonl", "--models", "sim/careful", "--dataset", "demo"),
            2,
            "c.jsonl",
            write("c.jsonl", "{not json}\n"),
            env={"MODEL_TRAINING_CUTOFFS": "sim/careful=2026-01", "LEAK_DETECTOR_MODEL": "sim/detector"},
        ),
        Case(
            "conformance:bad-profile",
            ("conformance", "c.jsonl", "--profile", "p.json", "--dataset", "demo"),
            2,
            "injection_policy",
            all_of(bad, write("c.jsonl", "")),
        ),
    ]
