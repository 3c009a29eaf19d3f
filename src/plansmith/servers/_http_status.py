"""The HTTP status behind a streamable HTTP server's failed request.

The SDK answers a request that got HTTP 500, 502 or 503 with a stand-in JSON-RPC error
(``-32603 Server returned an error response``), without the status or the body. A
response hook on the session's HTTP client notes the last error response, so that the
pool can say what it was and classify it: 502, 503 and 504 (a gateway or a server that
is not up) are ``transport_lost``, retried by that rule; other statuses are protocol
errors, with the status and the start of the body in the message.
"""

from __future__ import annotations

import httpx2

__all__ = ["HttpErrors", "UNAVAILABLE"]

#: statuses that say the request was not served (a proxy, a server starting or gone)
UNAVAILABLE = frozenset({502, 503, 504})
_BODY = 200  # characters of an error body kept


class HttpErrors:
    """A response hook for ``httpx2.AsyncClient(event_hooks={"response": [...]})``."""

    __slots__ = ("last",)

    def __init__(self) -> None:
        #: the last error response not yet reported: (status, "HTTP 503 ...: body")
        self.last: tuple[int, str] | None = None

    async def __call__(self, response: httpx2.Response) -> None:
        if response.status_code < 400:
            return
        try:
            body = (await response.aread()).decode("utf-8", "replace")
        except httpx2.HTTPError:
            body = ""
        body = " ".join(body.split())[:_BODY]
        text = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
        self.last = (response.status_code, f"{text}: {body}" if body else text)

    def take(self) -> tuple[int, str] | None:
        """The last error response, once (None when there was none)."""
        last, self.last = self.last, None
        return last
