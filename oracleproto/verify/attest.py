"""File attestation: sha256 of every published file, with per-block and per-cell digests.

A whole-file digest says *that* a file changed; the 4 KiB block digests say at which byte range,
and for SQLite files the per-cell digests say which table, row and column. The attestation
carries a digest of itself, so a damaged attestation is reported as such, not as damage elsewhere.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError, model_validator

from oracleproto.primitives.fileio import atomic_write_text
from oracleproto.primitives.hashing import canonical_json, sha256_hex
from oracleproto.primitives.json_input import load_json
from oracleproto.primitives.paths import UnsafePathError, confined
from oracleproto.primitives.sqlite_readonly import connect_readonly
from oracleproto.store.label import LABEL_NAME
from oracleproto.store.rundir import ANALYSIS_DIR, ON_DEMAND_SUBDIRS
from oracleproto.verify.findings import Check, failed, passed

ATTESTATION_NAME = "attestation.json"
FORMAT = "oracleproto-attestation/1"
BLOCK = 4096
#: Cell digests only locate a change (the file digest proves it), so 8 hex chars suffice.
CELL_HEX = 8
#: Not published: SQLite side files, cassette locks and journals, caches, the attestation itself,
#: and a maintenance switch's staged files (``verify/switch.py``: not in place yet, or being moved).
_IGNORED_SUFFIXES = ("-wal", "-shm", "-journal", ".lock")
_IGNORED_PARTS = {".journal", "cache", "__pycache__", ".switch", ".switch.staging"}
#: Top-level files that are not the run's: the attestation itself, and the user's name and tags
#: for the run (``store/label.py``), which may change without touching the seal.
_UNPUBLISHED_FILES = frozenset({ATTESTATION_NAME, LABEL_NAME})
#: Not published either: reports anyone regenerates on demand from the published run.
_IGNORED_FOLDERS = tuple((ANALYSIS_DIR, name) for name in ON_DEMAND_SUBDIRS)


class _FileDigests(BaseModel, strict=True):
    """What ``check_files`` reads of one attested file."""

    sha256: str
    size: int
    blocks: list[str]


class _TableCells(BaseModel, strict=True):
    """What ``_cell_changes`` reads of one attested table: one cell digest per column in each row."""

    columns: list[str]
    rows: dict[str, str]

    @model_validator(mode="after")
    def _one_digest_per_column(self) -> _TableCells:
        for key, cells in self.rows.items():
            if len(cells.split()) != len(self.columns):
                raise ValueError(
                    f"row {key!r} has {len(cells.split())} cell digests for {len(self.columns)} columns"
                )
        return self


class _Shape(BaseModel, strict=True):
    """The fields ``verify`` reads: an attestation with a recomputed self digest is still checked for
    them, so a hand-made one fails its check instead of raising out of ``verify``."""

    files: dict[str, _FileDigests]
    databases: dict[str, dict[str, _TableCells]]


def published_files(root: Path) -> list[str]:
    """Relative POSIX paths of every file that belongs to the published run, sorted."""
    out: list[str] = []
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if not path.is_file() or rel.as_posix() in _UNPUBLISHED_FILES:
            continue
        if path.name.endswith(_IGNORED_SUFFIXES) or _IGNORED_PARTS & set(rel.parts):
            continue
        if rel.parts[:2] in _IGNORED_FOLDERS:
            continue
        out.append(rel.as_posix())
    return sorted(out)


def _blocks(data: bytes) -> list[str]:
    return [sha256_hex(data[i : i + BLOCK])[:16] for i in range(0, max(len(data), 1), BLOCK)]


def _cell(value: object) -> str:
    raw = value.hex() if isinstance(value, bytes) else value
    return sha256_hex(canonical_json(raw))[:CELL_HEX]


def database_cells(path: Path) -> dict[str, Any]:
    """Per table: its columns and, per row (keyed by its first column), one short digest per cell."""
    conn = connect_readonly(path)
    try:
        names = [
            str(r[0])
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        tables: dict[str, Any] = {}
        for name in names:
            cursor = conn.execute(f'SELECT * FROM "{name}"')
            columns = [str(d[0]) for d in cursor.description]
            rows = {str(row[0]): " ".join(_cell(v) for v in row) for row in cursor}
            tables[name] = {"columns": columns, "rows": dict(sorted(rows.items()))}
        return tables
    finally:
        conn.close()


def build_attestation(root: Path, overlay: Mapping[str, bytes | None] | None = None) -> dict[str, Any]:
    """The attestation of every published file under ``root``.

    ``overlay`` (relative path → bytes, or None for a file about to be deleted) attests the run as
    it will be once a maintenance switch puts those files in place, so the new seal can be staged
    with them. SQLite files cannot be overlaid (their cells are read through SQLite).
    """
    changes = dict(overlay or {})
    if any(rel.endswith(".db") for rel in changes):
        raise ValueError("a database cannot be overlaid")
    files: dict[str, Any] = {}
    databases: dict[str, Any] = {}
    for rel in sorted(set(published_files(root)) | {r for r, d in changes.items() if d is not None}):
        if rel in changes:
            new = changes[rel]
            if new is None:
                continue
            data = new
        else:
            data = (root / rel).read_bytes()
        files[rel] = {"sha256": sha256_hex(data), "size": len(data), "blocks": _blocks(data)}
        if rel.endswith(".db"):
            databases[rel] = database_cells(root / rel)
    body = {"format": FORMAT, "block_size": BLOCK, "files": files, "databases": databases}
    return {**body, "self_digest": sha256_hex(canonical_json(body))}


def attestation_text(attestation: dict[str, Any]) -> str:
    """Stable text: sorted keys, indent 1, trailing newline."""
    return json.dumps(attestation, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def write_attestation(root: Path) -> Path:
    """Write ``root/attestation.json`` over the current files (atomically); returns its path."""
    path = root / ATTESTATION_NAME
    # Atomic: a kill mid-write used to leave a truncated seal that every later verify reported.
    atomic_write_text(path, attestation_text(build_attestation(root)))
    return path


def load_attestation(path: Path) -> tuple[dict[str, Any] | None, Check]:
    """Parse an attestation and check its own digest."""
    label = path.name
    try:
        data = load_json(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return None, failed(label, f"{label}: not valid JSON ({exc}); the attestation itself is damaged")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None, failed(label, f"{label}: not an {FORMAT} document")
    body = {k: v for k, v in data.items() if k != "self_digest"}
    if sha256_hex(canonical_json(body)) != data.get("self_digest"):
        return None, failed(
            label, f"{label}: its self_digest does not match its content; the attestation is damaged"
        )
    try:
        _Shape.model_validate(body)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        return None, failed(label, f"{label}: not a valid {FORMAT} document: {problems}")
    return data, passed(label, f"{len(data['files'])} files attested")


def _cell_changes(path: Path, recorded: dict[str, Any]) -> list[str]:
    try:
        now = database_cells(path)
    except sqlite3.DatabaseError as exc:
        return [f"not readable as SQLite ({exc})"]
    out: list[str] = []
    for table in sorted(set(recorded) | set(now)):
        old, new = recorded.get(table), now.get(table)
        if old is None or new is None:
            out.append(f"table {table} {'added' if old is None else 'removed'}")
            continue
        if old["columns"] != new["columns"]:
            out.append(f"table {table} columns changed")
            continue
        for key in sorted(set(old["rows"]) | set(new["rows"])):
            a, b = old["rows"].get(key), new["rows"].get(key)
            if a == b:
                continue
            if a is None or b is None:
                out.append(f"table {table} row {key!r} {'added' if a is None else 'removed'}")
                continue
            cols = [c for c, x, y in zip(new["columns"], a.split(), b.split(), strict=True) if x != y]
            out.append(f"table {table} row {key!r} column {', '.join(cols)}")
    return out


def check_files(root: Path, attestation: dict[str, Any]) -> list[Check]:
    """Every attested file against its digest; a change is located by block and, in DBs, by cell."""
    checks: list[Check] = []
    attested: dict[str, Any] = attestation["files"]
    present = set(published_files(root))
    for rel in sorted(attested):
        info = attested[rel]
        try:  # the names come from a file a stranger may have crafted (its self digest recomputed)
            path = confined(root, rel, what=f"{ATTESTATION_NAME}: attested file")
        except UnsafePathError as exc:
            checks.append(failed(f"file {rel}", str(exc)))
            continue
        if not path.is_file():
            checks.append(failed(f"file {rel}", f"{rel}: attested but missing"))
            continue
        data = path.read_bytes()
        if sha256_hex(data) == info["sha256"]:
            continue
        blocks = _blocks(data)
        # An emptied file still has one (empty) block: only its size line says what changed.
        pairs = enumerate(zip(info["blocks"], blocks, strict=False))
        bad = [i for i, (x, y) in pairs if x != y] if data else []
        where = [f"bytes {i * BLOCK}–{min((i + 1) * BLOCK, len(data)) - 1}" for i in bad[:3]]
        if len(data) != info["size"]:
            where.append(f"size {info['size']} → {len(data)}")
        cells = _cell_changes(path, attestation["databases"][rel]) if rel in attestation["databases"] else []
        detail = f"{rel}: sha256 differs from the attestation at {', '.join(where) or 'unknown offset'}"
        if cells:
            detail += "; changed: " + "; ".join(cells[:5])
        elif rel in attestation["databases"]:
            detail += "; no cell changed (header, index or free-page bytes)"
        checks.append(failed(f"file {rel}", detail))
    extra = sorted(present - set(attested))
    if extra:
        checks.append(failed("unattested files", f"files not in the attestation: {', '.join(extra[:10])}"))
    if not checks:
        checks.append(passed("files ↔ attestation", f"{len(attested)} files byte-identical"))
    return checks
