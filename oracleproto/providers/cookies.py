"""An httpx cookie jar that skips the jar's work for responses that set no cookie."""

from __future__ import annotations

import httpx


class SetCookieOnlyCookies(httpx.Cookies):
    """httpx's cookie jar, skipping ``http.cookiejar`` for responses without ``Set-Cookie``.

    For every response httpx builds a urllib request and an email message to hand them to
    ``http.cookiejar``; with no ``Set-Cookie``/``Set-Cookie2`` header the jar would store
    nothing, so skipping it changes nothing.
    """

    def extract_cookies(self, response: httpx.Response) -> None:
        """Store the response's cookies, if it sets any."""
        headers = response.headers
        if "set-cookie" in headers or "set-cookie2" in headers:
            super().extract_cookies(response)


def use_set_cookie_only_jar(client: httpx.AsyncClient) -> httpx.AsyncClient:
    """``client`` with an (empty) ``SetCookieOnlyCookies`` jar; call before its first request."""
    # httpx offers no hook for its cookie handling; its ``cookies`` setter would copy the jar
    # into a plain ``Cookies``, so the (empty) instance is swapped directly.
    client._cookies = SetCookieOnlyCookies()
    return client
