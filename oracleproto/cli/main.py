"""The ``oracleproto`` command: a thin click layer over the public functions.

Each command group lives in its own module and is registered here; nothing imports
this package. The group's ``main`` is the one top-level handler (``cli/failures.py``): the
console script and click's CliRunner both go through it, so no failure prints a traceback.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import MutableMapping, Sequence
from typing import Any, NoReturn

import click

from oracleproto._version import __version__
from oracleproto.cli.failures import handle
from oracleproto.cli.lazy_group import LazyCommand, LazyGroup


class OracleprotoGroup(LazyGroup):
    """The root group: every exception a command raises becomes a message and an exit status."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> NoReturn:
        """Run the command; exit with its status (0, or the failure's status after its message)."""
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            code = rv if isinstance(rv, int) else 0
        except SystemExit:
            raise
        except BaseException as exc:  # the top-level handler: nothing escapes as a traceback
            code = handle(exc)
        sys.exit(code)


@click.group(cls=OracleprotoGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="oracleproto")
def cli() -> None:
    """Reproducible benchmarking of LLM native forecasting (record/replay)."""


def _entry(module: str, attribute: str, short_help: str, *subs: tuple[str, LazyCommand]) -> LazyCommand:
    return LazyCommand(f"oracleproto.cli.{module}", attribute, short_help, subs)


# Every command, imported only when it runs (cli/lazy_group.py); the short help is what
# `oracleproto --help` lists and is kept equal to the command's own by tests/cli/test_lazy_commands.py.
COMMANDS: dict[str, LazyCommand] = {
    "audit": _entry(
        "leakaudit",
        "audit_group",
        "Audit a run's residual leakage by hand: sample results, label them blind, score (Table 6).",
    ),
    "bundle": _entry("verify", "bundle_group", "Publishable, self-contained archives of a run."),
    "cache": _entry("cassettes", "cache", "Manage the local ``cache/`` index built from cassettes."),
    "cassettes": _entry(
        "cassettes",
        "cassettes",
        "Inspect the recorded cassettes of a run (RUN = a run, or a cassette folder).",
        (
            "diff",
            _entry(
                "refresh",
                "diff_cmd",
                "Classify every entry of OLD vs NEW (run dirs or cassette dirs, optionally PATH@GEN).",
            ),
        ),
    ),
    "conformance": _entry(
        "conformance",
        "conformance_command",
        "Run our harness (with --profile, the run settings and --dataset) against CAPTURE, another "
        "harness's recorded HTTP traffic, and report per channel how many request bodies are byte-identical.",
    ),
    "dataset": _entry("dataset", "dataset", "Validate, describe and build OracleProto source datasets."),
    "demo": _entry("verify", "demo_group", "The bundled demo run."),
    "export": _entry(
        "export",
        "export_command",
        "One row per sample of RUN: model, question, sample, parsed letters, correct, exam score, "
        "tokens, cost, latency, error.",
    ),
    "init": _entry(
        "init",
        "init_command",
        "Write FOLDER/.env (every setting, commented, with its default) and FOLDER/oracleproto.toml.",
    ),
    "leaderboard": _entry(
        "leaderboard",
        "leaderboard_command",
        "An offline HTML leaderboard and CSV of RUN… (run dirs, run ids, bundles, 'demo'), points-f1.",
    ),
    "panel": _entry(
        "panel",
        "panel_group",
        "Panels: one virtual run from several runs or shards of one experiment (docs/run-at-scale.md).",
    ),
    "plan": _entry(
        "plan",
        "plan_command",
        "Show what a run would ask and may cost (same as `run --dry-run`); no network, no files written.",
    ),
    "profile": _entry(
        "profile",
        "profile_group",
        "Harness profiles: every byte the model, the detector and Tavily receive, as one JSON file.",
    ),
    "render": _entry(
        "render", "render_command", "Print the rendered user prompts of DB (a source SQLite file, or `demo`)."
    ),
    "replay": _entry("replay", "replay_command", "Replay RUN offline and compare it with the recording."),
    "report": _entry(
        "report", "report", "Compute every metric of RUN and write tables, summary.json and plots."
    ),
    "runs": _entry(
        "runs",
        "runs_group",
        "The runs under the runs root: id, name, when, models, questions × samples, state, size.",
    ),
    "run": _entry(
        "run", "run_command", "Run the forecasting benchmark (admission, ReAct loop, store, analysis)."
    ),
    "sim": _entry(
        "sim",
        "sim_group",
        "Provider simulator: OpenAI-compatible chat and Tavily-compatible search on 127.0.0.1.",
        (
            "run",
            _entry(
                "sim_run",
                "sim_run",
                "Start the simulator, record a run through the normal `run --record` path, print its "
                "directory.",
            ),
        ),
        (
            "audit-labels",
            _entry(
                "sim_audit",
                "sim_audit_labels",
                "Label every item of DIR leak / no-leak by when the simulated page was written (vs the "
                "cutoff).",
            ),
        ),
    ),
    "store": _entry(
        "store",
        "store_group",
        "Share sealed runs through a content-addressed store (S3-compatible or a shared folder).",
    ),
    "verify": _entry("verify", "verify_command", "Verify RUN offline, without re-executing."),
    "view": _entry(
        "view", "view_command", "Look at RUN: one self-contained HTML file (written, or served on 127.0.0.1)."
    ),
}

for _name, _command in COMMANDS.items():
    cli.add_lazy(_name, _command)


def install_signal_handlers() -> None:
    """Process-wide signal set-up of the console script (not of in-process CliRunner tests).

    SIGXFSZ is ignored so that a write past ``ulimit -f`` raises ``OSError(EFBIG)`` (reported
    with the file's path) instead of killing the process with no message. SIGTERM is handled
    by the commands that run a recording or a replay (``cli/stop.py``: stopped like Ctrl-C, exit
    143); elsewhere it keeps its default action (the shell reports 143).
    """
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def limit_blas_threads(environ: MutableMapping[str, str]) -> None:
    """One BLAS thread for this process and the workers it starts, unless the user chose a number.

    The analysis's BLAS work is small matrix products (the bootstrap's weights times a column of
    per-question counts, family C's small regressions), which gain nothing from threads. OpenBLAS
    otherwise starts a thread per core as numpy is imported: 0.1-0.2 CPU-s of every command that
    imports numpy, on two cores (docs/design/performance.md, *Start-up imports*).
    """
    environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def skip_httpx_cli(modules: MutableMapping[str, Any]) -> None:
    """httpx without its own command-line client, as where httpx's ``cli`` extra is not installed.

    ``import httpx`` also imports ``httpx._main``, its command-line client (rich's console,
    progress bars, syntax and tables; pygments' lexers; click), only to offer ``httpx.main``, which
    no command calls: about 200 M instructions, 30-40 ms of CPU, in every command that talks HTTP
    (upstream: encode/httpx discussion 3523). A ``None`` entry in ``sys.modules`` makes that one
    import fail, and httpx catches the failure as it does when the extra is missing. Once httpx is
    imported there is nothing left to spare, and the entry is not set. (``Any``: typeshed types
    ``sys.modules`` as holding modules only; the import system reads ``None`` there too.)
    """
    if "httpx" not in modules:
        modules.setdefault("httpx._main", None)


def main() -> None:
    """Console-script entry point: known errors print one clear message, exit non-zero."""
    install_signal_handlers()
    limit_blas_threads(os.environ)
    skip_httpx_cli(sys.modules)
    cli.main()
