"""The run index: which objects make up one sealed run, versioned, validated as untrusted input.

Format ``oracleproto-run-index/1`` (JSON, sorted keys, indent 1, trailing newline)::

    {
     "cassette_root": "<manifest cassettes.root_digest, or null>",
     "dataset": {"name": "demo.db", "sha256": "<manifest hashes.source_db>", "size": 123},
     "files": {"analysis/summary.json": {"sha256": "…", "size": 812}, …, "attestation.json": {…},
               "manifest.json": {…}},
     "format": "oracleproto-run-index/1",
     "run_id": "20260101-000000-de00"
    }

``files`` are the run's published files (``attest.published_files``) plus ``attestation.json``,
by path relative to the run folder; each is one object named by its sha256. ``dataset`` is the
source DB the run was made from — its object name *is* the manifest's ``source_db`` hash — with
``name`` and ``size`` null when only its digest is published (``--no-dataset``). The index's own
sha256 is the run's root in the store: it commits to every byte of the run, and the attestation
and manifest inside it commit to the cassette Merkle root, which pull recomputes.

An index read from a store or a file may be hostile: the model is strict, names are confined
relative paths, sizes are bounded, and a newer format is refused with the upgrade it needs.
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from oracleproto.errors import OracleprotoError
from oracleproto.objectstore.errors import DamagedObjectError, ObjectStoreError
from oracleproto.primitives.hashing import sha256_hex
from oracleproto.primitives.paths import check_relative
from oracleproto.store.naming import validate_run_id

FORMAT = "oracleproto-run-index/1"
FORMAT_PREFIX = "oracleproto-run-index/"
MANIFEST = "manifest.json"
ATTESTATION = "attestation.json"
#: S3's limit for one PUT (objects are written in one conditional PUT).
MAX_OBJECT_BYTES = 5 << 30
MAX_RUN_BYTES = 256 << 30
MAX_FILES = 200_000
MAX_INDEX_BYTES = 32 << 20

Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
Size = Annotated[int, Field(ge=0, le=MAX_OBJECT_BYTES)]


class FileRef(BaseModel):
    """One file of the run: the object holding its bytes."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")
    sha256: Sha256
    """sha256 of the file's bytes, which is also the object's name."""
    size: Size
    """Its length in bytes (a truncated object is caught before it is hashed)."""


class DatasetRef(BaseModel):
    """The source DB: always its digest, its bytes when published."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")
    sha256: Sha256
    """The manifest's ``hashes.source_db``; the object name when the DB is published."""
    name: str | None
    """The file name to write it under (``dataset/<name>``), null when not published."""
    size: Size | None
    """Its length, null when not published."""

    @field_validator("name")
    @classmethod
    def _plain_name(cls, name: str | None) -> str | None:
        if name is not None and (len(PurePosixPath(name).parts) != 1 or name in (".", "..") or "\\" in name):
            raise ValueError("must be a plain file name")
        return name


class RunIndex(BaseModel):
    """Which objects make up one sealed run."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")
    format: str
    """``oracleproto-run-index/1``."""
    run_id: str
    """The run's id (run-layout.md format)."""
    dataset: DatasetRef
    """The source DB."""
    cassette_root: str | None
    """The manifest's cassette Merkle root (shown by ``store ls``; pull recomputes it)."""
    files: dict[str, FileRef]
    """Every published file by its path relative to the run folder."""

    @field_validator("format")
    @classmethod
    def _format(cls, value: str) -> str:
        if value != FORMAT:
            raise ValueError(f"expected {FORMAT!r}")
        return value

    @field_validator("run_id")
    @classmethod
    def _run_id(cls, value: str) -> str:
        try:
            return validate_run_id(value)
        except OracleprotoError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("files")
    @classmethod
    def _files(cls, files: dict[str, FileRef]) -> dict[str, FileRef]:
        if len(files) > MAX_FILES:
            raise ValueError(f"more than {MAX_FILES} files")
        for name in files:
            try:
                check_relative(name, what="file")
            except OracleprotoError as exc:
                raise ValueError(str(exc)) from None
        for needed in (MANIFEST, ATTESTATION):
            if needed not in files:
                raise ValueError(f"no {needed} listed (every sealed run has one)")
        if sum(f.size for f in files.values()) > MAX_RUN_BYTES:
            raise ValueError(f"more than {MAX_RUN_BYTES >> 30} GiB in all")
        return dict(sorted(files.items()))

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files.values()) + (self.dataset.size or 0)

    def objects(self) -> dict[str, int]:
        """Every object this run needs (digest → size), the published dataset included."""
        out = {ref.sha256: ref.size for ref in self.files.values()}
        if self.dataset.name is not None and self.dataset.size is not None:
            out[self.dataset.sha256] = self.dataset.size
        return out


def index_bytes(index: RunIndex) -> bytes:
    """The stored form: sorted keys, indent 1, trailing newline (diffable, like the attestation)."""
    return (
        json.dumps(index.model_dump(mode="json"), sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    ).encode()


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(top level)"
    return f"{where}: {err['msg']}"


def parse_index(data: bytes, where: str, *, digest: str | None = None) -> RunIndex:
    """Check ``data`` against its expected ``digest`` (when known), then parse it strictly."""
    if len(data) > MAX_INDEX_BYTES:
        raise DamagedObjectError(f"{where}: {len(data)} bytes, larger than any run index ({MAX_INDEX_BYTES})")
    if digest is not None and sha256_hex(data) != digest:
        raise DamagedObjectError(
            f"{where}: its bytes hash to {sha256_hex(data)}, not to its name {digest}: "
            "the index was tampered "
            "with or truncated; refusing it (nothing was written)"
        )
    try:
        doc: Any = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ObjectStoreError(f"{where}: not a run index (not JSON: {exc})") from None
    fmt = doc.get("format") if isinstance(doc, dict) else None
    if isinstance(fmt, str) and fmt.startswith(FORMAT_PREFIX) and fmt != FORMAT:
        raise ObjectStoreError(
            f"{where}: written in {fmt!r}, which this oracleproto does not know (it reads {FORMAT!r}); "
            "upgrade oracleproto"
        )
    try:
        return RunIndex.model_validate(doc)
    except ValidationError as exc:
        raise ObjectStoreError(f"{where}: not a valid run index ({_first_error(exc)})") from None
