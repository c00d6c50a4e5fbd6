"""Hash-chain links of the dataset (run-layout.md)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from oracleproto.dataset.hashes import metadata_hash, source_db_hash
from oracleproto.dataset.loader import read_features_json
from oracleproto.primitives.hashing import sha256_hex


def test_source_db_hash_is_sha256_of_the_file(shared_db: Path) -> None:
    assert source_db_hash(shared_db) == hashlib.sha256(shared_db.read_bytes()).hexdigest()


def test_metadata_hash_canonicalises_json() -> None:
    assert metadata_hash('{"b": 1,  "a": "é"}') == sha256_hex('{"a":"é","b":1}')
    assert metadata_hash('{"a":"é","b":1}') == metadata_hash('{\n  "b": 1, "a": "\\u00e9"\n}')


def test_metadata_hash_of_non_json_is_the_raw_string() -> None:
    assert metadata_hash("{not json") == sha256_hex("{not json")


def test_shared_metadata_hash_is_stable(shared_db: Path) -> None:
    features = read_features_json(shared_db)
    assert metadata_hash(features) == "02836c8f6f7bef36f944456d5b97b4a856b198289ba4b08665468907ef0393b9"
