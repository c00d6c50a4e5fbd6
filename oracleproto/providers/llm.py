"""The main-LLM channel: ``POST {base_url}/chat/completions`` over an injected ``httpx.AsyncClient``.

Retries run inside one ``logical_call()`` block with ``call.attempt`` set before each send, so
the record/replay transport keys the logical call, not the attempt; backoff sleeps go through
the injected clock, so tests and replay never wait (paper Tables 10, 14 and 16).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import httpx

from oracleproto.context import logical_call
from oracleproto.errors import AuthError, CallFailedError, ConfigError, ErrorKind, QuotaError
from oracleproto.primitives.clock import Clock
from oracleproto.primitives.hashing import redact_secret
from oracleproto.primitives.redact import redact_url, scrub_text
from oracleproto.profile.builtin import builtin_profile
from oracleproto.profile.model import HarnessProfile
from oracleproto.providers.backoff import backoff_cursor
from oracleproto.providers.barrier import assert_no_browsing
from oracleproto.providers.billing import BilledCallFailedError
from oracleproto.providers.chat_parse import (
    ErrorInBodyError,
    MalformedBodyError,
    body_usage,
    parse_chat_completion,
)
from oracleproto.providers.classify import (
    classify_error,
    classify_status,
    is_model_not_found,
    is_model_not_found_object,
    provider_message,
)
from oracleproto.providers.endpoint import endpoint_url, message_secrets
from oracleproto.providers.llm_body import build_chat_body, derive_seed, is_reasoning_slug
from oracleproto.providers.model_not_found import ModelNotFoundError, model_not_found
from oracleproto.providers.monitor import CallFailure, CallMonitor, NullMonitor, check_wait
from oracleproto.providers.timing import backoff_delay, call_timing, rate_limit_wait
from oracleproto.providers.types import ChatResponse, Message, ToolSchema
from oracleproto.settings.model import LLMSettings
from oracleproto.transport.extensions import served_from_cassette

# The body rules live in ``llm_body``; their names stay importable from here.
__all__ = [
    "LLM_QUOTA_REMEDY",
    "RETRYABLE",
    "OpenAIChatClient",
    "build_chat_body",
    "derive_seed",
    "is_reasoning_slug",
    "scrub_secret",
]

#: Kinds that are retried; every other kind is terminal at once (auth raises ``AuthError``,
#: quota ``QuotaError``).
RETRYABLE = frozenset({ErrorKind.NETWORK, ErrorKind.RATE_LIMIT, ErrorKind.SERVER_5XX})
#: What to do about exhausted credit on the main-LLM channel.
LLM_QUOTA_REMEDY = (
    "top up the credit (or raise the spending/plan limit) of the account behind LLM_API_KEY, "
    "or use a key of an account that has credit"
)


def scrub_secret(text: str, secret: str | None, others: set[str] | None = None) -> str:
    """``text`` with ``secret`` replaced by its redaction, then URLs, other secrets and fragments removed."""
    hunted = set(others or ())
    if secret:
        text = text.replace(secret, redact_secret(secret))
        hunted.add(secret)
    return scrub_text(text, hunted)


@dataclass(frozen=True)
class _Failed:
    """A failed attempt: its kind, message, breaker signature, whether replayed, and the response."""

    kind: ErrorKind
    detail: str
    signature: str
    replayed: bool
    response: httpx.Response | None
    #: Latency and time of this outcome (recorded under the cache): they stamp a sample ending here.
    latency_ms: int
    received_at: datetime


class OpenAIChatClient:
    """``ChatModel`` over any OpenAI-compatible endpoint, with the paper's retry policy."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        settings: LLMSettings,
        clock: Clock,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        monitor: CallMonitor | None = None,
        profile: HarnessProfile | None = None,
    ) -> None:
        url = base_url if base_url is not None else settings.base_url
        if not url:
            raise ConfigError("LLM_BASE_URL is empty; set the OpenAI-compatible base URL")
        self._client = client
        self._settings = settings
        self._clock = clock
        self._monitor: CallMonitor = monitor if monitor is not None else NullMonitor()
        #: Body key order and serialisation (default: oracleproto's own, as recorded so far).
        self._profile = profile if profile is not None else builtin_profile()
        self._url = endpoint_url(url, "chat/completions")
        # Parsed once, on the first request (where a bad URL has always been reported): httpx
        # would otherwise re-parse the string for every request (~0.1 ms each).
        self._parsed_url: httpx.URL | None = None
        key = api_key
        if key is None and settings.api_key is not None:
            key = settings.api_key.get_secret_value()
        self._key = key or None
        self._headers = {"Content-Type": "application/json"}
        if key:
            self._headers["Authorization"] = f"Bearer {key}"
        self._url_secrets = message_secrets(self._url)

    def _scrub(self, text: str) -> str:
        # Providers echo the offending key (or part of it) in 401 bodies; messages reach the terminal.
        return scrub_secret(text, self._key, self._url_secrets)

    @property
    def url(self) -> str:
        """The ``/chat/completions`` URL requests go to."""
        return self._url

    @property
    def profile(self) -> HarnessProfile:
        """The harness profile this client writes its requests by."""
        return self._profile

    def _request_url(self) -> httpx.URL:
        if self._parsed_url is None:
            self._parsed_url = httpx.URL(self._url)
        return self._parsed_url

    def _delay(self, kind: ErrorKind, index: int, response: httpx.Response | None) -> tuple[float, str]:
        """Seconds to wait before the next attempt, and why."""
        if kind is ErrorKind.RATE_LIMIT:
            retry_after = rate_limit_wait(response, self._clock.now())
            if retry_after is not None:
                return retry_after, "rate_limit, Retry-After"
            return backoff_delay(self._settings.backoff_rate_limit_s, index), "rate_limit backoff"
        if kind is ErrorKind.SERVER_5XX:
            return backoff_delay(self._settings.backoff_server_5xx_s, index), "server_5xx backoff"
        return backoff_delay(self._settings.backoff_network_s, index), f"{kind.value} backoff"

    def _model_not_found(self, model: str, said: str, status: int | None) -> ModelNotFoundError:
        said = self._scrub(said)
        return model_not_found(model, channel="llm", url=self._url, said=said, status_code=status)

    async def _send(self, model: str, content: bytes, started: float) -> ChatResponse | _Failed:
        """One attempt: the parsed completion, or what went wrong."""
        try:
            # Bytes, not ``json=``: the profile decides separators and escaping, not httpx.
            response = await self._client.post(
                self._request_url(), content=content, headers=self._headers, timeout=self._settings.timeout_s
            )
        except (httpx.TransportError, TimeoutError) as exc:
            latency, received = call_timing(self._clock, started, exc=exc)
            return _Failed(
                classify_error(exc),
                f"{type(exc).__name__}: {exc}",
                type(exc).__name__,
                served_from_cassette(exc=exc),
                None,
                latency,
                received,
            )
        replayed = served_from_cassette(response)
        latency, received = call_timing(self._clock, started, response=response)
        if response.status_code != 200:
            if not replayed and is_model_not_found(response.status_code, response.content):
                # Live only: a replayed one keeps the outcome it was recorded with (``unknown``).
                raise self._model_not_found(model, provider_message(response.content), response.status_code)
            kind = classify_status(response.status_code, response.content)
            detail = f"HTTP {response.status_code}: {response.text[:300]}"
            return _Failed(
                kind, detail, f"HTTP {response.status_code}", replayed, response, latency, received
            )
        try:
            chat = parse_chat_completion(response.content, latency_ms=latency, received_at=received)
        except ErrorInBodyError as exc:
            if not replayed and is_model_not_found_object(exc.error):
                raise self._model_not_found(model, " ".join(exc.detail.split())[:300], None) from None
            detail = f"error object in a 200 body: {exc.detail}"
            signature = f"error object {exc.kind.value}"
            return _Failed(exc.kind, detail, signature, replayed, response, latency, received)
        except MalformedBodyError as exc:
            return _Failed(
                ErrorKind.UNKNOWN, str(exc), "malformed 200 body", replayed, response, latency, received
            )
        if not replayed:
            self._monitor.call_done("llm", None)
        return chat

    async def complete(
        self, model: str, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> ChatResponse:
        """One logical chat completion (retries inside); raises ``CallFailedError``/``RunStoppedError``."""
        body = build_chat_body(self._settings, model, messages, tools, self._profile)
        assert_no_browsing(body)
        content = self._profile.request_json.llm.encode(body)
        started = self._clock.monotonic()
        # Each kind walks its own backoff sequence, continued from the sample's earlier calls (paper
        # App. B.7: reset only across samples); retry_max caps this call's retries across kinds.
        cursor = backoff_cursor()
        with logical_call() as call:
            attempt = 0
            while True:
                call.attempt = attempt
                outcome = await self._send(model, content, started)
                if isinstance(outcome, ChatResponse):
                    return outcome
                kind, response = outcome.kind, outcome.response
                status = response.status_code if response is not None else None
                detail = self._scrub(outcome.detail)
                if kind is ErrorKind.AUTH:
                    raise AuthError(
                        f"{model} at {redact_url(self._url)}: {detail}", status_code=status, channel="llm"
                    )
                if kind is ErrorKind.QUOTA:
                    raise QuotaError(
                        f"{model} at {redact_url(self._url)}: {' '.join(detail.split())}",
                        status_code=status,
                        channel="llm",
                        remedy=LLM_QUOTA_REMEDY,
                    )
                final = kind not in RETRYABLE
                if not final and (outcome.replayed or attempt >= self._settings.retry_max):
                    # A replayed outcome is already final: the recording holds its retries.
                    final = True
                    detail = f"retries exhausted after {attempt + 1} attempts; last {detail}"
                if final:
                    if not outcome.replayed:
                        failure = CallFailure(kind, outcome.signature, self._url, f"{model}: {detail}")
                        self._monitor.call_done("llm", failure)
                    # The failure's recorded time travels with it: it stamps a sample that ends here.
                    # A final reply that reports usage was billed; only its body is recorded, so
                    # only its usage (not that of retried attempts) replays.
                    usage = body_usage(response.content) if response is not None else None
                    if usage is not None:
                        raise BilledCallFailedError(
                            kind,
                            f"{model}: {detail}",
                            usage=usage,
                            status_code=status,
                            latency_ms=outcome.latency_ms,
                            received_at=outcome.received_at,
                        )
                    raise CallFailedError(
                        kind,
                        f"{model}: {detail}",
                        status_code=status,
                        latency_ms=outcome.latency_ms,
                        received_at=outcome.received_at,
                    )
                index = cursor.take("llm", kind.value)
                delay, reason = self._delay(kind, index, response)
                check_wait(
                    self._monitor,
                    delay,
                    channel="llm",
                    model=model,
                    reason=reason,
                    url=self._url,
                    status_code=status,
                )
                await self._clock.sleep(delay)
                attempt += 1
