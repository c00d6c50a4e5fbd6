"""The simulator: chat and search services behind one loopback server with path routing.

Each request goes through the same pipeline: route → parse → auth (401 for revoked or
missing keys) → fault decision (latency, 5xx, 429 + Retry-After, timeout) → the service.
Randomness keys: a request that carries ``seed`` is keyed by (server seed, content, seed);
otherwise by (server seed, content, occurrence), where occurrence counts earlier
*successful* answers to identical bytes — identical concurrent requests are therefore
assigned in arrival order.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from oracleproto.conformance.capture import CaptureWriter
from oracleproto.primitives.hashing import redact_secret, sha256_hex
from oracleproto.sim import chat_api, models_api, openai_wire, rng, search_api
from oracleproto.sim.capture import capture_observer
from oracleproto.sim.faults import (
    Fault,
    FaultConfig,
    FaultDecision,
    FaultInjector,
    odd_delivery,
    odd_usage,
)
from oracleproto.sim.hostile import HostileText
from oracleproto.sim.loopback import LoopbackRequest, LoopbackResponse, LoopbackServer
from oracleproto.sim.personas import DETECTOR_SLUG

_JSON = "application/json"
_CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
_SEARCH_PATHS = ("/search",)


@dataclass(frozen=True)
class SimConfig:
    """Seed and per-service fault knobs of one simulator."""

    seed: int = 0
    """Mixed into every draw; two simulators with the same seed answer identically."""
    chat: FaultConfig = field(default_factory=FaultConfig)
    """Faults of ``/v1/chat/completions`` (main LLM and detector)."""
    search: FaultConfig = field(default_factory=FaultConfig)
    """Faults of ``/search``."""
    honour_end_date: bool = True
    """``False`` makes ``/search`` ignore ``end_date`` (a search engine without a time mask)."""
    revisions: dict[str, int] = field(default_factory=dict)
    """Model slug → revision: a non-zero revision stands for new weights behind the same slug.
    It is mixed into that model's randomness key and ``system_fingerprint``, so its answers
    drift while every other model answers exactly as before (refresh-audit tests, demo)."""
    list_models: bool = True
    """``False``: no ``GET /v1/models`` (404, as on endpoints that offer no model list)."""
    replicas: bool = False
    """List the personas' replicas (``sim/careful-r2`` …) in ``GET /v1/models`` too (30-model panels).
    They are answered either way; only the list changes, so a 7-model list stays as it was."""
    hostile: HostileText | None = None
    """Write hostile text (NUL, lone surrogates, line separators, bidi controls, invalid UTF-8…)
    into every successful answer (``sim/hostile.py``; the untrusted-text tests)."""


def _json_response(status: int, payload: Any, headers: dict[str, str] | None = None) -> LoopbackResponse:
    return LoopbackResponse(
        status=status,
        body=json.dumps(payload).encode("utf-8"),
        headers={"Content-Type": _JSON, **(headers or {})},
    )


def _bearer(headers: dict[str, str]) -> str | None:
    auth = headers.get("authorization", "")
    return auth[7:].strip() or None if auth.lower().startswith("bearer ") else None


def _presented_credential(request: LoopbackRequest) -> str | None:
    """What the caller authenticated with: the ``Authorization`` credential or a body ``api_key``."""
    credential = request.headers.get("authorization", "").partition(" ")[2].strip()
    if credential:
        return credential
    try:
        body = json.loads(request.body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    key = body.get("api_key") if isinstance(body, dict) else None
    return key if isinstance(key, str) and key else None


def _echoed(request: LoopbackRequest, response: LoopbackResponse, echo: bool) -> LoopbackResponse:
    """``response`` with the caller's credential echoed in headers and JSON body (``echo_key``)."""
    credential = _presented_credential(request) if echo else None
    if credential is None or response.drop_connection:
        return response
    response.headers = {
        **response.headers,
        "X-Echo-Key": credential,
        "X-Echo-Key-Prefix": credential[:24],
    }
    try:
        payload = json.loads(response.body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return response
    if isinstance(payload, dict):
        payload["echo"] = {
            "key_prefix": credential[:24],
            "key_middle": credential[4:-4],
            "key_suffix": credential[-16:],
        }
        response.body = json.dumps(payload).encode("utf-8")
    return response


class SimHandler:
    """The request handler behind the loopback server (usable without sockets in tests)."""

    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self._faults = {
            "chat": FaultInjector(config.chat, config.seed, "chat"),
            "search": FaultInjector(config.search, config.seed, "search"),
        }
        self._occurrences = rng.Counter()
        self._served = rng.Counter()
        self._arrivals = rng.Counter()
        #: Successful answers per service, against ``FaultConfig.quota_after``.
        self._answered: dict[str, int] = {"chat": 0, "search": 0}
        self._credit_lock = threading.Lock()

    def served(self) -> dict[str, int]:
        """Requests answered so far per service (``chat``, ``detector``, ``search``), faults included."""
        return self._served.snapshot()

    def __call__(self, request: LoopbackRequest) -> LoopbackResponse:
        """Route one request."""
        path = request.path.split("?", 1)[0].rstrip("/")
        if request.method == "POST" and path in _CHAT_PATHS:
            return _echoed(request, self._chat(request), self.config.chat.echo_key)
        if request.method == "POST" and path in _SEARCH_PATHS:
            return _echoed(request, self._search(request), self.config.search.echo_key)
        if request.method == "GET" and (listed := self._models(request, path)) is not None:
            return listed
        return LoopbackResponse(
            status=404,
            body=openai_wire.error_body(
                f"Unknown request URL: {request.method} {path}.", "invalid_request_error", None
            ),
        )

    def _models(self, request: LoopbackRequest, path: str) -> LoopbackResponse | None:
        """``GET /v1/models[/{id}]`` (keyed like chat: 401 without a bearer key); None for other paths."""
        listed = (
            models_api.models_response(path, replicas=self.config.replicas)
            if self.config.list_models
            else None
        )
        if listed is not None and _bearer(request.headers) is None:
            return LoopbackResponse(status=401, body=openai_wire.missing_key_body())
        return listed

    def _key(self, service: str, body: dict[str, Any], content_hash: str) -> str:
        revision = self.config.revisions.get(str(body.get("model")), 0) if service == "chat" else 0
        if revision:
            content_hash = rng.digest(content_hash, "revision", revision).hex()
        if service == "chat" and "seed" in body:
            return rng.digest(self.config.seed, service, content_hash, "seed", body["seed"]).hex()
        occurrence = self._occurrences.next(f"{service}:{content_hash}")
        return rng.digest(self.config.seed, service, content_hash, occurrence).hex()

    def _revoked(self, service: str, key: str) -> bool:
        """True when ``key`` is revoked for this request (from the start, or after N requests)."""
        # Read from ``self.config`` (not the injector's copy): tests revoke a key mid-run by
        # swapping the handler's config.
        cfg: FaultConfig = self.config.chat if service == "chat" else self.config.search
        arrival = self._arrivals.next(service)
        return key in cfg.revoked_keys and arrival >= cfg.revoked_after

    def _fault_response(self, decision: FaultDecision, service: str, model: str) -> LoopbackResponse | None:
        cfg = self._faults[service].config
        if decision.fault is Fault.TIMEOUT:
            return LoopbackResponse(drop_connection=True, delay_s=decision.delay_s)
        if decision.fault is Fault.RESET:
            return LoopbackResponse(drop_connection=True, reset=True, delay_s=decision.delay_s)
        if decision.fault in (Fault.RESET_MID_BODY, Fault.TRUNCATED, Fault.MALFORMED):
            return _broken_body(decision, service, model)
        if decision.fault is Fault.RATE_LIMIT:
            wait = cfg.retry_after_s if decision.retry_after_s is None else decision.retry_after_s
            body = (
                openai_wire.rate_limit_body(model, wait)
                if service == "chat"
                else search_api.detail_body("Rate limit exceeded. Please slow down your requests.")
            )
            headers = {"Content-Type": _JSON}
            if wait is not None:
                headers["Retry-After"] = str(wait)
            return LoopbackResponse(status=429, body=body, headers=headers, delay_s=decision.delay_s)
        if decision.fault is Fault.SERVER_5XX:
            body = (
                openai_wire.server_error_body()
                if service == "chat"
                else search_api.detail_body("Internal server error. Please try again later.")
            )
            return LoopbackResponse(status=decision.status, body=body, delay_s=decision.delay_s)
        return None

    def _spend_credit(self, service: str) -> bool:
        """Take one answer's credit; False once ``quota_after`` answers were given."""
        limit = self._faults[service].config.quota_after
        with self._credit_lock:
            if limit is not None and self._answered[service] >= limit:
                return False
            self._answered[service] += 1
            return True

    def _quota_response(self, service: str) -> LoopbackResponse:
        status = self._faults[service].config.quota_status
        if service == "search":
            message = (
                "This request exceeds the pay-as-you-go limit set for this key."
                if status == 433
                else "This request exceeds the usage limit of your plan."
            )
            return LoopbackResponse(status=status or 432, body=search_api.detail_body(message))
        if status == 402:
            return _json_response(402, json.loads(openai_wire.payment_required_body()))
        return LoopbackResponse(
            status=status or 429,
            body=openai_wire.insufficient_quota_body(),
            headers={"Content-Type": _JSON},
        )

    def _chat(self, request: LoopbackRequest) -> LoopbackResponse:
        key = _bearer(request.headers)
        if key is None:
            return LoopbackResponse(status=401, body=openai_wire.missing_key_body())
        if self._revoked("chat", key):
            shown = key[:24] + "****" if self.config.chat.echo_key else redact_secret(key)
            return LoopbackResponse(status=401, body=openai_wire.invalid_key_body(shown))
        try:
            body = json.loads(request.body)
            chat_api.validate(body)
        except json.JSONDecodeError:
            return LoopbackResponse(
                status=400, body=openai_wire.bad_request_body("The request body is not valid JSON.")
            )
        except chat_api.ChatRequestError as exc:
            return LoopbackResponse(status=exc.status, body=exc.body)
        content_hash = sha256_hex(request.body)
        self._served.next("detector" if body.get("model") == DETECTOR_SLUG else "chat")
        decision = self._faults["chat"].decide(content_hash)
        faulted = self._fault_response(decision, "chat", str(body["model"]))
        if faulted is not None:
            return faulted
        if not self._spend_credit("chat"):
            return self._quota_response("chat")
        try:
            payload = chat_api.completion(
                self.config.seed,
                body,
                self._key("chat", body, content_hash),
                revision=self.config.revisions.get(str(body["model"]), 0),
            )
        except chat_api.ChatRequestError as exc:
            return LoopbackResponse(status=exc.status, body=exc.body, delay_s=decision.delay_s)
        payload = odd_usage(self.config.chat, payload)
        response = _json_response(200, payload, {"x-request-id": "req_" + content_hash[:32]})
        if self.config.hostile is not None:
            response.body = self.config.hostile.chat(request.body, payload)
        response.delay_s = decision.delay_s
        return odd_delivery(self.config.chat, response)

    def _search(self, request: LoopbackRequest) -> LoopbackResponse:
        try:
            body = json.loads(request.body)
        except json.JSONDecodeError:
            return LoopbackResponse(
                status=400, body=search_api.detail_body("Request body is not valid JSON.")
            )
        if not isinstance(body, dict):
            return LoopbackResponse(
                status=400, body=search_api.detail_body("Request body must be a JSON object.")
            )
        key = search_api.api_key(request.headers, body)
        if key is None or self._revoked("search", key):
            return LoopbackResponse(status=401, body=search_api.detail_body(search_api.UNAUTHORIZED))
        # The key never enters the content hash: rotating keys must not change the answer.
        content = {k: v for k, v in body.items() if k != "api_key"}
        content_hash = sha256_hex(json.dumps(content, sort_keys=True))
        self._served.next("search")
        decision = self._faults["search"].decide(content_hash)
        faulted = self._fault_response(decision, "search", "")
        if faulted is not None:
            return faulted
        if not self._spend_credit("search"):
            return self._quota_response("search")
        try:
            payload = search_api.search_body(
                self.config.seed,
                body,
                self._key("search", body, content_hash),
                honour_end_date=self.config.honour_end_date,
            )
        except search_api.SearchRequestError as exc:
            return LoopbackResponse(
                status=400, body=search_api.detail_body(str(exc)), delay_s=decision.delay_s
            )
        response = _json_response(200, payload)
        if self.config.hostile is not None:
            response.body = self.config.hostile.search(request.body, payload)
        response.delay_s = decision.delay_s
        return odd_delivery(self.config.search, response)


def _broken_body(decision: FaultDecision, service: str, model: str) -> LoopbackResponse:
    """A 200 whose body breaks: cut by a TCP RST, cut short by a clean close, or not JSON.

    The body is a fixed placeholder of the service's success shape, so a broken answer never
    consumes one of the simulator's draws (the retry gets the answer the request would have had).
    """
    if service == "chat":
        payload: dict[str, Any] = {
            "id": "chatcmpl-broken",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "The evidence points one way. " * 8},
                    "finish_reason": "stop",
                }
            ],
        }
    else:
        payload = {
            "query": "",
            "results": [{"title": "Broken", "url": "https://example.invalid/", "content": "x" * 200}],
        }
    body = json.dumps(payload).encode("utf-8")
    half = len(body) // 2
    if decision.fault is Fault.MALFORMED:
        # A complete HTTP message whose JSON stops halfway (a proxy that cut and re-framed it).
        return LoopbackResponse(status=200, body=body[:half], delay_s=decision.delay_s)
    return LoopbackResponse(
        status=200,
        body=body,
        delay_s=decision.delay_s,
        body_sent=half,
        reset=decision.fault is Fault.RESET_MID_BODY,
    )


class Simulator:
    """Chat + search simulator on 127.0.0.1; a context manager exposing the base URLs.

    ``capture``: write every exchange to this writer in the conformance capture format.
    """

    def __init__(
        self, config: SimConfig | None = None, port: int = 0, capture: CaptureWriter | None = None
    ) -> None:
        self.config = config or SimConfig()
        self.handler = SimHandler(self.config)
        observer = capture_observer(capture) if capture is not None else None
        self._server = LoopbackServer(self.handler, port, observer)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (the server root)."""
        return self._server.base_url

    @property
    def llm_base_url(self) -> str:
        """The OpenAI-style base URL (``…/v1``) for ``LLM_BASE_URL``."""
        return f"{self.base_url}/v1"

    @property
    def search_base_url(self) -> str:
        """The Tavily-style base URL for ``TAVILY_BASE_URL``."""
        return self.base_url

    def env_lines(self) -> list[str]:
        """Environment lines pointing the harness at this simulator."""
        return [f"LLM_BASE_URL={self.llm_base_url}", f"TAVILY_BASE_URL={self.search_base_url}"]

    def start(self) -> Simulator:
        """Start serving in a background thread; returns self."""
        self._server.start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        self._server.stop()

    def __enter__(self) -> Simulator:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
