"""Check the refresh audit a run publishes under ``analysis/audit/`` (it is not regenerated from db/).

The audit compares two runs, so it can only be regenerated when the refreshed (old) run is
available beside this one; otherwise its internal consistency is checked: the JSON is a refresh
audit of this run's latest cassette generation and the Markdown is exactly its rendering.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from oracleproto.analysis.writer import normalise
from oracleproto.errors import OracleprotoError
from oracleproto.primitives.json_input import load_json
from oracleproto.refresh.report import (
    AUDIT_SCHEMA,
    JSON_NAME,
    MD_NAME,
    build_audit,
    render_markdown,
)
from oracleproto.refresh.report import audit_json as render_json
from oracleproto.refresh.views import load_view
from oracleproto.settings.model import AnalysisSettings
from oracleproto.store.rundir import AUDIT_SUBDIR
from oracleproto.transport.layout import list_generations
from oracleproto.verify.findings import Check, byte_location, failed, passed, skipped


def check_refresh_audit(run_root: Path, analysis_dir: Path, settings: AnalysisSettings) -> list[Check]:
    """Checks of ``analysis/audit/``; none when the run publishes no refresh audit."""
    folder = analysis_dir / AUDIT_SUBDIR
    if not folder.is_dir():
        return []
    json_label, md_label = f"analysis/{AUDIT_SUBDIR}/{JSON_NAME}", f"analysis/{AUDIT_SUBDIR}/{MD_NAME}"
    present = sorted(p.name for p in folder.iterdir())
    unexpected = [n for n in present if n not in (JSON_NAME, MD_NAME)]
    checks: list[Check] = []
    if unexpected:
        checks.append(
            failed(
                f"analysis/{AUDIT_SUBDIR}/", f"files a refresh audit never writes: {', '.join(unexpected)}"
            )
        )
    # A folder in a file's place is as missing as no entry at all (reading it would raise).
    missing = [n for n in (JSON_NAME, MD_NAME) if not (folder / n).is_file()]
    if missing:
        return [
            *checks,
            failed(f"analysis/{AUDIT_SUBDIR}/", f"incomplete refresh audit: missing {', '.join(missing)}"),
        ]
    raw = (folder / JSON_NAME).read_bytes()
    try:
        audit: Any = load_json(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return [
            *checks,
            failed(
                json_label,
                f"{json_label}: not valid JSON ({exc}); the refresh audit is damaged: restore the file "
                "from a copy of the run",
            ),
        ]
    if not isinstance(audit, dict) or audit.get("schema") != AUDIT_SCHEMA:
        return [
            *checks,
            failed(json_label, f"{json_label}: not a refresh audit (schema is not {AUDIT_SCHEMA})"),
        ]
    cassettes = run_root / "cassettes"
    latest = list_generations(cassettes)[-1] if cassettes.is_dir() else None
    expected_new = f"{run_root.name}@g{latest}"
    if audit.get("new") != expected_new:
        checks.append(
            failed(
                json_label,
                f"{json_label}: audits {audit.get('new')!r}, this run's latest is {expected_new}",
            )
        )
    else:
        checks.append(passed(json_label, f"audit of {expected_new} against {audit.get('old')}"))
    try:
        rendering = render_markdown(normalise(audit)).encode("utf-8")
    except (KeyError, IndexError, AttributeError, TypeError, ValueError, RecursionError) as exc:
        # A document with the audit's schema but not its shape (a field missing, of another type).
        checks.append(
            failed(
                md_label, f"{json_label}: its fields are not a refresh audit's ({type(exc).__name__}: {exc})"
            )
        )
    else:
        checks.append(_compare(md_label, rendering, folder / MD_NAME))
    checks.append(_regenerate(run_root, audit, raw, json_label, settings))
    return checks


def _compare(label: str, expected: bytes, path: Path) -> Check:
    data = path.read_bytes()
    if data == expected:
        return passed(label, "equals the rendering of the audit JSON")
    return failed(
        label, f"{label}: differs from the rendering of the audit JSON at {byte_location(expected, data)}"
    )


def _regenerate(
    run_root: Path, audit: dict[str, Any], raw: bytes, label: str, settings: AnalysisSettings
) -> Check:
    """Rebuild the audit from both runs when the old one sits beside this run."""
    old_ref = str(audit.get("old", ""))
    old_id, sep, gen = old_ref.rpartition("@g")
    what = f"{label} regeneration"
    old_root = run_root.parent / old_id
    if not sep or not gen.isdigit() or not old_id or "/" in old_id:
        return failed(what, f"{label}: 'old' is {old_ref!r}, not RUN_ID@gN")
    if not (old_root / "manifest.json").is_file():
        return skipped(
            what, f"the refreshed run {old_id} is not beside this run; checked for consistency only"
        )
    selection = audit.get("selection")
    try:
        rebuilt = build_audit(
            load_view(old_root, int(gen)),
            load_view(run_root),
            convention=settings.convention,
            bootstrap_samples=settings.bootstrap_samples,
            seed=settings.seed,
            selection=list(selection) if isinstance(selection, list) else [],
        )
        expected = render_json(rebuilt).encode("utf-8")
    # ValueError: a generation int() refuses ("²" is a digit) or text UTF-8 cannot encode (a lone
    # surrogate in the selection); RecursionError: a selection nested too deep to serialise.
    except (OracleprotoError, ValueError, RecursionError) as exc:
        return failed(what, f"{label}: could not be rebuilt from {old_id} and this run: {exc}")
    if expected == raw:
        return passed(what, f"rebuilt from {old_id} and this run byte for byte")
    return failed(what, f"{label}: differs from its rebuild from {old_id} at {byte_location(expected, raw)}")
