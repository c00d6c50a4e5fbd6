"""The leak detector H_aux (paper App. B.5): a temporal audit of one search result.

The detector sees only six whitelisted fields of a result (title, url, published_date,
content, raw_content, cutoff_date) — never what the main model is asked, its candidate
choices, the ground truth or any dialogue — so it is framed as a temporal auditor, not an
oracle. Failures are fail-closed and do not abort the run (Table 13), with three exceptions
that would otherwise fail-close every remaining result of the run: exhausted credit (``quota``,
our extension) raises ``QuotaError``; a rejected key (401/403) raises ``AuthError`` and a slug the
provider does not serve raises ``ModelNotFoundError`` (issue 28: a revoked detector key used to
give a "finished" run with every search result dropped). The last two only live: a replayed one
keeps the ``failed:auth`` / ``failed:unknown`` verdict it was recorded with.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import httpx

from oracleproto.context import logical_call
from oracleproto.errors import AuthError, ConfigError, ErrorKind, QuotaError
from oracleproto.primitives.clock import Clock
from oracleproto.primitives.redact import redact_url
from oracleproto.profile.builtin import builtin_profile
from oracleproto.profile.model import HarnessProfile
from oracleproto.providers.backoff import backoff_cursor
from oracleproto.providers.barrier import assert_detector_safe
from oracleproto.providers.body_order import ordered
from oracleproto.providers.chat_parse import (
    ErrorInBodyError,
    MalformedBodyError,
    body_usage,
    load_json_body,
    parse_chat_completion,
)
from oracleproto.providers.classify import (
    classify_error,
    classify_status,
    is_model_not_found,
    is_model_not_found_object,
    provider_message,
)
from oracleproto.providers.detector_template import DetectorTemplate
from oracleproto.providers.endpoint import endpoint_url, message_secrets
from oracleproto.providers.llm import scrub_secret
from oracleproto.providers.model_not_found import model_not_found
from oracleproto.providers.monitor import CallFailure, CallMonitor, NullMonitor, check_wait
from oracleproto.providers.timing import backoff_delay, call_timing
from oracleproto.providers.types import SearchResult, Usage
from oracleproto.settings.model import DetectorSettings, LLMSettings
from oracleproto.transport.extensions import served_from_cassette

#: Kinds of an error object inside a 200 body that are retried like their HTTP counterparts.
_TRANSIENT = frozenset({ErrorKind.NETWORK, ErrorKind.SERVER_5XX, ErrorKind.UNKNOWN})
VERDICTS = frozenset({"keep", "drop"})
#: Failure kind of a reply that never yielded a valid verdict (not an HTTP failure).
PARSE_FAILURE = "parse"
_KINDS = frozenset(k.value for k in ErrorKind)
#: Distinct detector replies (and rendered prompts) kept, a few hundred bytes to a few KB each.
_REPLY_MEMO = 4096


def detector_prompt_hash() -> str:
    """The built-in template's fingerprint (``leak_detector_prompt_hash`` without a prompt file)."""
    return DetectorTemplate.builtin().fingerprint


def render_detector_prompt(
    result: SearchResult, cutoff: date, template: DetectorTemplate | None = None
) -> str:
    """The detector prompt for one result: ``template`` (default: built-in) with the whitelisted fields."""
    return (template or DetectorTemplate.builtin()).render(result, cutoff)


def _brace_object(text: str) -> str | None:
    """The substring from the first ``{`` to the brace closing it at depth 0, if any."""
    start = text.find("{")
    if start < 0:
        return None
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return None


def parse_verdict(text: str) -> tuple[str, str] | None:
    """Parse a detector reply per the paper's Algorithm 4; ``None`` on any defect, never raises."""
    if not isinstance(text, str):
        return None
    t = text.strip()
    if not t:
        return None
    candidates: list[str] = []
    if t.startswith("{") and t.endswith("}"):
        candidates.append(t)
    embedded = _brace_object(t)
    if embedded is not None:
        candidates.append(embedded)
    for candidate in candidates:
        try:
            obj: Any = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if not isinstance(obj, dict):
            continue
        verdict = obj.get("verdict")
        reason = obj.get("reason") or ""
        if not isinstance(verdict, str) or verdict not in VERDICTS:
            return None
        return verdict, str(reason)
    return None


def _error_object_says_model_not_found(content: bytes) -> bool:
    try:
        body = load_json_body(content)
    except MalformedBodyError:
        return False
    return isinstance(body, dict) and is_model_not_found_object(body.get("error"))


@dataclass(frozen=True)
class Verdict:
    """The detector's judgement of one result: ``keep``, ``drop`` or ``failed:<kind>``."""

    label: str
    reason: str
    error_kind: str | None
    latency_ms: int
    #: Usage of the final reply (the one the cassette holds), ``None`` when none was reported.
    usage: Usage | None = None

    @property
    def failed(self) -> bool:
        """True when no valid verdict was obtained."""
        return self.error_kind is not None


