"""Run store: run directory layout, manifest, per-model SQLite (run-layout.md)."""

from __future__ import annotations

from oracleproto.store.codec import decode_sample, encode_letters, encode_sample
from oracleproto.store.dump import logical_digest, logical_dump
from oracleproto.store.manifest import (
    CassettesInfo,
    Filters,
    Grid,
    Hashes,
    Manifest,
    RefreshInfo,
    atomic_write_text,
)
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
