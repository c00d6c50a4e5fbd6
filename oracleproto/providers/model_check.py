"""Before the first paid call: does each endpoint serve the configured models? (issue 28 §2)

A wrong slug used to surface as a 404 on every sample — an "outage" (exit 4) after the circuit
breaker, or a "finished" run full of errors. ``run --record`` (and ``sim run``) now ask each
endpoint for its model list (``GET {base}/models``, OpenAI's shape, which OpenRouter, vLLM, Ollama
and most gateways serve) and refuse a slug the list does not hold, before anything is written;
``plan --check-models`` shows the same check on demand (``plan`` stays offline by default).

The check never fails a run for what it cannot know: an endpoint without a model list (404, 405,
501), a refused key (401/403: the first call will say so properly), a network failure, or an
answer that is not a complete list leave the slugs unchecked, with a note. The listing is read
through ``transport.live_body`` (bounded body and deadline) and is not recorded: it is not a call
of the run.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from oracleproto.errors import ConfigError
from oracleproto.primitives.redact import redact_url
from oracleproto.providers.endpoint import endpoint_url, message_secrets
from oracleproto.providers.llm import scrub_secret
from oracleproto.settings.model import Settings
from oracleproto.transport.live_body import read_live_async
from oracleproto.transport.tls import live_async_transport

#: Statuses that mean "this endpoint offers no model list": nothing to check against.
NO_LISTING = frozenset({404, 405, 501})
#: Longest wait for a listing (or the channel's timeout if shorter): a start-up check, not a call.
CHECK_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Endpoint:
    """One OpenAI-compatible endpoint and the (slug, setting) pairs configured for it."""

    base_url: str
    key: str | None
    models: tuple[tuple[str, str], ...]
    timeout_s: float


@dataclass(frozen=True)
class EndpointCheck:
    """What one endpoint's listing said: the slugs it lacks, or why nothing could be checked."""

    endpoint: Endpoint
    #: The ids the endpoint lists; None when it could not be checked.
    listed: frozenset[str] | None
    #: Why the slugs are unchecked (empty when checked).
    unchecked: str = ""
    missing: tuple[tuple[str, str], ...] = ()

    @property
    def shown_url(self) -> str:
        """``GET`` URL of the listing, credentials redacted."""
        return redact_url(endpoint_url(self.endpoint.base_url, "models"))


@dataclass(frozen=True)
class ModelCheck:
    """The check of every endpoint a run would call."""

    endpoints: tuple[EndpointCheck, ...] = field(default_factory=tuple)

    @property
    def missing(self) -> list[tuple[EndpointCheck, str, str]]:
        """(endpoint, slug, setting) of every slug an endpoint's list lacks."""
        return [(e, slug, setting) for e in self.endpoints for slug, setting in e.missing]

    def notes(self) -> list[str]:
        """One line per endpoint whose slugs could not be checked."""
        return [
            f"note: model slugs not checked at {e.shown_url} ({e.unchecked}); the first call will tell"
            for e in self.endpoints
            if e.listed is None
        ]

    def lines(self) -> list[str]:
        """Every configured slug: listed, NOT LISTED (with close names), or not checked."""
        out: list[str] = []
        for e in self.endpoints:
            lacking = dict(e.missing)
            for slug, setting in e.endpoint.models:
                if e.listed is None:
                    state = f"not checked ({e.unchecked})"
                elif slug in lacking:
                    state = "NOT LISTED" + _close(slug, e.listed)
                else:
                    state = "listed"
                out.append(f"  {setting} {slug}: {state} at {e.shown_url}")
        return out

    def error(self) -> ConfigError | None:
        """A configuration error naming every slug no list holds (None when all are listed or unchecked)."""
        problems = [
            f"{setting}: {slug!r} is not among the {len(e.listed or ())} models {e.shown_url} lists"
            + _close(slug, e.listed or frozenset())
            for e, slug, setting in self.missing
        ]
        if not problems:
            return None
        return ConfigError(
            "model slugs the provider does not serve:\n  "
            + "\n  ".join(problems)
            + "\ncorrect the slug(s) (`oracleproto plan --check-models` shows the check); "
            "nothing was called or written"
        )


def _close(slug: str, ids: Iterable[str]) -> str:
    near = difflib.get_close_matches(slug, sorted(ids), n=3, cutoff=0.6)
    return f" (did you mean {', '.join(repr(n) for n in near)}?)" if near else ""


