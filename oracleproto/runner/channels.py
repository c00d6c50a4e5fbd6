"""The three channels of a run, all over one record/replay cache.

The LLM client, ``tavily-python``'s async client and the detector each get an
``httpx.AsyncClient`` whose transport is the run's ``RecordReplay`` bound to their channel, so
every byte they exchange is recorded or replayed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx
from pydantic import SecretStr

from oracleproto.primitives.clock import Clock
from oracleproto.profile import HarnessProfile, builtin_profile
from oracleproto.providers import FilteredSearch, LeakDetector, OpenAIChatClient, TavilyKeyPool, TavilySearch
from oracleproto.providers.cookies import use_set_cookie_only_jar
from oracleproto.providers.detector_template import DetectorTemplate
from oracleproto.providers.monitor import CallMonitor
from oracleproto.providers.types import ChatModel, SearchTool
from oracleproto.settings.model import Settings
from oracleproto.transport import RecordReplay

#: Stand-in credential for replay: the transport never sends it and scrubs every credential
#: before writing, so replay needs no real key.
REPLAY_PLACEHOLDER_KEY = "replay-mode-no-key"


def _client(transport: httpx.AsyncBaseTransport, timeout: float) -> httpx.AsyncClient:
    # httpx's cookie jar costs about a tenth of a replay; it is skipped for responses setting none.
    return use_set_cookie_only_jar(httpx.AsyncClient(transport=transport, timeout=timeout))


@dataclass
class Channels:
    """Open clients of a run; ``aclose`` releases them (the cache is closed by its owner)."""

    chat: ChatModel
    search: SearchTool | None
    _clients: list[httpx.AsyncClient] = field(default_factory=list)
    _tavily: TavilySearch | None = None

    async def aclose(self) -> None:
        """Close every HTTP client this run opened."""
        if self._tavily is not None:
            await self._tavily.aclose()
        for client in self._clients:
            await client.aclose()


def open_channels(
    settings: Settings,
    cache: RecordReplay,
    clock: Clock,
    *,
    live: bool,
    monitor: CallMonitor | None = None,
    detector_template: DetectorTemplate | None = None,
    profile: HarnessProfile | None = None,
) -> Channels:
    """Build the chat model and the (leak-filtered) search tool over ``cache``, reporting to ``monitor``.

    ``detector_template`` is the run's (the recorded one on replay); default: the settings' file.
    ``profile`` decides the bytes of every request (default: the built-in profile).
    """
    profile = profile if profile is not None else builtin_profile()
    # Each channel's cap (paper Table 14) bounds the requests on the wire to its provider; the
    # transport holds it, so replayed calls, calls waiting on an identical one and backoff sleeps
    # leave the slot to calls that can use it.
    llm, search, det = settings.llm, settings.search, settings.detector
    llm_http = _client(cache.transport("llm", max_in_flight=llm.max_concurrency), llm.timeout_s)
    search_http = _client(cache.transport("search", max_in_flight=search.max_concurrency), search.timeout_s)
    detector_http = _client(cache.transport("detector", max_in_flight=det.max_concurrency), det.timeout_s)
    llm_key = None if live else REPLAY_PLACEHOLDER_KEY
    chat = OpenAIChatClient(llm_http, settings.llm, clock, api_key=llm_key, monitor=monitor, profile=profile)
    keys: list[SecretStr] = list(settings.search.api_keys) if live else [SecretStr(REPLAY_PLACEHOLDER_KEY)]
    pool = TavilyKeyPool(keys, clock)
    tavily = TavilySearch(search_http, settings.search, pool, clock, monitor=monitor, profile=profile)
    detector = None
    if settings.detector.enabled:
        llm_settings = settings.llm
        detector_settings = settings.detector
        if not live:
            detector_settings = detector_settings.model_copy(
                update={"api_key": SecretStr(REPLAY_PLACEHOLDER_KEY)}
            )
        detector = LeakDetector(
            detector_http,
            detector_settings,
            llm_settings,
            clock,
            monitor=monitor,
            template=detector_template,
            profile=profile,
        )
    return Channels(
        chat=chat,
        search=FilteredSearch(tavily, detector),
        _clients=[llm_http, search_http, detector_http],
        _tavily=tavily,
    )
