"""Where ``oracleproto view`` writes a run's page, and the one-line hint other commands print.

Kept apart from ``cli/view.py`` so that ``run`` and ``replay`` print the hint without importing
the viewer (its document builder, bundle reader and server) at start-up (issue 18).
"""

from __future__ import annotations

from pathlib import Path

#: Where the page goes without --out: next to the current directory, named by the run.
DEFAULT_NAME = "oracleproto-view-{run_id}.html"


def default_out(label: str) -> Path:
    """``oracleproto-view-<run id or bundle name>.html`` in the current directory."""
    stem = label.removesuffix(".tar.gz").removesuffix(".tgz")
    return Path(DEFAULT_NAME.format(run_id=stem))


def viewer_hint(ref: str, run_id: str) -> str:
    """Where the run's viewer file is (in the current directory), or the command that writes it."""
    existing = default_out(run_id)
    if existing.is_file():
        return f"viewer: {existing} (rewrite it with: oracleproto view {ref} --out {existing})"
    return f"see what the model saw: oracleproto view {ref}   (writes {existing}; open it in a browser)"
