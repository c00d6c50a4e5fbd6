"""Regenerate ``analysis/`` from the DBs with the recorded analysis settings and compare bytes."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from oracleproto._version import ANALYSIS_REVISION
from oracleproto.analysis import write_analysis
from oracleproto.analysis.postrun import analyze_with_settings
from oracleproto.analysis.revisions import summary_revision
from oracleproto.analysis.writer import FOREIGN_SUBDIRS
from oracleproto.errors import OracleprotoError
from oracleproto.primitives.json_input import load_json
from oracleproto.settings.model import AnalysisSettings
from oracleproto.store.rundir import ON_DEMAND_SUBDIRS
from oracleproto.verify.findings import Check, byte_location, failed, passed, skipped


def _first_line(expected: bytes, actual: bytes) -> str:
    try:
        left, right = expected.decode("utf-8").splitlines(), actual.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return ""
    for i, (a, b) in enumerate(zip(left, right, strict=False)):
        if a != b:
            return f"; line {i + 1}: published {b[:120]!r} vs regenerated {a[:120]!r}"
    return ""


def published_revision(analysis_dir: Path) -> int | None:
    """The ``analysis_revision`` of the published ``summary.json`` (1 when absent), None if unreadable."""
    try:
        document = load_json((analysis_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(document, dict):
        return None
    revision = document.get("analysis_revision", 1)
    return revision if isinstance(revision, int) and not isinstance(revision, bool) else None


def _first_difference(published: Any, regenerated: Any, path: str = "") -> str | None:
    """The first key path whose published value differs from its regeneration (shared keys only)."""
    if isinstance(published, dict) and isinstance(regenerated, dict):
        for key in sorted(set(published) & set(regenerated)):
            found = _first_difference(published[key], regenerated[key], f"{path}.{key}" if path else key)
            if found is not None:
                return found
        return None
    if isinstance(published, list) and isinstance(regenerated, list) and len(published) == len(regenerated):
        for i, (a, b) in enumerate(zip(published, regenerated, strict=True)):
            found = _first_difference(a, b, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    return None if published == regenerated else (path or "(document)")


def _older_revision_checks(
    revision: int, current: int, published: dict[str, Path], regenerated: dict[str, bytes]
) -> list[Check]:
    # An older analysis wrote other files and bytes from the same DBs, so bytes cannot be compared;
    # every number it published can: regenerated with that revision's definitions, the keys both
    # revisions write must hold the same values.
    label = "analysis/summary.json"
    try:
        old = load_json(published["summary.json"].read_bytes())
        new = json.loads(regenerated["summary.json"])
    except (KeyError, OSError, ValueError):
        return [failed(label, f"{label}: unreadable, so analysis revision {revision} cannot be checked")]
    old.pop("analysis_revision", None)
    difference = _first_difference(old, new)
    if difference is not None:
        return [
            failed(
                label,
                f"{label}: {difference} differs from its regeneration from db/ "
                f"(published {_first_value(old, difference)!r})",
            )
        ]
    return [
        passed(label, f"written by analysis revision {revision}; every published number agrees with db/"),
        skipped(
            "analysis/ tables and plots",
            f"written by analysis revision {revision}; this version writes revision {current}, "
            "so their bytes are not compared (summary.json's numbers are); "
            "`oracleproto report RUN --out DIR` writes them anew",
        ),
    ]


def _first_value(document: Any, path: str) -> Any:
    value = document
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        try:
            value = value[int(part[1:-1])] if part.startswith("[") else value[part]
        except (KeyError, IndexError, TypeError, ValueError):
            return None
    return value


def check_analysis(run_root: Path, analysis_dir: Path, settings: AnalysisSettings) -> list[Check]:
    """Every published analysis file must equal its regeneration byte for byte.

    A run whose ``summary.json`` records an older analysis revision than this code writes for the
    run's convention is checked by its numbers instead, re-scored with that revision's definitions
    (see :func:`published_revision`); a newer revision cannot be checked by this version.
    """
    # Sub-folders another pass owns (the refresh audit) are checked by their own checks.
    published = {
        p.relative_to(analysis_dir).as_posix(): p
        for p in (analysis_dir.rglob("*") if analysis_dir.is_dir() else ())
        if p.is_file() and p.relative_to(analysis_dir).parts[0] not in FOREIGN_SUBDIRS
    }
    if not published:
        return [skipped("analysis/", "the run publishes no analysis/ folder")]
    return _on_demand_notes(analysis_dir) + _regenerated_checks(run_root, analysis_dir, settings, published)


def _on_demand_notes(analysis_dir: Path) -> list[Check]:
    """A report beside the analysis (points-f1, another convention) is not sealed: say so rather
    than pass over it."""
    return [
        skipped(
            f"analysis/{name}/",
            "a report written on demand, not part of the sealed run: "
            f"`oracleproto report RUN --convention {name}` writes it anew",
        )
        for name in ON_DEMAND_SUBDIRS
        if (analysis_dir / name).is_dir()
    ]


def _regenerated_checks(
    run_root: Path, analysis_dir: Path, settings: AnalysisSettings, published: dict[str, Path]
) -> list[Check]:
    """The published analysis files against their regeneration (see :func:`check_analysis`)."""
    revision = published_revision(analysis_dir) if "summary.json" in published else None
    if revision is not None and revision > ANALYSIS_REVISION:
        return [
            skipped(
                "analysis/",
                f"written by analysis revision {revision}, newer than this version's "
                f"{ANALYSIS_REVISION}: upgrade oracleproto to check it",
            )
        ]
    current = summary_revision(settings.convention)
    older = revision if revision is not None and revision < current else None
    with tempfile.TemporaryDirectory(prefix="oracleproto-verify-") as tmp:
        out = Path(tmp) / "analysis"
        try:
            result = analyze_with_settings(run_root, settings, revision=older)
            write_analysis(result, out)
        except OracleprotoError as exc:
            return [failed("analysis/ regeneration", f"analysis could not be regenerated from db/: {exc}")]
        regenerated = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    if older is not None:
        return _older_revision_checks(older, current, published, regenerated)
    checks: list[Check] = []
    for name in sorted(set(published) | set(regenerated)):
        label = f"analysis/{name}"
        if name not in regenerated:
            checks.append(failed(label, f"{label}: published but not produced by the analysis pass"))
            continue
        if name not in published:
            checks.append(failed(label, f"{label}: produced by the analysis pass but missing from the run"))
            continue
        data, expected = published[name].read_bytes(), regenerated[name]
        if data == expected:
            checks.append(passed(label, "regenerated byte for byte"))
        else:
            checks.append(
                failed(
                    label,
                    f"{label}: differs from its regeneration from db/ at {byte_location(expected, data)}"
                    + _first_line(expected, data),
                )
            )
    return checks
