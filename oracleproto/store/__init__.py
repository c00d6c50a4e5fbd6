"""Run store: run directory layout, manifest, per-model SQLite (run-layout.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oracleproto._lazy import export_dir, load_export

if TYPE_CHECKING:
    from oracleproto.primitives.fileio import atomic_write_text
    from oracleproto.store.codec import decode_sample, encode_letters, encode_sample
    from oracleproto.store.dump import logical_digest, logical_dump
    from oracleproto.store.manifest import CassettesInfo, Filters, Grid, Hashes, Manifest, RefreshInfo
    from oracleproto.store.model_store import ModelStore, Slot
    from oracleproto.store.naming import (
        format_timestamp,
        model_file_map,
        model_file_name,
        new_run_id,
        parse_timestamp,
        parse_virtual_slug,
        validate_real_slug,
        validate_run_id,
        virtual_slug,
    )
    from oracleproto.store.run_meta import RunMeta
    from oracleproto.store.rundir import RunDir
    from oracleproto.store.schema import SCHEMA_VERSION, init_schema, sample_columns

# Each public name and the module that defines it, imported on first use (PEP 562).
_EXPORTS = {
    "decode_sample": "oracleproto.store.codec",
    "encode_letters": "oracleproto.store.codec",
    "encode_sample": "oracleproto.store.codec",
    "logical_digest": "oracleproto.store.dump",
    "logical_dump": "oracleproto.store.dump",
    "CassettesInfo": "oracleproto.store.manifest",
    "Filters": "oracleproto.store.manifest",
    "Grid": "oracleproto.store.manifest",
    "Hashes": "oracleproto.store.manifest",
    "Manifest": "oracleproto.store.manifest",
    "RefreshInfo": "oracleproto.store.manifest",
    "atomic_write_text": "oracleproto.primitives.fileio",
    "ModelStore": "oracleproto.store.model_store",
    "Slot": "oracleproto.store.model_store",
    "format_timestamp": "oracleproto.store.naming",
    "model_file_map": "oracleproto.store.naming",
    "model_file_name": "oracleproto.store.naming",
    "new_run_id": "oracleproto.store.naming",
    "parse_timestamp": "oracleproto.store.naming",
    "parse_virtual_slug": "oracleproto.store.naming",
    "validate_real_slug": "oracleproto.store.naming",
    "validate_run_id": "oracleproto.store.naming",
    "virtual_slug": "oracleproto.store.naming",
    "RunMeta": "oracleproto.store.run_meta",
    "RunDir": "oracleproto.store.rundir",
    "SCHEMA_VERSION": "oracleproto.store.schema",
    "init_schema": "oracleproto.store.schema",
    "sample_columns": "oracleproto.store.schema",
}

__all__ = [
    "SCHEMA_VERSION",
    "CassettesInfo",
    "Filters",
    "Grid",
    "Hashes",
    "Manifest",
    "ModelStore",
    "RefreshInfo",
    "RunDir",
    "RunMeta",
    "Slot",
    "atomic_write_text",
    "decode_sample",
    "encode_letters",
    "encode_sample",
    "format_timestamp",
    "init_schema",
    "logical_digest",
    "logical_dump",
    "model_file_map",
    "model_file_name",
    "new_run_id",
    "parse_timestamp",
    "parse_virtual_slug",
    "sample_columns",
    "validate_real_slug",
    "validate_run_id",
    "virtual_slug",
]


def __getattr__(name: str) -> Any:
    return load_export(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return export_dir(globals(), _EXPORTS)
