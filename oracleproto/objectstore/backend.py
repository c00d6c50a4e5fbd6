"""The one module that talks to object storage: obstore, behind five calls.

``head_size``, ``put_new`` (write-once: a conditional PUT, ``If-None-Match: *`` on S3, an
exclusive link on a file system), ``get_chunks``, ``get_small`` and ``list_keys``. Every failure
of the client library becomes one of our errors (``errors.py``) whose message was built here from
the operation, the object's name, the HTTP status and S3's error code, then scrubbed of the
credentials: the library's own text carries the server's error body verbatim, and S3-compatible
servers echo the access key id in it. The original exception is dropped (``from None``), so no
traceback or crash report can carry it either.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, NoReturn

from oracleproto.objectstore.access import KEY_ID, RETRIES_HINT, SECRET, S3Access, s3_access
from oracleproto.objectstore.errors import (
    DamagedObjectError,
    ObjectMissingError,
    ObjectStoreError,
    StoreAccessDeniedError,
    StoreUnavailableError,
)
from oracleproto.objectstore.location import StoreLocation, local_folder
from oracleproto.objectstore.tuning import Tuning, tuning_from
from oracleproto.primitives.redact import scrub_text

if TYPE_CHECKING:
    from obstore.store import ClientConfig, LocalStore, RetryConfig, S3Config, S3Store

_STATUS = re.compile(r"status code: (\d{3})")
_S3_CODE = re.compile(r"<Code>([A-Za-z0-9]+)</Code>")
_S3_MESSAGE = re.compile(r"<Message>([^<]*)</Message>")
#: How much of the server's own message is shown (after scrubbing: a cut must not split a secret).
_MESSAGE_CHARS = 300
_UNREACHABLE = ("error sending request", "connection refused", "dns error", "tcp connect", "connection reset")
#: Why each operation is done, for the permission message (which S3 action it needs).
_NEEDS = {
    "HEAD": "s3:GetObject",
    "GET": "s3:GetObject",
    "PUT": "s3:PutObject",
    "LIST": "s3:ListBucket",
}


class Backend:
    """A store opened with the environment's credentials and tuning."""

    def __init__(
        self, location: StoreLocation, env: Mapping[str, str] | None = None, *, create: bool = False
    ) -> None:
        """Check the configuration now (bad input fails before anything happens); connect on first use.

        ``create``: a ``file://`` store's folder is made when missing (push); readers refuse it.
        """
        environ = os.environ if env is None else env
        self.location = location
        self.tuning: Tuning = tuning_from(environ)
        self.access: S3Access | None = s3_access(environ) if location.scheme == "s3" else None
        self._create = create
        self._opened: S3Store | LocalStore | None = None

    @property
    def _store(self) -> S3Store | LocalStore:
        if self._opened is None:
            self._opened = self._open()
        return self._opened

    @property
    def secrets(self) -> tuple[str, ...]:
        return () if self.access is None else self.access.secrets

    def _retry(self) -> RetryConfig:
        return {
            "max_retries": self.tuning.retries,
            "backoff": {"init_backoff": timedelta(milliseconds=self.tuning.backoff_ms), "base": 2},
            "retry_timeout": timedelta(seconds=self.tuning.retry_timeout_s),
        }

    def _open(self) -> S3Store | LocalStore:
        from obstore.store import LocalStore, S3Store

        if self.access is None:
            folder = local_folder(self.location)
            if not self._create and not folder.is_dir():
                raise ObjectStoreError(
                    f"store {self.location}: no such folder; check the URL (nothing has been pushed there "
                    "yet?)"
                )
            try:
                return LocalStore(str(folder), mkdir=True)
            except Exception as exc:  # the library's message names the folder and the OS error
                self._raise(exc, "OPEN", str(folder))
        access = self.access
        client: ClientConfig = {
            "allow_http": access.allow_http,
            "connect_timeout": timedelta(seconds=10),
            # One object is one request: a large DB on a slow link must not hit a 30 s default.
            "timeout": timedelta(hours=1),
        }
        config: S3Config = {"region": access.region}
        if access.endpoint:
            config["endpoint"] = access.endpoint
        if access.anonymous:
            config["skip_signature"] = True
        else:
            config["access_key_id"] = access.key_id or ""
            config["secret_access_key"] = access.secret or ""
        if access.token:
            config["session_token"] = access.token
        try:
            return S3Store(
                self.location.bucket,
                prefix=self.location.prefix or None,
                config=config,
                client_options=client,
                retry_config=self._retry(),
            )
        except Exception as exc:
            self._raise(exc, "OPEN", "")

    # -- translation -------------------------------------------------------------------------

    def _raise(self, exc: BaseException, op: str, key: str) -> NoReturn:
        raise self._translate(exc, op, key) from None

    def _translate(self, exc: BaseException, op: str, key: str) -> ObjectStoreError:
        from obstore.exceptions import PermissionDeniedError, UnauthenticatedError

        text = str(exc)
        status_m, code_m, msg_m = _STATUS.search(text), _S3_CODE.search(text), _S3_MESSAGE.search(text)
        status = int(status_m.group(1)) if status_m else None
        code = code_m.group(1) if code_m else None
        shown = self._scrub(msg_m.group(1))[:_MESSAGE_CHARS] if msg_m else ""
        said = " ".join(
            p for p in (f"HTTP {status}" if status else "", code or "", f"({shown})" if shown else "") if p
        )
        where = f"store {self.location}: {op} {key}".rstrip()
        if (
            isinstance(exc, PermissionDeniedError | UnauthenticatedError)
            or status in (401, 403)
            or ("os error 13" in text)
        ):
            return StoreAccessDeniedError(
                self._scrub(f"{where} refused ({said or 'permission denied'}): {self._denied_fix(op)}")
            )
        lowered = text.lower()
        if (status is not None and status >= 500) or code in ("SlowDown", "ServiceUnavailable"):
            throttled = " — the store is throttling requests" if code == "SlowDown" or status == 503 else ""
            return StoreUnavailableError(
                self._scrub(
                    f"{where} failed after {self.tuning.retries} retries ({said}{throttled}); "
                    "nothing is lost: "
                    f"run the same command again later, it transfers only what is missing ({RETRIES_HINT})"
                )
            )
        if any(k in lowered for k in _UNREACHABLE):
            endpoint = self.access.endpoint if self.access and self.access.endpoint else "the S3 endpoint"
            return StoreUnavailableError(
                self._scrub(
                    f"{where}: cannot reach {endpoint} "
                    f"(connection failed after {self.tuning.retries} retries); "
                    "check the endpoint (AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL) and the network, then run "
                    "the "
                    "same command again: it resumes"
                )
            )
        if code == "NoSuchBucket":
            return ObjectStoreError(
                self._scrub(
                    f"{where}: bucket {self.location.bucket!r} does not exist; create it or fix the URL"
                )
            )
        detail = said or type(exc).__name__
        return ObjectStoreError(
            self._scrub(f"{where} failed ({detail}); run the same command again to resume")
        )

    def _denied_fix(self, op: str) -> str:
        if self.access is None:
            able = "writable" if op == "PUT" else "readable"
            return f"the store's folder {self.location.prefix} is not {able} by this user"
        if self.access.anonymous:
            return (
                f"no credentials in the environment, so the request was anonymous; set {KEY_ID} and {SECRET} "
                "(and AWS_SESSION_TOKEN for temporary ones)"
            )
        need = _NEEDS.get(op, "access")
        extra = (
            "; pushing needs write access — read-only credentials can `store pull`, `store ls` and "
            "--from-store"
            if op == "PUT"
            else ""
        )
        return f"the credentials from {KEY_ID} lack {need} on this bucket/prefix{extra}"

    def _scrub(self, message: str) -> str:
        return scrub_text(message, self.secrets)

    # -- the five calls ----------------------------------------------------------------------

    def head_size(self, key: str) -> int | None:
        """The object's size, or None when it does not exist."""
        import obstore

        store = self._store  # outside the try: a refused open keeps its own message
        try:
            return int(obstore.head(store, key)["size"])
        except FileNotFoundError:
            return None
        except Exception as exc:
            self._raise(exc, "HEAD", key)

    def put_new(self, key: str, data: bytes) -> bool:
        """Write ``data`` under ``key`` unless an object is already there; True when this call wrote it.

        One conditional PUT (never multipart: S3 accepts ``If-None-Match`` on a single PUT only, and
        a single PUT is atomic — a killed upload leaves nothing under the name).
        """
        import obstore
        from obstore.exceptions import AlreadyExistsError, PreconditionError

        store = self._store  # outside the try: a refused open keeps its own message
        try:
            obstore.put(store, key, data, mode="create", use_multipart=False)
        except (AlreadyExistsError, PreconditionError):
            return False  # written by someone else (content addressing: the same bytes), or by our retry
        except Exception as exc:
            self._raise(exc, "PUT", key)
        return True

    def get_chunks(self, key: str, chunk: int = 1 << 20) -> Iterator[bytes]:
        """The object's bytes, streamed; a missing object is a :class:`DamagedObjectError` naming it."""
        import obstore

        store = self._store  # outside the try: a refused open keeps its own message
        try:
            result = obstore.get(store, key)
            for part in result.stream(min_chunk_size=chunk):
                yield bytes(part)
        except FileNotFoundError:
            raise ObjectMissingError(
                self._scrub(
                    f"store {self.location}: object {key} is missing (listed by the run's index); "
                    "push the run "
                    "again from a machine that has it"
                )
            ) from None
        except Exception as exc:
            self._raise(exc, "GET", key)

    def get_small(self, key: str, limit: int) -> bytes | None:
        """A small object whole (run indexes), None when missing; refused past ``limit`` bytes."""
        out = bytearray()
        try:
            for part in self.get_chunks(key, chunk=64 << 10):
                out += part
                if len(out) > limit:
                    raise DamagedObjectError(
                        self._scrub(
                            f"store {self.location}: {key} is larger than {limit} bytes; not a run index"
                        )
                    )
        except ObjectMissingError:
            return None
        return bytes(out)

    def list_keys(self, prefix: str) -> list[str]:
        """Every object name under ``prefix``, sorted."""
        import obstore

        store = self._store  # outside the try: a refused open keeps its own message
        try:
            return sorted(str(meta["path"]) for batch in obstore.list(store, prefix) for meta in batch)
        except FileNotFoundError:
            return []
        except Exception as exc:
            self._raise(exc, "LIST", prefix)
