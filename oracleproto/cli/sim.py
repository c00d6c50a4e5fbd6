"""``oracleproto sim``: run the provider simulator on loopback."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import click

from oracleproto.cli.exits import EXIT_FAILED, EXIT_INVALID
from oracleproto.cli.lazy_group import LazyGroup
from oracleproto.conformance.capture import CaptureError, CaptureWriter
from oracleproto.sim.faults import FaultConfig
from oracleproto.sim.personas import DETECTOR_SLUG, PERSONAS
from oracleproto.sim.server import SimConfig, Simulator

_RATE = click.FloatRange(0.0, 1.0)


def _wait_for_interrupt(sim: Simulator) -> None:
    # Event.wait wakes up on Ctrl-C (KeyboardInterrupt) on every platform we support.
    with contextlib.suppress(KeyboardInterrupt):
        threading.Event().wait()


@click.group("sim", cls=LazyGroup)
def sim_group() -> None:
    """Provider simulator: OpenAI-compatible chat and Tavily-compatible search on 127.0.0.1."""


@sim_group.command("serve")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, show_default=True, help="0 picks a free port."
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed mixed into every simulated draw.")
@click.option(
    "--latency-ms",
    type=click.FloatRange(0.0),
    default=0.0,
    show_default=True,
    help="Added latency of every answer, in milliseconds (the median with --latency-sigma).",
)
@click.option(
    "--jitter-ms",
    type=click.FloatRange(0.0),
    default=0.0,
    show_default=True,
    help="Uniform random extra latency of every answer, up to this many milliseconds.",
)
@click.option(
    "--latency-sigma",
    type=click.FloatRange(0.0),
    default=0.0,
    show_default=True,
    help="Log-normal latency: --latency-ms is the median, this the shape (0 = fixed).",
)
@click.option("--fail-5xx", type=_RATE, default=0.0, show_default=True, help="Fraction answered 500/502/503.")
@click.option("--fail-429", type=_RATE, default=0.0, show_default=True, help="Fraction answered 429.")
@click.option("--fail-timeout", type=_RATE, default=0.0, show_default=True, help="Fraction dropped.")
@click.option(
    "--retry-after", type=click.IntRange(0), default=1, show_default=True, help="Retry-After seconds."
)
@click.option(
    "--retry-after-max",
    type=click.IntRange(0),
    default=None,
    help="Draw each 429's Retry-After from --retry-after to this many seconds (a varying window).",
)
@click.option("--revoked-key", multiple=True, help="API key answered with 401 (repeatable).")
@click.option("--echo-key", is_flag=True, help="Echo callers' keys in headers and bodies.")
@click.option(
    "--capture",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write every exchange to this new file (capture format of `oracleproto conformance`; "
    "credentials redacted).",
)
@click.pass_context
def serve(
    ctx: click.Context,
    *,
    port: int,
    seed: int,
    latency_ms: float,
    jitter_ms: float,
    latency_sigma: float,
    fail_5xx: float,
    fail_429: float,
    fail_timeout: float,
    retry_after: int,
    retry_after_max: int | None,
    revoked_key: tuple[str, ...],
    echo_key: bool,
    capture: Path | None,
) -> None:
    """Serve the simulator until Ctrl-C and print the environment lines to use it."""
    if fail_5xx + fail_429 + fail_timeout > 1.0:
        raise click.UsageError(
            f"--fail-5xx + --fail-429 + --fail-timeout = {fail_5xx + fail_429 + fail_timeout:g} exceeds 1; "
            "lower the rates so they sum to at most 1."
        )
    if retry_after_max is not None and retry_after_max < retry_after:
        raise click.UsageError(
            f"--retry-after-max {retry_after_max} is below --retry-after {retry_after}; "
            "give the range's low end with --retry-after and its high end with --retry-after-max."
        )
    faults = FaultConfig(
        latency_ms=latency_ms,
        jitter_ms=jitter_ms,
        latency_sigma=latency_sigma,
        fail_5xx=fail_5xx,
        fail_429=fail_429,
        fail_timeout=fail_timeout,
        retry_after_s=retry_after,
        retry_after_max_s=retry_after_max,
        revoked_keys=frozenset(revoked_key),
        echo_key=echo_key,
    )
    writer = _open_capture(capture)
    try:
        sim = Simulator(SimConfig(seed=seed, chat=faults, search=faults), port=port, capture=writer)
    except OSError as exc:
        if writer is not None:
            writer.close()
        raise click.UsageError(
            f"cannot listen on 127.0.0.1:{port}: {exc.strerror}; pick another --port"
        ) from exc
    # Tests inject ``wait`` through ``obj`` to talk to the live server instead of blocking.
    wait: Callable[[Simulator], None] = (ctx.obj or {}).get("wait", _wait_for_interrupt)
    try:
        with sim:
            click.echo(f"simulator listening on {sim.base_url} (seed {seed})")
            for line in sim.env_lines():
                click.echo(line)
            models = " ".join(f"sim/{name}" for name in PERSONAS)
            click.echo(f"models: {models}; detector: {DETECTOR_SLUG}")
            if writer is not None:
                click.echo(f"capturing every exchange to {click.format_filename(writer.path)}")
            click.echo("press Ctrl-C to stop")
            wait(sim)
    finally:
        if writer is not None:
            writer.close()
    click.echo("simulator stopped")
    if writer is not None and writer.error is not None:
        click.echo(f"error: {writer.error}", err=True)
        sys.exit(EXIT_FAILED)


def _open_capture(path: Path | None) -> CaptureWriter | None:
    """The capture writer of ``--capture`` (exit 2 with the reason when the file cannot be used)."""
    if path is None:
        return None
    try:
        return CaptureWriter(path)
    except CaptureError as exc:
        click.echo(f"error: {exc} (--capture)", err=True)
        sys.exit(EXIT_INVALID)