class LeakDetector:
    """Judges search results over an OpenAI-compatible endpoint, fail-closed (Tables 11, 13)."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        settings: DetectorSettings,
        llm: LLMSettings,
        clock: Clock,
        *,
        monitor: CallMonitor | None = None,
        template: DetectorTemplate | None = None,
        profile: HarnessProfile | None = None,
    ) -> None:
        if not settings.model:
            raise ConfigError("LEAK_DETECTOR_MODEL is empty; set a detector slug or disable the filter")
        base_url = settings.base_url or llm.base_url
        if not base_url:
            raise ConfigError("neither LEAK_DETECTOR_BASE_URL nor LLM_BASE_URL is set; set one of them")
        secret = settings.api_key if settings.api_key is not None else llm.api_key
        self._client = client
        self._settings = settings
        self._clock = clock
        self._monitor: CallMonitor = monitor if monitor is not None else NullMonitor()
        self._model = settings.model
        #: Body key order and serialisation; the prompt's rules too unless ``template`` is given.
        self._profile = profile if profile is not None else builtin_profile()
        # The runner passes the run's template (from the recording on replay); else the settings'
        # prompt file with the profile's rules, or the profile's own template.
        self._template = (
            template if template is not None else DetectorTemplate.from_settings(settings, self._profile)
        )
        self._url = endpoint_url(base_url, "chat/completions")
        # Parsed once, on the first request (see ``OpenAIChatClient._request_url``).
        self._parsed_url: httpx.URL | None = None
        self._headers = {"Content-Type": "application/json"}
        #: The key, to scrub from provider messages (a 401 body may echo it).
        self._secret = secret.get_secret_value() if secret is not None else None
        if self._secret:
            self._headers["Authorization"] = f"Bearer {self._secret}"
        #: Outcomes of replies already read, by (body, latency) (see ``_read``).
        self._replies: dict[tuple[bytes, int], tuple[str, Verdict | None, bool]] = {}
        #: Rendered prompts by (result, cutoff) (see ``build_body``).
        self._prompts: dict[tuple[SearchResult, date], str] = {}

    @property
    def fail_action(self) -> str:
        """What a failed verdict does to its result: ``drop`` (fail-closed) or ``keep``."""
        return self._settings.fail_action

    @property
    def url(self) -> str:
        """The ``/chat/completions`` URL the detector calls."""
        return self._url

    def build_body(self, result: SearchResult, cutoff: date) -> dict[str, Any]:
        """The detector request body for one result (checked by the send-time barrier)."""
        # Every sample that sees a result has it judged: the prompt is rendered once per result.
        slot = (result, cutoff)
        prompt = self._prompts.get(slot)
        if prompt is None:
            prompt = self._prompts[slot] = self._template.render(result, cutoff)
            if len(self._prompts) > _REPLY_MEMO:
                del self._prompts[next(iter(self._prompts))]
        members: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": self._settings.temperature,
            "max_tokens": self._settings.max_tokens,
        }
        order = self._profile.detector.key_order
        body = ordered(members, order, order_name="detector.key_order", profile_name=self._profile.name)
        assert_detector_safe(body)
        return body

    def encode_body(self, body: dict[str, Any]) -> bytes:
        """The request bytes of ``body``, serialised as the profile's ``request_json.detector`` says."""
        return self._profile.request_json.detector.encode(body)

    async def judge(self, result: SearchResult, cutoff: date) -> Verdict:
        """The verdict on one result; failures become ``failed:<kind>``, except the run stoppers
        (exhausted credit, and live: a rejected key, an unknown slug), which raise."""
        # The channel's concurrency cap is held by the transport, only while a request is on the wire.
        return await self._judge(self.build_body(result, cutoff))

    def _request_url(self) -> httpx.URL:
        if self._parsed_url is None:
            self._parsed_url = httpx.URL(self._url)
        return self._parsed_url

    async def _judge(self, body: dict[str, Any]) -> Verdict:
        # Bytes, not ``json=``: the profile decides separators and escaping, not httpx.
        content = self.encode_body(body)
        started = self._clock.monotonic()
        # The sample's detector sequence continues across its items and calls (paper App. B.7);
        # retry_max caps this call's retries.
        cursor = backoff_cursor()
        with logical_call() as call:
            attempt = 0
            while True:
                call.attempt = attempt
                response: httpx.Response | None = None
                error: BaseException | None = None
                retryable = True
                try:
                    response = await self._client.post(
                        self._request_url(),
                        content=content,
                        headers=self._headers,
                        timeout=self._settings.timeout_s,
                    )
                except (httpx.TransportError, TimeoutError) as exc:
                    kind: str = classify_error(exc).value
                    signature = type(exc).__name__
                    replayed = served_from_cassette(exc=exc)
                    error = exc
                else:
                    replayed = served_from_cassette(response)
                    signature = f"HTTP {response.status_code}"
                    if response.status_code == 200:
                        kind, verdict, retryable = self._read(response, started)
                        if verdict is not None:
                            if not replayed:
                                self._monitor.call_done("detector", None)
                            return verdict
                    else:
                        status_kind = classify_status(response.status_code, response.content)
                        kind = status_kind.value
                        # Table 13: every 4xx (auth included) is final; 5xx retries.
                        retryable = status_kind is ErrorKind.SERVER_5XX
                if kind == ErrorKind.QUOTA.value:
                    self._raise_quota(response)
                if response is not None and not replayed:
                    self._raise_if_misconfigured(response, kind)
                # A replayed outcome is already final: the recording holds its retries.
                retryable = retryable and not replayed
                if not retryable or attempt >= self._settings.retry_max:
                    if not replayed:
                        # A reply without a verdict still reached the endpoint: not a breaker failure.
                        failure = (
                            CallFailure(ErrorKind(kind), signature, self._url) if kind in _KINDS else None
                        )
                        self._monitor.call_done("detector", failure)
                    latency, _ = call_timing(self._clock, started, response=response, exc=error)
                    # A reply without a verdict was still billed when it reports usage.
                    usage = body_usage(response.content) if response is not None else None
                    return Verdict(f"failed:{kind}", "", kind, latency, usage)
                delay = backoff_delay(self._settings.backoff_s, cursor.take("detector", "backoff"))
                check_wait(
                    self._monitor,
                    delay,
                    channel="detector",
                    model=self._model,
                    reason=f"{kind} backoff",
                    url=self._url,
                )
                await self._clock.sleep(delay)
                attempt += 1

    def _raise_quota(self, response: httpx.Response | None) -> None:
        """Exhausted credit stops the run (our extension of Table 13's fail-closed rule)."""
        shown = " ".join(response.text.split())[:300] if response is not None else "quota"
        status = f"HTTP {response.status_code}: " if response is not None else ""
        raise QuotaError(
            f"leak detector {self._model} at {self._url}: {status}{shown}",
            status_code=response.status_code if response is not None else None,
            channel="detector",
            remedy="top up the credit of the account behind LEAK_DETECTOR_API_KEY "
            "(or LLM_API_KEY when the detector shares it), or raise its spending limit",
        )

    def _raise_if_misconfigured(self, response: httpx.Response, kind: str) -> None:
        """A live rejected key (``AuthError``) or unknown slug (``ModelNotFoundError``) stops the run."""
        status = response.status_code
        said = scrub_secret(provider_message(response.content), self._secret, message_secrets(self._url))
        if kind == ErrorKind.AUTH.value:
            raise AuthError(
                f"leak detector {self._model} at {redact_url(self._url)}: HTTP {status}: {said}",
                status_code=status,
                channel="detector",
                remedy="fix LEAK_DETECTOR_API_KEY (or LLM_API_KEY, which the detector uses when "
                "LEAK_DETECTOR_API_KEY is unset)",
            )
        if kind != ErrorKind.UNKNOWN.value:
            return
        missing = (
            is_model_not_found(status, response.content)
            if status != 200
            else _error_object_says_model_not_found(response.content)
        )
        if missing:
            answered = status if status != 200 else None
            url = self._url
            raise model_not_found(self._model, channel="detector", url=url, said=said, status_code=answered)

    def _read(self, response: httpx.Response, started: float) -> tuple[str, Verdict | None, bool]:
        """(failure kind, verdict, retryable) of a 200 reply."""
        latency, received = call_timing(self._clock, started, response=response)
        # A pure function of (body, latency) (the receive time does not reach the verdict): a replay
        # serves each detector entry to every sample that judges its result (~10 times), so equal
        # replies are read once.
        slot = (response.content, latency)
        found = self._replies.get(slot)
        if found is None:
            found = self._replies[slot] = self._parse_reply(response.content, latency, received)
            if len(self._replies) > _REPLY_MEMO:
                del self._replies[next(iter(self._replies))]
        return found

    @staticmethod
    def _parse_reply(content: bytes, latency: int, received: datetime) -> tuple[str, Verdict | None, bool]:
        try:
            chat = parse_chat_completion(content, latency_ms=latency, received_at=received)
        except ErrorInBodyError as exc:
            # An error object inside a 200 follows its own kind: transient kinds retry, 4xx-like don't.
            return exc.kind.value, None, exc.kind in _TRANSIENT
        except MalformedBodyError:
            return PARSE_FAILURE, None, True
        parsed = parse_verdict(chat.content or "")
        if parsed is None:
            return PARSE_FAILURE, None, True
        usage = chat.usage if chat.usage.reported else None
        return "", Verdict(parsed[0], parsed[1], None, latency, usage), False
