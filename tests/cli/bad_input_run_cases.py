"""Bad-input cases of the RUN argument (``cli/runref.py``) and of ``runs list|show``: one error style.

Every RUN-taking command refuses the same mistakes with the same ``error: …`` message: an id
prefix naming several runs, a name no run has, a file where a run directory is needed, writing
into the published demo run, and a ``--name`` that is malformed or already another run's.
"""

from __future__ import annotations

from bad_input_support import RUN_ID, Case, all_of, in_run, mkdir, write

#: Two run folders whose ids share the prefix ``20260101-0000``.
TWO_RUNS = all_of(mkdir("runs/20260101-000000-aaaa"), mkdir("runs/20260101-000000-bbbb"))
NAMED = in_run(lambda r: (r / "label.json").write_text('{"name": "pilot", "tags": []}', encoding="utf-8"))

#: A command line for every RUN-taking command, with the RUN at ``{}``.
COMMANDS: dict[str, tuple[str, ...]] = {
    "replay": ("replay", "{}", "--no-progress"),
    "verify": ("verify", "{}", "--quiet"),
    "export": ("export", "{}"),
    "view": ("view", "{}", "--out", "v.html"),
    "audit-sample": ("audit", "sample", "{}", "--out", "a"),
    "cassettes-ls": ("cassettes", "ls", "{}"),
    "cassettes-show": ("cassettes", "show", "{}", "ab"),
    "cassettes-stats": ("cassettes", "stats", "{}"),
    "cassettes-gc": ("cassettes", "gc", "{}"),
    "cache-rebuild": ("cache", "rebuild", "{}"),
    "bundle-export": ("bundle", "export", "{}", "o.tar.gz"),
    "store-push": ("store", "push", "{}", "--store", "file:///nonexistent-store"),
    "runs-show": ("runs", "show", "{}"),
    "profile-show": ("profile", "show", "{}"),
    "leaderboard": ("leaderboard", "{}", "--out", "board"),
}


def _at(args: tuple[str, ...], run: str) -> tuple[str, ...]:
    return tuple(run if a == "{}" else a for a in args)


def resolver_cases() -> list[Case]:
    """Per command: an ambiguous id prefix, an unknown prefix, an unknown name."""
    cases: list[Case] = []
    for name, args in COMMANDS.items():
        cases += [
            Case(
                f"run-ref:{name}:ambiguous-prefix",
                _at(args, "20260101-0000"),
                2,
                "error: 20260101-0000: names 2 runs under runs (20260101-000000-aaaa, 20260101-000000-bbbb); "
                "give more of the run id",
                TWO_RUNS,
            ),
            Case(
                f"run-ref:{name}:unknown-prefix",
                _at(args, "2099"),
                2,
                "error: 2099: run directory not found (no such folder, and no run id, id prefix or run name "
                "under runs)",
                TWO_RUNS,
            ),
            Case(
                f"run-ref:{name}:unknown-name",
                _at(args, "nightly"),
                2,
                "error: nightly: run directory not found",
                NAMED,
            ),
        ]
    return cases


