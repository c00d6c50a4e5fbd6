"""One recorded logical call, and its vcrpy-compatible, content-addressed serialisation.

An entry is stored as a vcrpy interaction (``request``/``response``) plus an
``oracleproto`` block with the key, the canonical request, the sample context, timing,
attempt history and the entry digest. The digest is the sha256 of the canonical JSON of
the interaction without the digest itself, so any hand edit is detected on load.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from json.encoder import encode_basestring_ascii
from typing import Any

from oracleproto.errors import CassetteIntegrityError
from oracleproto.primitives.hashing import LONG_STRING, canonical_json, json_string, sha256_hex
from oracleproto.transport.keys import CHANNELS, Channel


@dataclass
class Entry:
    """A recorded logical call: canonical request, final outcome, audit data."""

    key: str
    channel: Channel
    request_meta: dict[str, Any]
    request_body: str
    context: dict[str, Any] | None
    occurrence: int | None
    method: str
    uri: str
    request_headers: dict[str, list[str]]
    status: int
    reason: str
    response_headers: dict[str, list[str]]
    body: bytes
    exception: dict[str, str] | None
    latency_ms: int
    recorded_at: str
    attempts: list[dict[str, Any]] = field(default_factory=list)
    requests: int = 1
    generation: int = 0
    #: The digest of the entry as loaded (verified) or as last ``put``: a store recomputes it on
    #: every ``put``, and whoever changes a stored entry puts it again at once (the recorder does).
    digest: str | None = field(default=None, compare=False, repr=False)

    @property
    def model(self) -> str | None:
        """The virtual model of the context, else the request's model field."""
        if self.context is not None:
            return str(self.context["model"])
        model = self.request_meta.get("model")
        return model if isinstance(model, str) else None


def is_carried_copy(entry: Entry, previous: Entry | None) -> bool:
    """True when ``entry`` is ``previous`` served again by a refresh, not a new live recording."""
    # A live recording gets a fresh ``recorded_at``; a carried copy keeps the old one verbatim.
    return previous is not None and previous.recorded_at == entry.recorded_at and previous.body == entry.body


def _body_field(body: bytes) -> dict[str, Any]:
    try:
        return {"string": body.decode("utf-8")}
    except UnicodeDecodeError:
        return {"string": body}


def _json_safe(value: Any) -> Any:
    # Digests and journal lines are JSON; YAML keeps binary bodies as !!binary bytes.
    if isinstance(value, bytes):
        return {"__bytes_b64__": base64.b64encode(value).decode("ascii")}
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def from_json_safe(value: Any) -> Any:
    """Undo the bytes tagging used in journal lines."""
    if isinstance(value, dict):
        if set(value) == {"__bytes_b64__"}:
            return base64.b64decode(value["__bytes_b64__"])
        return {k: from_json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_json_safe(v) for v in value]
    return value


def _bytes_tag(value: Any) -> dict[str, str]:
    # json's ``default`` hook: what ``_json_safe`` makes of bytes, without copying the whole tree.
    if isinstance(value, bytes):
        return {"__bytes_b64__": base64.b64encode(value).decode("ascii")}
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def interaction_digest(interaction: dict[str, Any]) -> str:
    """sha256 over the canonical serialisation of an interaction, digest field excluded."""
    meta = {k: v for k, v in interaction["oracleproto"].items() if k != "digest"}
    return sha256_hex(_canonical({**interaction, "oracleproto": meta}))


def to_interaction(entry: Entry) -> dict[str, Any]:
    """The vcrpy interaction (with the ``oracleproto`` block and digest) for an entry."""
    interaction = _undigested_interaction(entry)
    interaction["oracleproto"]["digest"] = interaction_digest(interaction)
    return interaction


def stored_interaction(entry: Entry) -> dict[str, Any]:
    """:func:`to_interaction`, reusing the digest verified on load while the entry is unchanged."""
    # Same reliance as ``to_json_line``: a store clears ``digest`` on every ``put``.
    if entry.digest is None:
        return to_interaction(entry)
    interaction = _undigested_interaction(entry)
    interaction["oracleproto"]["digest"] = entry.digest
    return interaction


