"""``oracleproto profile show|validate|diff|export``: harness profiles as files a reader can check."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from oracleproto.cli.exits import EXIT_FAILED
from oracleproto.cli.runref import runs_root_option
from oracleproto.cli.verify import resolve_run_ref
from oracleproto.errors import StoreError
from oracleproto.primitives.fileio import atomic_write_text
from oracleproto.profile import (
    BUILTIN_WORD,
    HarnessProfile,
    export_text,
    load_profile,
    profile_fingerprint,
    profile_to_data,
)
from oracleproto.profile.diff import diff_profiles
from oracleproto.runner.run_texts import PROFILE_KEY, recorded_run_texts
from oracleproto.store import Manifest, RunDir
from oracleproto.store.peek import peek_config_snapshot

_SOURCE_HELP = (
    "a profile file (JSON), 'builtin', or a RUN (a run directory, run id or id prefix, run name, or 'demo') "
    "for the profile it used"
)


def _from_run(path: Path) -> HarnessProfile:
    """The effective profile a run used, rebuilt from its first model DB's config snapshot."""
    run = RunDir.open(path)
    manifest = Manifest.load(run.manifest_path)
    if manifest.earlier_implementation:
        raise StoreError(
            f"run {run.run_id} was written by the earlier implementation: it records no harness profile "
            "(write one for that harness, docs/harness-profile.md, and check it with "
            "`oracleproto conformance`)"
        )
    for slug in manifest.models:
        name = manifest.model_files.get(slug)
        snapshot = peek_config_snapshot(run.db_dir / name) if name else None
        if snapshot is not None:
            return recorded_run_texts(snapshot).profile
    raise StoreError(f"run {run.run_id}: no model DB holds a config snapshot yet; nothing to export")


def load_source(source: str, runs_root: Path | None) -> HarnessProfile:
    """A profile from a file, ``builtin``, or the run ``source`` names."""
    path = Path(source)
    # A profile is a JSON file; anything else names a run (a directory, a run id, 'demo').
    if source == BUILTIN_WORD or path.suffix.lower() == ".json" or path.is_file():
        return load_profile(path, setting="profile")
    return _from_run(resolve_run_ref(source, runs_root))


@click.group("profile")
def profile_group() -> None:
    """Harness profiles: every byte the model, the detector and Tavily receive, as one JSON file."""


_RUNS_ROOT = runs_root_option


@profile_group.command("show")
@click.argument("source", default=BUILTIN_WORD)
@_RUNS_ROOT
@click.option("--json", "as_json", is_flag=True, help="Print the whole profile as JSON instead of a summary.")
def show_command(source: str, runs_root: Path | None, as_json: bool) -> None:
    """Summarise SOURCE: a profile file, 'builtin' (the default), or the profile a run used."""
    profile = load_source(source, runs_root)
    if as_json:
        click.echo(json.dumps(profile_to_data(profile), ensure_ascii=False, indent=2))
        return
    request = profile.search_request
    lines = [
        f"name: {profile.name}",
        f"fingerprint: {profile_fingerprint(profile)}",
        f"description: {profile.description}",
        f"injection policy: {profile.injection_policy}",
        f"request sharing: {profile.request_sharing}",
        f"assistant echo: {profile.llm_request.assistant_echo.mode}",
        f"llm body keys: {', '.join(profile.llm_request.key_order)}",
        f"protocol blocks: {', '.join(b.name for b in profile.protocols.blocks) or '(none)'}",
        f"tool-call checks: {', '.join(profile.tool_calls.checks)}",
        f"tool result keys: {', '.join(profile.tool_result.payload_keys)} / "
        f"{', '.join(profile.tool_result.result_keys)}",
        f"truncation: {', '.join(profile.truncation.fields)} (detector sees the marker: "
        f"{'yes' if profile.truncation.detector_sees_marker else 'no'})",
        f"tavily: api key in the {request.api_key_in}, keys {', '.join(request.key_order)}",
    ]
    click.echo("\n".join(lines))


@profile_group.command("validate")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
def validate_command(file: Path) -> None:
    """Check FILE against the schema; list every problem with its key path (exit 2), else say it is valid."""
    profile = load_profile(file, setting="profile")
    click.echo(
        f"valid: {file} is harness profile {profile.name!r}, fingerprint {profile_fingerprint(profile)}"
    )


@profile_group.command("diff")
@click.argument("left")
@click.argument("right")
@_RUNS_ROOT
def diff_command(left: str, right: str, runs_root: Path | None) -> None:
    """Every key path where LEFT and RIGHT differ (each a file, 'builtin' or a run); exit 1 if they
    send different bytes."""
    a, b = load_source(left, runs_root), load_source(right, runs_root)
    differences = diff_profiles(a, b)
    for found in differences:
        marker = "" if found.behavioural else "  (descriptive only)"
        click.echo(f"{found.path}{marker}\n  - {found.left}\n  + {found.right}")
    behavioural = [d for d in differences if d.behavioural]
    fa, fb = profile_fingerprint(a), profile_fingerprint(b)
    if not behavioural:
        click.echo(f"same bytes: both profiles have fingerprint {fa}")
        return
    click.echo(f"{len(behavioural)} difference(s) in what is sent: {fa} vs {fb}")
    sys.exit(EXIT_FAILED)


@profile_group.command("export")
@click.argument("source")
@_RUNS_ROOT
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the profile to this file (default: print it).",
)
def export_command(source: str, runs_root: Path | None, out: Path | None) -> None:
    """Write the profile SOURCE names as a JSON file: a run's (from its snapshot, so a reader can
    re-run with the same bytes), 'builtin', or a profile file (normalised)."""
    profile = load_source(source, runs_root)
    text = export_text(profile)
    if out is None:
        click.echo(text, nl=False)
        return
    atomic_write_text(out, text)
    click.echo(
        f"wrote {out}: harness profile {profile.name!r}, fingerprint {profile_fingerprint(profile)}", err=True
    )


__all__ = ["PROFILE_KEY", "profile_group"]