def misc_cases() -> list[Case]:
    """Files where a run is needed, the read-only demo, run names, runs list/show arguments."""
    return [
        Case(
            "run-ref:cassettes-stats:a-file",
            ("cassettes", "stats", "b.tar.gz"),
            2,
            "error: b.tar.gz: is a file, not a run directory; import a bundle first",
            write("b.tar.gz", "x"),
        ),
        Case(
            "run-ref:replay:a-bundle",
            ("replay", "b.tar.gz"),
            2,
            "error: b.tar.gz: is a file, not a run directory; import a bundle first",
            write("b.tar.gz", "x"),
        ),
        Case(
            "run-ref:gc-apply-demo",
            ("cassettes", "gc", "demo", "--apply"),
            2,
            "error: demo: the published demo run is read-only; copy it (`oracleproto demo fetch --dir D`)",
        ),
        Case(
            "run-ref:cache-rebuild-demo",
            ("cache", "rebuild", "demo"),
            2,
            "error: demo: the published demo run is never written to, and its index would go inside it: "
            "give --cache-dir DIR",
        ),
        Case(
            "run-ref:attest-demo",
            ("verify", "demo", "--write-attestation"),
            2,
            "error: --write-attestation seals a run you own; copy it with `demo fetch` first",
        ),
        Case("runs-show:no-arg", ("runs", "show"), 2, "error: Missing argument 'RUN'"),
        Case("runs-show:nonexistent", ("runs", "show", "nope"), 2, "error: nope: run directory not found"),
        Case(
            "runs-list:root-is-a-file",
            ("runs", "list", "--runs-root", "f"),
            2,
            "error: Invalid value for '--runs-root'",
            write("f", "x"),
        ),
        Case("runs-list:bad-option", ("runs", "list", "--jsn"), 2, "error: No such option '--jsn'"),
        Case(
            "run:name-malformed",
            ("run", "--record", "--dry-run", "--name", "1st try"),
            2,
            "--name '1st try': use 1-64 characters, letters, digits and . _ + -, starting with a letter",
        ),
        Case(
            "run:tag-malformed",
            ("run", "--record", "--dry-run", "--tag", "a/b"),
            2,
            "--tag 'a/b': use 1-64 characters",
        ),
        Case(
            "run:name-taken",
            ("run", "--record", "--dry-run", "--name", "pilot"),
            2,
            f"run {RUN_ID} under runs is already named 'pilot'; choose another name",
            NAMED,
        ),
    ]


def flag_cases() -> list[Case]:
    """The same flag, the same meaning: sim run's --models takes slugs, --personas counts; the grid."""
    sim = ("sim", "run", "--no-progress", "--runs-root", "runs")
    grid = {"MODELS": "sim/careful", "MODEL_TRAINING_CUTOFFS": "sim/careful=2026-01"}
    return [
        Case("sim-run:personas-0", (*sim, "--personas", "0"), 2, "error: Invalid value for '--personas'"),
        Case("sim-run:personas-31", (*sim, "--personas", "31"), 2, "error: Invalid value for '--personas'"),
        Case(
            "sim-run:models-and-personas",
            (*sim, "--models", "sim/hasty", "--personas", "2"),
            2,
            "error: --models names the models and --personas counts them: give one of the two",
        ),
        Case(
            "sim-run:old-count-and-personas",
            (*sim, "--models", "2", "--personas", "2"),
            2,
            "error: --models N is the old spelling of --personas N: give only --personas",
        ),
        Case(
            "sim-run:unknown-slug",
            (*sim, "--models", "sim/careful,openai/gpt-5"),
            2,
            "error: Invalid value for '--models': openai/gpt-5: not a simulated model; the simulator serves "
            "sim/careful, sim/hasty",
        ),
        Case(
            "sim-run:no-slug", (*sim, "--models", " , "), 2, "error: Invalid value for '--models': give one"
        ),
        Case("sim-run:limit-0", (*sim, "--limit", "0"), 2, "error: Invalid value for '--limit'"),
        Case(
            "plan:grid-disagrees",
            ("plan",),
            2,
            "error: invalid settings:\n  - TAVILY_MAX_RESULTS=8 and GRID_R_LIST=5,10 disagree",
            env={**grid, "TAVILY_MAX_RESULTS": "8", "GRID_R_LIST": "5,10"},
        ),
        Case("plan:samples-0", ("plan", "--samples", "0"), 2, "error: Invalid value for '--samples'"),
        Case("run:samples-word", ("run", "--samples", "lots"), 2, "'lots' is not a valid integer"),
    ]


def run_ref_cases() -> list[Case]:
    """Every case of this file."""
    return [*resolver_cases(), *misc_cases(), *flag_cases()]