def endpoints_of(settings: Settings) -> list[Endpoint]:
    """The endpoints a live run calls for models: the main LLM's, and the detector's when it is on."""
    llm = settings.llm
    key = llm.api_key.get_secret_value() if llm.api_key is not None else None
    found: dict[tuple[str, str | None], list[tuple[str, str]]] = {}
    timeouts: dict[tuple[str, str | None], float] = {}
    if llm.base_url and llm.models:
        slot = (llm.base_url, key)
        found[slot] = [(m, "MODELS") for m in dict.fromkeys(llm.models)]
        timeouts[slot] = llm.timeout_s
    det = settings.detector
    if det.enabled and det.model:
        base = det.base_url or llm.base_url
        secret = det.api_key if det.api_key is not None else llm.api_key
        slot = (base or "", secret.get_secret_value() if secret is not None else None)
        if base:
            found.setdefault(slot, []).append((det.model, "LEAK_DETECTOR_MODEL"))
            timeouts[slot] = min(timeouts.get(slot, det.timeout_s), det.timeout_s)
    return [
        Endpoint(base, k, tuple(dict.fromkeys(models)), timeouts[(base, k)])
        for (base, k), models in found.items()
    ]


def listed_ids(payload: Any) -> frozenset[str] | None:
    """The model ids of an OpenAI-style list (``{"data": [{"id": …}]}``); None when it is not a
    complete one (another shape, empty, or a page of a longer list)."""
    if not isinstance(payload, Mapping) or payload.get("has_more") is True:
        return None
    data = payload.get("data")
    if not isinstance(data, list):
        return None
    ids = frozenset(
        item["id"] for item in data if isinstance(item, Mapping) and isinstance(item.get("id"), str)
    )
    return ids or None


def is_listed(slug: str, ids: frozenset[str]) -> bool:
    """True when ``slug`` is listed, or is a listed slug with an OpenRouter variant (``…:free``)."""
    return slug in ids or (":" in slug and slug.rsplit(":", 1)[0] in ids)


async def check_endpoint(endpoint: Endpoint, transport: httpx.AsyncBaseTransport) -> EndpointCheck:
    """``GET {base}/models`` at one endpoint, read as :class:`EndpointCheck`."""
    url = endpoint_url(endpoint.base_url, "models")
    headers = {"Accept": "application/json"}
    if endpoint.key:
        headers["Authorization"] = f"Bearer {endpoint.key}"
    timeout = httpx.Timeout(min(CHECK_TIMEOUT_S, endpoint.timeout_s))
    secrets = message_secrets(endpoint.base_url, endpoint.key)

    def unchecked(why: str) -> EndpointCheck:
        return EndpointCheck(endpoint, None, scrub_secret(why, None, secrets))

    try:
        request = httpx.Request("GET", url, headers=headers, extensions={"timeout": timeout.as_dict()})
        response, body = await read_live_async(transport, request)
    except (httpx.HTTPError, httpx.InvalidURL) as exc:  # network, timeout, a refused reply, a bad URL
        return unchecked(f"{type(exc).__name__}: {exc}")
    if response.status_code in NO_LISTING:
        return unchecked(f"HTTP {response.status_code}: the endpoint offers no model list")
    if response.status_code != 200:
        return unchecked(f"HTTP {response.status_code}")
    try:
        ids = listed_ids(json.loads(body))
    except (ValueError, RecursionError):
        ids = None
    if ids is None:
        return unchecked("HTTP 200 but not a complete OpenAI-style model list")
    missing = tuple((slug, setting) for slug, setting in endpoint.models if not is_listed(slug, ids))
    return EndpointCheck(endpoint, ids, missing=missing)


async def check_models(settings: Settings, transport: httpx.AsyncBaseTransport | None = None) -> ModelCheck:
    """Check every endpoint a live run of ``settings`` calls (``transport``: tests; else the network)."""
    endpoints = endpoints_of(settings)
    if not endpoints:
        return ModelCheck()
    owned = transport is None
    inner = transport if transport is not None else live_async_transport()
    try:
        return ModelCheck(tuple([await check_endpoint(e, inner) for e in endpoints]))
    finally:
        if owned:
            await inner.aclose()
