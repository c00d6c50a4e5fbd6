"""A content-addressed store of sealed runs on S3-compatible object storage or a shared folder.

``CASSETTE_STORE=s3://bucket/prefix`` (or ``file:///folder``). Each file of a sealed run is one
object named by the sha256 of its bytes (write-once); a small versioned run index lists (path,
sha256, size) of every file and names the source DB. ``push_run`` uploads only what the store
lacks; ``pull_run`` downloads only what the local cache lacks and verifies every object, the seal
and the cassette Merkle root before anything is placed; ``materialize`` serves ``--from-store``.
Modules, one job each: ``location`` (URLs), ``access`` (credentials from the environment),
``tuning`` (retries, parallelism), ``backend`` (obstore, error translation and scrubbing),
``naming``, ``index`` (the run index format), ``sealed`` (a run on disk → its index), ``transfer``
(parallel transfers), ``push``, ``cache``, ``resolve``, ``assemble``, ``pull``, ``listing``.
"""

from __future__ import annotations

from oracleproto.objectstore.backend import Backend
from oracleproto.objectstore.cache import ObjectCache, default_cache_dir
from oracleproto.objectstore.errors import (
    DamagedObjectError,
    ObjectMissingError,
    ObjectStoreError,
    StoreAccessDeniedError,
    StoreUnavailableError,
)
from oracleproto.objectstore.index import FORMAT, RunIndex, parse_index
from oracleproto.objectstore.listing import ListedRun, list_runs
from oracleproto.objectstore.location import STORE_ENV, StoreLocation, parse_store_url, store_from
from oracleproto.objectstore.pull import PulledRun, materialize, pull_run
from oracleproto.objectstore.push import PushResult, push_run

__all__ = [
    "FORMAT",
    "STORE_ENV",
    "Backend",
    "DamagedObjectError",
    "ListedRun",
    "ObjectCache",
    "ObjectMissingError",
    "ObjectStoreError",
    "PulledRun",
    "PushResult",
    "RunIndex",
    "StoreAccessDeniedError",
    "StoreLocation",
    "StoreUnavailableError",
    "default_cache_dir",
    "list_runs",
    "materialize",
    "parse_index",
    "parse_store_url",
    "pull_run",
    "push_run",
    "store_from",
]