def _undigested_interaction(entry: Entry) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "attempts": entry.attempts,
        "channel": entry.channel,
        "context": entry.context,
        "exception": entry.exception,
        "generation": entry.generation,
        "key": entry.key,
        "latency_ms": entry.latency_ms,
        "occurrence": entry.occurrence,
        "recorded_at": entry.recorded_at,
        "request": entry.request_meta,
        "requests": entry.requests,
    }
    interaction: dict[str, Any] = {
        "oracleproto": meta,
        "request": {
            "body": entry.request_body,
            "headers": entry.request_headers,
            "method": entry.method,
            "uri": entry.uri,
        },
        "response": {
            "body": _body_field(entry.body),
            "headers": entry.response_headers,
            "status": {"code": entry.status, "message": entry.reason},
        },
    }
    return interaction


def entry_digest(entry: Entry) -> str:
    """The content digest of an entry (the one verified on load, when the entry is unchanged)."""
    if entry.digest is not None:
        return entry.digest
    return str(to_interaction(entry)["oracleproto"]["digest"])


#: (path in the interaction, accepted types, what to call them). A digest proves integrity, not
#: authorship: a crafted entry can carry a matching digest, so the types are checked before use.
_FIELD_TYPES: tuple[tuple[tuple[str, ...], tuple[type, ...], str], ...] = (
    (("oracleproto", "key"), (str,), "a string"),
    (("oracleproto", "request"), (dict,), "a mapping"),
    (("oracleproto", "context"), (dict, type(None)), "a mapping or null"),
    (("oracleproto", "occurrence"), (int, type(None)), "an integer or null"),
    (("oracleproto", "exception"), (dict, type(None)), "a mapping or null"),
    (("oracleproto", "latency_ms"), (int,), "an integer"),
    (("oracleproto", "recorded_at"), (str,), "a string"),
    (("oracleproto", "attempts"), (list,), "a list"),
    (("oracleproto", "requests"), (int,), "an integer"),
    (("oracleproto", "generation"), (int,), "an integer"),
    (("request", "body"), (str,), "a string"),
    (("request", "method"), (str,), "a string"),
    (("request", "uri"), (str,), "a string"),
    (("request", "headers"), (dict,), "a mapping"),
    (("response", "headers"), (dict,), "a mapping"),
    (("response", "status"), (dict,), "a mapping"),
    (("response", "status", "code"), (int,), "an integer"),
    (("response", "status", "message"), (str,), "a string"),
    (("response", "body", "string"), (str, bytes), "a string or bytes"),
)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_types(interaction: dict[str, Any], where: str, key: str) -> None:
    for path, types, what in _FIELD_TYPES:
        value: Any = interaction
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        if not isinstance(value, types) or (int in types and isinstance(value, bool)):  # bool is an int
            raise CassetteIntegrityError(
                f"{where}: entry {key}: {'.'.join(path)} must be {what}, got {type(value).__name__}; "
                "the entry was crafted or damaged — restore the file or re-record the entry"
            )
    context = interaction["oracleproto"]["context"]
    if context is not None and not (
        isinstance(context.get("model"), str)
        and isinstance(context.get("question_id"), str)
        and all(_is_int(context.get(k)) for k in ("sample", "step"))
    ):
        raise CassetteIntegrityError(
            f"{where}: entry {key}: oracleproto.context must have model and question_id (strings), "
            "sample and step (integers)"
        )
    for side in ("request", "response"):
        for name, values in interaction[side]["headers"].items():
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise CassetteIntegrityError(
                    f"{where}: entry {key}: {side}.headers[{name!r}] must be a list of strings"
                )


def from_interaction(interaction: Any, where: str) -> Entry:
    """Parse and verify one stored interaction; ``where`` names file and position for errors."""
    try:
        meta = interaction["oracleproto"]
        request = interaction["request"]
        response = interaction["response"]
        body = response["body"]["string"]
        stored = meta["digest"]
        channel = meta["channel"]
        key = meta["key"]
    except (KeyError, TypeError) as exc:
        raise CassetteIntegrityError(
            f"{where}: malformed entry (missing {exc}); restore the file from version control "
            "or re-record it with --record"
        ) from exc
    actual = interaction_digest(interaction)
    if actual != stored:
        raise CassetteIntegrityError(
            f"{where}: entry {key} does not match its digest (stored {stored}, computed {actual}); "
            "the entry was edited or corrupted — restore the file or re-record the entry"
        )
    if channel not in CHANNELS:
        raise CassetteIntegrityError(f"{where}: entry {key} has unknown channel {channel!r}")
    _check_types(interaction, where, key)
    return Entry(
        key=key,
        channel=channel,
        request_meta=meta["request"],
        request_body=request["body"],
        context=meta["context"],
        occurrence=meta["occurrence"],
        method=request["method"],
        uri=request["uri"],
        request_headers=request["headers"],
        status=response["status"]["code"],
        reason=response["status"]["message"],
        response_headers=response["headers"],
        body=body.encode("utf-8") if isinstance(body, str) else bytes(body),
        exception=meta["exception"],
        latency_ms=meta["latency_ms"],
        recorded_at=meta["recorded_at"],
        attempts=meta["attempts"],
        requests=meta["requests"],
        generation=meta["generation"],
        digest=actual,
    )


