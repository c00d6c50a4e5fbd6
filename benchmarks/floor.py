"""The floors of replay and ``verify``: the least work any correct implementation must do.

Each runs in a child process (as the tool does), so interpreter start-up counts on both sides of
a ratio alike; imports are only what the floor's own work needs.

* ``replay`` — the first replay of a recording: the published text is YAML, so every cassette
  file must be read and parsed at least once, and the run's rows must be written once. The floor
  parses each file once with the fastest safe parser there is — libyaml's C parser driven by the
  package's event loader (``safe_yaml.load_untrusted``: no node graph; it beats ``CSafeLoader``
  about 3×, and the ``cassette loader`` row guards that), entries handed on and dropped as they end
  (a streamed read holds one file and one entry) — then writes every row of every per-model DB into
  fresh SQLite files. No digests, no agent loop, no analysis: everything else a replay does is
  above the floor.
* ``index`` — a replay served from the ``cache/`` index: the entries are in the index, so the
  least is to read the index's bytes once (every file of its folder) and write the rows.
* ``verify`` — ``verify`` must vouch for every file's bytes and every cassette entry: a sha256 of
  every file of the run once, and the parse of every cassette file with the parser ``verify`` uses
  (the same event loader, so the ratio measures what verify adds, never a different parser).

The parse is the package's on purpose: a floor that used a slower parser than the tool would make
the ratio unable to fail (the issue-32 defect); one that used a faster unsafe one (aliases allowed)
would not be a floor of a *correct* replay of untrusted cassettes.
"""

from __future__ import annotations

import hashlib
import sqlite3
import sys
import tempfile
from pathlib import Path

#: Bytes read at a time when hashing or reading a file (a floor holds no whole file it need not).
CHUNK = 1 << 20


def cassette_files(run_dir: Path) -> list[Path]:
    """Every cassette YAML file of a run (all generations)."""
    return sorted((run_dir / "cassettes").rglob("*.yaml"))


def _drop(_: object) -> None:
    pass


def parse_cassettes(run_dir: Path) -> int:
    """Parse every cassette file once with the package's safe event loader; returns the files parsed."""
    from oracleproto.transport.safe_yaml import load_untrusted

    files = cassette_files(run_dir)
    for path in files:
        load_untrusted(path.read_bytes(), on_item=_drop)
    return len(files)


def read_bytes(root: Path) -> int:
    """Read every file under ``root`` once (chunked); returns the bytes read."""
    total = 0
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        with path.open("rb") as handle:
            while chunk := handle.read(CHUNK):
                total += len(chunk)
    return total


def hash_files(root: Path) -> int:
    """sha256 of every file under ``root`` once (chunked); returns the files hashed."""
    files = sorted(p for p in root.rglob("*") if p.is_file())
    for path in files:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
        digest.hexdigest()
    return len(files)


def copy_rows(run_dir: Path, out_dir: Path) -> int:
    """Write every row of every table of every DB into a fresh SQLite file; returns rows."""
    rows = 0
    for db in sorted((run_dir / "db").glob("*.db")):
        src = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        dst = sqlite3.connect(out_dir / db.name)
        try:
            tables = src.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
            with dst:
                for name, sql in tables:
                    if name.startswith("sqlite_"):
                        continue
                    dst.execute(sql)
                    data = src.execute(f'SELECT * FROM "{name}"').fetchall()
                    if data:
                        marks = ",".join("?" * len(data[0]))
                        dst.executemany(f'INSERT INTO "{name}" VALUES ({marks})', data)
                    rows += len(data)
        finally:
            src.close()
            dst.close()
    return rows


def floor(run_dir: Path, kind: str, index_dir: Path | None = None) -> None:
    """Run one floor: ``replay``, ``index`` (needs ``index_dir``) or ``verify``."""
    if kind == "verify":
        hash_files(run_dir)
        parse_cassettes(run_dir)
        return
    if kind == "index":
        if index_dir is None or not index_dir.is_dir():
            raise SystemExit(f"index floor: no index folder {index_dir}")
        read_bytes(index_dir)
    elif kind == "replay":
        parse_cassettes(run_dir)
    else:
        raise SystemExit(f"unknown floor {kind!r}: replay, index or verify")
    with tempfile.TemporaryDirectory() as tmp:
        copy_rows(run_dir, Path(tmp))


if __name__ == "__main__":
    floor(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]) if len(sys.argv) > 3 else None)
