"""Where ``report`` writes without ``--out``: never anything ``verify`` would then reject.

A run's ``analysis/`` is sealed: ``verify`` regenerates it from ``db/`` under the run's recorded
analysis settings (convention, bootstrap, seed, Tavily credit price) and compares byte for byte.
So without ``--out``:

- the run's own convention is written into ``analysis/`` under those recorded settings (an option
  left out takes the run's value, not the command's default): the same bytes ``verify`` expects;
- another convention goes beside it, into ``analysis/<convention>/`` (as points-f1 always did),
  which the analysis pass keeps and ``verify``, ``replay`` and bundles skip;
- the run's own convention with options that change its files (``--bootstrap``, ``--seed``,
  ``--tavily-usd-per-credit`` other than the recorded ones, ``--prices``, ``--names``, a table
  style, one ``--format``) is refused, naming the command that writes it elsewhere (``--out DIR``).

A run whose analysis settings cannot be read (verify cannot check its analysis either) is
written as asked, as before. The published demo run (``report demo``) is never written to: the
report goes into a temporary copy of it, removed when the command ends (``--out DIR`` keeps it).
"""

from __future__ import annotations

import json
import shlex
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import click
from click.core import ParameterSource

from oracleproto.analysis.cost import PriceTable
from oracleproto.analysis.reader import RunData
from oracleproto.errors import AnalysisError, OracleprotoError
from oracleproto.settings.model import AnalysisSettings

#: Options that shape the files of a report (the parameter name → its option).
_SHAPING = {
    "samples": "--bootstrap",
    "seed": "--seed",
    "usd_per_credit": "--tavily-usd-per-credit",
    "prices": "--prices",
    "names": "--names",
    "decimals": "--decimals",
    "ci": "--ci/--no-ci",
    "bold": "--bold",
    "fmt": "--format",
}


@dataclass(frozen=True)
class ReportTarget:
    """Where the report goes and the values it is computed with."""

    folder: Path
    samples: int
    seed: int
    prices: PriceTable | None
    #: Said on stderr after the report (why it went beside the sealed analysis), or None.
    note: str | None = None


#: Said after a report of the published demo run without --out.
SCRATCH_NOTE = (
    "{text} is the published demo run, which is never written to: the report went into a temporary "
    "copy of it, removed now; --out DIR keeps the files"
)


def scratch_copy(ctx: click.Context, run_dir: Path) -> Path:
    """A temporary copy of ``run_dir`` to write the report into, removed when ``ctx`` closes."""
    folder = Path(tempfile.mkdtemp(prefix="oracleproto-report-"))
    ctx.call_on_close(lambda: shutil.rmtree(folder, ignore_errors=True))
    return Path(shutil.copytree(run_dir, folder / run_dir.name))


def given(ctx: click.Context, name: str) -> bool:
    """True when ``name`` was given on the command line (or by the environment), not defaulted."""
    source = ctx.get_parameter_source(name)
    return source is not None and source is not ParameterSource.DEFAULT


def sealed_settings(run: RunData) -> AnalysisSettings | None:
    """The analysis settings ``verify`` regenerates the run's ``analysis/`` with; None if unknown."""
    from oracleproto.view.overview import run_analysis_settings  # what the viewer shows, too

    manifest = run.manifest
    # Every manifest oracleproto writes has these two from its first write (manifest.py).
    earlier = manifest.get("cassettes") is None and manifest.get("oracleproto_version") is None
    raw = run.models[0].run_meta.get("config_snapshot") if run.models else None
    try:
        snapshot = json.loads(raw) if isinstance(raw, str) else {}
    except ValueError:
        snapshot = {}
    try:
        return run_analysis_settings(
            snapshot if isinstance(snapshot, dict) else {}, run.run_dir, earlier=earlier
        )
    except OracleprotoError:
        return None


def _with_credit(prices: PriceTable | None, credit: float | None) -> PriceTable | None:
    return prices if credit is None else (prices or PriceTable({})).with_credit_price(credit)


def _deviations(ctx: click.Context, settings: AnalysisSettings) -> list[str]:
    """The options given that would make ``analysis/`` differ from its regeneration."""
    params = ctx.params
    recorded = {
        "samples": settings.bootstrap_samples,
        "seed": settings.seed,
        "usd_per_credit": settings.tavily_usd_per_credit,
    }
    defaults = {"decimals": None, "ci": False, "bold": "best", "fmt": "all"}
    out: list[str] = []
    for name, option in _SHAPING.items():
        if not given(ctx, name):
            continue
        if name in recorded and params[name] == recorded[name]:
            continue
        if name in defaults and params[name] == defaults[name]:
            continue
        out.append(option)
    return out


def _command_line(ctx: click.Context, run_text: str) -> str:
    """``oracleproto report RUN …`` with the options given, then ``--out DIR``."""
    parts = ["oracleproto", "report", shlex.quote(run_text)]
    for param in ctx.command.params:
        if not isinstance(param, click.Option) or param.name is None or not given(ctx, param.name):
            continue
        value = ctx.params[param.name]
        if param.name == "ci":
            parts.append("--ci" if value else "--no-ci")
        elif param.is_flag:
            parts.append(param.opts[0])
        elif value is not None:
            parts += [param.opts[0], shlex.quote(str(value))]
    return " ".join([*parts, "--out", "DIR"])


def report_target(
    ctx: click.Context,
    run_text: str,
    run: RunData,
    *,
    convention: str,
    out: Path | None,
    prices: PriceTable | None,
    samples: int,
    seed: int,
) -> ReportTarget:
    """Where the report of ``run`` goes and with which values (see the module docstring)."""
    if out is not None:
        return ReportTarget(out, samples, seed, prices)
    analysis = run.run_dir / "analysis"
    settings = sealed_settings(run)
    if settings is None:
        return ReportTarget(analysis, samples, seed, prices)
    # Left out, an option takes the run's own value: the report is then the run's analysis.
    samples = samples if given(ctx, "samples") else settings.bootstrap_samples
    seed = seed if given(ctx, "seed") else settings.seed
    if not given(ctx, "usd_per_credit"):
        prices = _with_credit(prices, settings.tavily_usd_per_credit)
    if convention != settings.convention:
        note = (
            f"run {run.run_id}'s sealed analysis is under {settings.convention}: this {convention} report "
            f"went beside it, into analysis/{convention}/ (`verify` skips that folder; --out DIR writes "
            "it anywhere else)"
        )
        return ReportTarget(analysis / convention, samples, seed, prices, note)
    changed = _deviations(ctx, settings)
    if changed:
        raise AnalysisError(
            f"{', '.join(changed)} would make the run's analysis/ differ from what `verify` regenerates "
            f"from the run's own settings ({settings.convention}, bootstrap {settings.bootstrap_samples}, "
            f"seed {settings.seed}), and run {run.run_id} would no longer verify; nothing was written. "
            f"Write this report elsewhere: {_command_line(ctx, run_text)}"
        )
    return ReportTarget(analysis, samples, seed, prices)
