"""``PANEL.toml``: the members a panel is built from, each named by path or store id with its SHA-256.

A member's SHA-256 is the digest of the file that seals it: its ``attestation.json`` when the run
is sealed (it covers every published file), else its ``manifest.json``. ``oracleproto panel
build`` prints the digest it found for a member whose digest does not match, so a panel file is
written once from the printed values and then pins its members.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from oracleproto.errors import OracleprotoError

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class PanelError(OracleprotoError):
    """A panel cannot be built, or a panel directory is not one; the message says why."""


class MemberSpec(BaseModel):
    """One member of a panel: a run or shard directory, or a run in a cassette store."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str | None = Field(default=None, description="Run directory, relative to PANEL.toml's folder.")
    store: str | None = Field(default=None, description="Run id (or index digest) in the cassette store.")
    sha256: str = Field(description="sha256 of the member's attestation.json (else its manifest.json).")

    @model_validator(mode="after")
    def _one_reference(self) -> MemberSpec:
        if (self.path is None) == (self.store is None):
            raise ValueError("give exactly one of 'path' and 'store'")
        if not _SHA256.fullmatch(self.sha256):
            raise ValueError(f"sha256 {self.sha256!r} is not 64 lower-case hex digits")
        return self

    @property
    def ref(self) -> str:
        """How the member is named in messages."""
        return f"path {self.path}" if self.path is not None else f"store id {self.store}"


class PanelSpec(BaseModel):
    """The whole ``PANEL.toml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = Field(default=None, description="A name for the panel (shown, not hashed).")
    store: str | None = Field(
        default=None, description="Store URL for members named by store id (else --store, CASSETTE_STORE)."
    )
    models: list[str] | None = Field(
        default=None,
        description="The panel's model order (real model slugs, e.g. a single run's MODELS order); "
        "default: the experiment's (sorted), else member order.",
    )
    member: list[MemberSpec] = Field(min_length=1, description="The members, in the panel's order.")


def load_spec(path: Path) -> PanelSpec:
    """Read and validate ``PANEL.toml``; every problem names the file and the key."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PanelError(f"{path}: panel file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PanelError(f"{path}: cannot be read ({exc})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PanelError(f"{path}: not valid TOML ({exc})") from None
    try:
        return PanelSpec.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()
        )
        raise PanelError(
            f"{path}: not a panel file ({problems}); expected [[member]] tables, each with path = "
            '"RUN_DIR" or store = "RUN_ID", and sha256 = "<sha256 of its attestation.json>"'
        ) from None
