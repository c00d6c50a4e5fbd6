"""``bundle.json``: the bundle's own manifest, validated (pydantic) before any member is used.

A bundle comes from a stranger, so ``bundle.json`` is checked for shape, self digest, member
names (confined to the bundle layout), sizes (capped) and the run id before anything is
extracted; every error names the file and the field.
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from oracleproto.errors import OracleprotoError, StoreError
from oracleproto.primitives.hashing import canonical_json, sha256_hex
from oracleproto.primitives.json_input import load_json
from oracleproto.primitives.paths import check_relative
from oracleproto.store.naming import validate_run_id

FORMAT = "oracleproto-bundle/1"
BUNDLE_MANIFEST = "bundle.json"
#: ``bundle.json`` larger than this is refused before it is read (bytes).
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
#: Any one member larger than this (declared or in its tar header) is refused before it is read.
MAX_MEMBER_BYTES = 1024 * 1024 * 1024
#: All members together: the bound on uncompressed bytes read from a bundle (compression bombs).
MAX_BUNDLE_BYTES = 4 * 1024 * 1024 * 1024


class BundleError(OracleprotoError):
    """A bundle cannot be exported or imported; the message says which member and why."""


class MemberInfo(BaseModel):
    """One listed member: its content digest and size."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="sha256 hex of the member bytes.")
    size: int = Field(ge=0, description="Member size in bytes.")


class DatasetRef(BaseModel):
    """The run's source dataset: its digest, and the member holding it (null when not bundled)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    sha256: str = Field(description="sha256 of the source DB the run was recorded on.")
    member: str | None = Field(description="'dataset/<name>.db', or null with --no-dataset.")


class BundleManifest(BaseModel):
    """Typed ``bundle.json`` (format ``oracleproto-bundle/1``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    format: Literal["oracleproto-bundle/1"] = Field(description="Bundle format and version.")
    run_id: str = Field(description="Run id of the bundled run (members under run/<run_id>/).")
    dataset: DatasetRef
    members: dict[str, MemberInfo] = Field(description="Every other member: name -> sha256 and size.")

    @field_validator("run_id")
    @classmethod
    def _run_id(cls, value: str) -> str:
        try:
            return validate_run_id(value)
        except StoreError as exc:
            raise ValueError(str(exc)) from exc

    @property
    def total_bytes(self) -> int:
        """Sum of the listed member sizes."""
        return sum(m.size for m in self.members.values())


def check_member_name(name: str, run_id: str | None, where: str) -> str:
    """A member name inside the bundle layout (``run/<run_id>/…``, ``dataset/x``, ``expected/x``)."""
    path = check_relative(name, what=f"{where}: member", error=BundleError)
    top = path.parts[0]
    ok = (top == "run" and len(path.parts) >= 3 and (run_id is None or path.parts[1] == run_id)) or (
        top in ("dataset", "expected") and len(path.parts) == 2
    )
    if not ok or str(PurePosixPath(name)) != name:
        raise BundleError(
            f"{where}: member {name!r} is outside the bundle layout (run/<run_id>/…, dataset/<file>, "
            "expected/<file>); refusing to import"
        )
    return name


def parse_bundle_manifest(raw: bytes, where: str) -> tuple[dict[str, Any], BundleManifest]:
    """Parse, digest-check and validate ``bundle.json``; returns the body (no self digest) and its model."""
    source = f"{where}: {BUNDLE_MANIFEST}"
    try:
        doc = load_json(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BundleError(f"{source} is not valid JSON ({exc})") from exc
    if not isinstance(doc, dict):
        raise BundleError(f"{source}: expected a JSON object, got {type(doc).__name__}")
    body = {k: v for k, v in doc.items() if k != "self_digest"}
    if body.get("format") != FORMAT:
        raise BundleError(f"{source}: format is {body.get('format')!r}, expected {FORMAT!r}")
    if sha256_hex(canonical_json(body)) != doc.get("self_digest"):
        raise BundleError(f"{source} is damaged: its self_digest does not match its content")
    try:
        model = BundleManifest.model_validate(body)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()
        )
        raise BundleError(f"{source} is not a valid bundle manifest: {problems}") from exc
    for name, info in model.members.items():
        check_member_name(name, model.run_id, source)
        if info.size > MAX_MEMBER_BYTES:
            raise BundleError(
                f"{source}: member {name} declares {info.size:,} bytes, over the per-member limit of "
                f"{MAX_MEMBER_BYTES:,}; refusing to import"
            )
    if model.total_bytes > MAX_BUNDLE_BYTES:
        raise BundleError(
            f"{source}: members total {model.total_bytes:,} bytes, over the bundle limit of "
            f"{MAX_BUNDLE_BYTES:,}; refusing to import"
        )
    member = model.dataset.member
    if member is not None and (member not in model.members or not member.startswith("dataset/")):
        raise BundleError(f"{source}: dataset.member {member!r} is not a listed dataset/ member")
    manifest = f"run/{model.run_id}/manifest.json"
    if manifest not in model.members:
        raise BundleError(f"{source}: the bundle lists no {manifest}; not a bundle of run {model.run_id}")
    return body, model
