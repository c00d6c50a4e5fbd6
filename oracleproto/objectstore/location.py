"""``CASSETTE_STORE`` URLs: ``s3://bucket/prefix`` or ``file:///absolute/folder``.

Parsed here, with a message for every malformed form, before any client is built. Credentials never
belong in the URL (they come from the environment, ``access.py``): a URL with userinfo or a query
is refused, and shown only through :func:`oracleproto.primitives.redact.redact_url`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from oracleproto.objectstore.errors import ObjectStoreError
from oracleproto.primitives.redact import redact_url

#: The variable that names the store when no ``--store`` / ``--from-store`` is given.
STORE_ENV = "CASSETTE_STORE"
#: S3's bucket naming rule (lower-case letters, digits, dots, hyphens; 3–63 characters).
_BUCKET_RE = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_EXAMPLES = "expected s3://BUCKET/PREFIX or file:///ABSOLUTE/FOLDER"


@dataclass(frozen=True)
class StoreLocation:
    """Where a store lives: an S3 bucket and key prefix, or a folder on a shared file system."""

    scheme: str  # "s3" or "file"
    bucket: str  # empty for file://
    prefix: str  # "a/b" without slashes at either end (S3), or the absolute folder (file)

    def __str__(self) -> str:
        if self.scheme == "file":
            return f"file://{self.prefix}"
        return f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"


def _refuse(url: str, why: str) -> ObjectStoreError:
    return ObjectStoreError(f"cassette store URL {redact_url(url)!r}: {why}; {_EXAMPLES}")


def _clean_prefix(url: str, raw: str) -> str:
    parts = [p for p in raw.split("/") if p]
    if any(p in (".", "..") for p in parts) or "\\" in raw or "\x00" in raw:
        raise _refuse(url, "its prefix holds '.', '..', a backslash or a NUL")
    return "/".join(parts)


def parse_store_url(url: str) -> StoreLocation:
    """``url`` as a :class:`StoreLocation`, or a message naming what is wrong with it."""
    text = url.strip()
    scheme, sep, rest = text.partition("://")
    if not sep:
        raise _refuse(url, "no scheme")
    if "?" in rest or "#" in rest:
        raise _refuse(
            url,
            "no query or fragment is accepted (credentials go in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)",
        )
    authority, _, path = rest.partition("/")
    if "@" in authority:
        raise _refuse(
            url,
            "credentials do not go in the URL (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the "
            "environment)",
        )
    if scheme == "s3":
        if not _BUCKET_RE.fullmatch(authority) or ".." in authority:
            raise _refuse(
                url, f"{authority!r} is not an S3 bucket name (3–63 lower-case letters, digits, '.', '-')"
            )
        return StoreLocation("s3", authority, _clean_prefix(url, unquote(path)))
    if scheme == "file":
        if authority not in ("", "localhost"):
            raise _refuse(url, "a file URL names an absolute folder: file:///path (three slashes)")
        folder = PurePosixPath("/" + unquote(path))
        if ".." in folder.parts or "\x00" in str(folder):
            raise _refuse(url, "its folder holds '..' or a NUL")
        return StoreLocation("file", "", os.path.normpath(str(folder)))
    raise _refuse(url, f"scheme {scheme!r} is not supported")


def store_from(option: str | None, *, flag: str) -> StoreLocation:
    """The store named by ``option`` (``--store``/``--from-store``), else by ``CASSETTE_STORE``."""
    value = option if option else os.environ.get(STORE_ENV, "")
    if not value.strip():
        raise ObjectStoreError(f"no cassette store given: pass {flag} URL or set {STORE_ENV} ({_EXAMPLES})")
    return parse_store_url(value)


def local_folder(location: StoreLocation) -> Path:
    """The folder of a ``file://`` store."""
    return Path(location.prefix)
