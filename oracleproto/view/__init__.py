"""``oracleproto view``: one self-contained static HTML file to look at a run's samples and results.

Reads runs only (manifest, DBs, cassettes, published plots) and never executes anything; the
document is embedded in the page as JSON and rendered on demand by inline JavaScript.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oracleproto._lazy import export_dir, load_export

if TYPE_CHECKING:
    from oracleproto.view.document import SCHEMA, build_document, document_json
    from oracleproto.view.page import ViewError, render_page, write_page
    from oracleproto.view.source import opened_run

# Each public name and the module that defines it, imported on first use (PEP 562).
_EXPORTS = {
    "SCHEMA": "oracleproto.view.document",
    "build_document": "oracleproto.view.document",
    "document_json": "oracleproto.view.document",
    "ViewError": "oracleproto.view.page",
    "render_page": "oracleproto.view.page",
    "write_page": "oracleproto.view.page",
    "opened_run": "oracleproto.view.source",
}

__all__ = [
    "SCHEMA",
    "ViewError",
    "build_document",
    "document_json",
    "opened_run",
    "render_page",
    "write_page",
]


def __getattr__(name: str) -> Any:
    return load_export(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return export_dir(globals(), _EXPORTS)
