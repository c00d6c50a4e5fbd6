"""Cache keys: a versioned sha256 over canonical JSON of a whitelisted request projection.

The projection is pure data (no I/O) so it can be stored next to every entry and compared
on every hit. Headers never enter it: SDKs send per-attempt headers (retry counters,
idempotency keys, timeouts) and the credentials live there.
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_args
from urllib.parse import parse_qsl, urlsplit

from oracleproto.context import CallContext
from oracleproto.errors import ConfigError, SampleContextError
from oracleproto.primitives.hashing import canonical_json, sha256_hex
from oracleproto.primitives.redact import is_credential_param

#: Bump when the projection or the key material changes; old cassettes then miss loudly.
KEY_SCHEMA_VERSION = 1

Channel = Literal["llm", "search", "detector"]
CHANNELS: tuple[Channel, ...] = get_args(Channel)

#: Whether identical search and detector requests share one entry (and, recording, one live call).
#: ``identical_search_and_detector``: keyed by the request alone, across samples and models (the
#: default, and every recording made before the choice existed). ``none``: a request made inside a
#: sample context is keyed like a main-LLM call — the context plus an occurrence counter — so every
#: call gets its own entry. The names are the harness profile's (``profile.model.RequestSharing``).
RequestSharing = Literal["identical_search_and_detector", "none"]
REQUEST_SHARING: tuple[RequestSharing, ...] = get_args(RequestSharing)
DEFAULT_REQUEST_SHARING: RequestSharing = "identical_search_and_detector"
_SHARED_CHANNELS: dict[str, frozenset[Channel]] = {
    "identical_search_and_detector": frozenset({"search", "detector"}),
    "none": frozenset(),
}


def shared_channels(sharing: str) -> frozenset[Channel]:
    """The channels whose requests are keyed by the request alone under ``sharing``.

    Never ``llm``: a sampled main-LLM call is always keyed by its sample (GUIDE §2.1).
    """
    found = _SHARED_CHANNELS.get(sharing)
    if found is None:
        raise ConfigError(f"unknown request_sharing {sharing!r}; use one of {', '.join(REQUEST_SHARING)}")
    return found


#: Body fields that never change what the service answers: credentials and client-side
#: timeouts. ``stream`` stays in the key because it changes the wire format (SSE vs JSON).
TRANSPORT_ONLY_FIELDS = frozenset({"api_key", "apikey", "api-key", "timeout", "request_timeout"})
#: Hosts that are the same machine; their (random) ports are dropped so cassettes recorded
#: against a loopback simulator replay against another one.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalise_host(url: str) -> str:
    """Lower-cased host, default port dropped, any loopback host:port → ``loopback``."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if host in LOOPBACK_HOSTS:
        return "loopback"
    port = parts.port
    if port is None or port == _DEFAULT_PORTS.get(parts.scheme):
        return host
    return f"{host}:{port}"


def normalise_path(url: str) -> str:
    """Path with repeated slashes collapsed and no trailing slash (``/`` stays ``/``)."""
    path = urlsplit(url).path or "/"
    while "//" in path:
        path = path.replace("//", "/")
    if len(path) > 1:
        path = path.rstrip("/")
    return path


def public_query(url: str) -> list[list[str]]:
    """Query parameters minus credentials (``redact.is_credential_param``), sorted."""
    pairs = parse_qsl(urlsplit(url).query, keep_blank_values=True)
    return sorted([k, v] for k, v in pairs if not is_credential_param(k))


def parse_body(body: bytes) -> tuple[Any, bool]:
    """(parsed JSON, True) for a JSON body, else (text or None, False)."""
    if not body:
        return None, False
    try:
        return json.loads(body), True
    except (UnicodeDecodeError, json.JSONDecodeError):
        try:
            return body.decode("utf-8"), False
        except UnicodeDecodeError:
            return {"sha256": sha256_hex(body)}, False


def _strip_transport_fields(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if k not in TRANSPORT_ONLY_FIELDS}
    return value