def to_json_line(entry: Entry) -> str:
    """One journal line (JSON, bytes tagged) for an entry."""
    # The digest verified on load is reused (``entry_digest``; a stale one would fail the check
    # every reader of the line makes).
    return digest_and_line(entry)[1]


def digest_and_line(entry: Entry) -> tuple[str, str]:
    """(the entry's digest, its journal line), the two large bodies JSON-encoded once for both.

    The texts are those of ``interaction_digest`` and of ``json.dumps(interaction, sort_keys=True,
    separators=(",", ":"), ensure_ascii=False)`` with bytes tagged: the digest's text is the line's
    without the ``digest`` field, so everything after the ``oracleproto`` block is shared, and the
    two bodies (nearly all of an entry's bytes) sort first in their mappings.
    """
    interaction = _undigested_interaction(entry)
    meta = interaction["oracleproto"]
    tail = "".join(_tail_parts(interaction))
    # Hashed in two parts: the ~50 KB tail is not copied into one more string first.
    meta["digest"] = digest = _digest(entry, meta, lambda: (tail.encode("utf-8"),))
    return digest, '{"oracleproto":' + _canonical(meta) + tail


def digest_and_record(entry: Entry) -> tuple[str, bytes]:
    """:func:`digest_and_line` with the line as the journal writes it: UTF-8, newline-terminated.

    Each part is encoded once and serves both the hash and the record (a 50 KB entry is copied
    twice, not five times as through the line's text).
    """
    interaction = _undigested_interaction(entry)
    meta = interaction["oracleproto"]
    tail = [part.encode("utf-8") for part in _tail_parts(interaction)]
    meta["digest"] = digest = _digest(entry, meta, lambda: tail)
    return digest, b"".join((('{"oracleproto":' + _canonical(meta)).encode("utf-8"), *tail, b"\n"))


def _digest(entry: Entry, meta: dict[str, Any], tail: Callable[[], Iterable[bytes]]) -> str:
    """The entry's digest: the one it carries, else sha256 of its canonical text without ``digest``
    (``meta`` is its ``oracleproto`` block, ``tail`` the encoded text after it, made only if needed)."""
    if entry.digest is not None:
        return entry.digest
    hashed = hashlib.sha256(('{"oracleproto":' + _canonical(meta)).encode("utf-8"))
    for part in tail():
        hashed.update(part)
    return hashed.hexdigest()


def _tail_parts(interaction: dict[str, Any]) -> list[str]:
    """The canonical text after the ``oracleproto`` block (its request and response), in parts."""
    return [
        ',"request":',
        *_with_first("body", interaction["request"]),
        ',"response":',
        *_with_first("body", interaction["response"]),
        "}",
    ]


def _canonical(value: Any) -> str:
    return canonical_json(value, _bytes_tag)


def _with_first(first: str, mapping: dict[str, Any]) -> tuple[str, ...]:
    """``_canonical(mapping)`` in parts: when ``first`` is its smallest key, its value encoded apart."""
    rest = {k: v for k, v in mapping.items() if k != first}
    if first not in mapping or not rest or min(rest) <= first:
        return (_canonical(mapping),)
    value = mapping[first]
    if type(value) is dict and list(value) == ["string"]:  # a response body
        return ('{"' + first + '":{"string":', _value_text(value["string"]), "}," + _canonical(rest)[1:])
    return ('{"' + first + '":', _value_text(value), "," + _canonical(rest)[1:])


def _value_text(value: Any) -> str:
    if type(value) is str:
        if len(value) < LONG_STRING and value.isascii() and "\x7f" not in value:
            # With only ASCII below U+007F, ensure_ascii=True writes the same text as ensure_ascii=False
            # (they differ only on DEL and non-ASCII), a little faster; ``str.isascii`` is O(1).
            return str(encode_basestring_ascii(value))
        return json_string(value)  # a long ASCII body: a few replaces (see ``json_string``)
    return _canonical(value)
