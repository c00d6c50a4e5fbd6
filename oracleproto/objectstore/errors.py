"""What can go wrong with a cassette store, sorted by what the user does about it.

ObjectStoreError                 bad URL, bad index, a run that cannot be pushed (exit 2)
├── StoreAccessDeniedError            401/403: the credentials may not do this (exit 3)
├── StoreUnavailableError             throttled (503 SlowDown) or unreachable after every retry (exit 4)
└── DamagedObjectError           an object's bytes are not what its name or the index says (exit 1)
    └── ObjectMissingError            an object the index lists is not in the store

Every message is built by this package from facts it chose to show (operation, object name, HTTP
status, S3 error code) and is scrubbed of the credentials before the exception exists: the
server's own error body may echo a key (``<AWSAccessKeyId>…``), and a crash report writes
messages to disk.
"""

from __future__ import annotations

from oracleproto.errors import OracleprotoError


class ObjectStoreError(OracleprotoError):
    """A cassette store could not be used as asked; the message says what, where and the fix."""


class StoreAccessDeniedError(ObjectStoreError):
    """The store refused the credentials from the environment (HTTP 401/403)."""


class StoreUnavailableError(ObjectStoreError):
    """The store kept failing (503 SlowDown, 5xx, connection errors) after every retry; rerun later."""


class DamagedObjectError(ObjectStoreError):
    """An object (or a run index) does not hash to its name, has the wrong size, or disagrees with
    the run's seal; nothing was written into place."""


class ObjectMissingError(DamagedObjectError):
    """An object a run index lists is not in the store."""