def canonical_request(
    channel: Channel, method: str, url: str, body: bytes, parsed_body: tuple[Any, bool] | None = None
) -> dict[str, Any]:
    """The whitelisted projection of a request that the key hashes and the entry stores.

    ``parsed_body``: ``parse_body(body)`` when the caller has it already (it is not changed).
    """
    parsed, is_json = parse_body(body) if parsed_body is None else parsed_body
    parsed = _strip_transport_fields(parsed) if is_json else parsed
    model = parsed.get("model") if isinstance(parsed, dict) else None
    return {
        "v": KEY_SCHEMA_VERSION,
        "channel": channel,
        "method": method.upper(),
        "host": normalise_host(url),
        "path": normalise_path(url),
        "query": public_query(url),
        "model": model if isinstance(model, str) else None,
        "body": parsed,
    }


def context_dict(ctx: CallContext | None) -> dict[str, Any] | None:
    """The sample identity as stored in an entry (None when absent)."""
    if ctx is None:
        return None
    return {"model": ctx.model, "question_id": ctx.question_id, "sample": ctx.sample, "step": ctx.step}


def is_sampled(projection: dict[str, Any]) -> bool:
    """True when the body asks for sampling: temperature > 0, or absent (provider default)."""
    body = projection.get("body")
    if not isinstance(body, dict):
        return True
    temperature = body.get("temperature")
    if temperature is None:
        return True
    return not isinstance(temperature, int | float) or temperature > 0


def check_sample_identity(channel: Channel, projection: dict[str, Any], ctx: CallContext | None) -> None:
    """Refuse a sampled main-LLM request that carries no sample identity."""
    if channel != "llm" or ctx is not None or not is_sampled(projection):
        return
    body = projection.get("body")
    temperature = body.get("temperature") if isinstance(body, dict) else None
    shown = "absent (provider default sampling)" if temperature is None else repr(temperature)
    raise SampleContextError(
        f"llm request to {projection['host']}{projection['path']} (model {projection['model']!r}) "
        f"samples (temperature {shown}) but carries no sample identity: wrap the call in "
        "`with oracleproto.context.call_context(CallContext(model, question_id, sample, step)):` "
        "or send temperature 0; otherwise every sample would share one cache entry"
    )


def key_material(
    projection: dict[str, Any], ctx: dict[str, Any] | None, occurrence: int | None
) -> dict[str, Any]:
    """What the key hashes: the projection plus, when keyed per call, the context and occurrence."""
    return {"context": ctx, "occurrence": occurrence, "request": projection, "v": KEY_SCHEMA_VERSION}


def entry_key(projection: dict[str, Any], ctx: dict[str, Any] | None, occurrence: int | None) -> str:
    """Full sha256 hex key of an entry."""
    return sha256_hex(canonical_json(key_material(projection, ctx, occurrence)))


def projection_json(projection: dict[str, Any]) -> tuple[str, str]:
    """(canonical JSON of the projection, canonical JSON of its body), the body serialised once.

    ``body`` sorts before every other projection field, so the projection's canonical JSON is
    ``{"body":<body JSON>,`` followed by the rest's canonical JSON without its opening brace.
    """
    body_json = canonical_json(projection["body"])
    rest = canonical_json({k: v for k, v in projection.items() if k != "body"})
    return '{"body":' + body_json + "," + rest[1:], body_json


def entry_key_from_json(projection_text: str, ctx: dict[str, Any] | None, occurrence: int | None) -> str:
    """``entry_key`` from the projection's canonical JSON (``projection_json``), without re-serialising it."""
    occurrence_text = "null" if occurrence is None else str(int(occurrence))
    material = (
        '{"context":'
        + ("null" if ctx is None else canonical_json(ctx))
        + ',"occurrence":'
        + occurrence_text
        + ',"request":'
        + projection_text
        + _KEY_TAIL
    )
    return sha256_hex(material)


#: The end of every key's material: the schema version, the last field in sorted order.
_KEY_TAIL = ',"v":' + canonical_json(KEY_SCHEMA_VERSION) + "}"


def request_fingerprint(projection: dict[str, Any]) -> str:
    """Digest of the projection alone (used to count identical calls in a trajectory)."""
    return sha256_hex(canonical_json(projection))


def checked_channel(channel: str) -> Channel:
    """``channel`` as a ``Channel``; a ``ConfigError`` naming the known ones when it is not one."""
    if channel not in CHANNELS:
        raise ConfigError(f"unknown channel {channel!r}; use one of {', '.join(CHANNELS)}")
    return channel
