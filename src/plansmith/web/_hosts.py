"""The host check of a loopback server (against DNS rebinding): Starlette's
``TrustedHostMiddleware`` decides, and a refused ``Host`` gets our JSON error body (a
400) instead of its plain text."""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from plansmith.web._errors import error_response
from plansmith.web._settings import LOOPBACK_HOSTS

__all__ = ["LoopbackHostMiddleware"]

_TRUSTED = "plansmith.host_trusted"

_HINT = (
    "this server listens on a loopback address and answers only to the host names "
    "127.0.0.1, localhost and [::1] (a page of another site cannot reach it through "
    "DNS rebinding): open it as http://127.0.0.1:PORT/, or serve it on another address "
    "with `plansmith serve --host ADDRESS --token T`"
)


async def _mark_trusted(scope: Scope, _receive: Receive, _send: Send) -> None:
    scope[_TRUSTED] = True


async def _no_receive() -> Message:
    raise RuntimeError("the host check reads no request body")


async def _discard(_: Message) -> None:
    """Starlette's own refusal (plain text) is dropped: ours is sent instead."""


class LoopbackHostMiddleware:
    """Answer only to the loopback host names; refuse any other ``Host`` with JSON."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        # Starlette's check run as a probe: it calls ``_mark_trusted`` only for a host it
        # accepts (and lets non-HTTP scopes, such as lifespan, through the same way).
        # No ``www.`` name is allowed, so its www redirect never applied: it is off.
        self._check = TrustedHostMiddleware(
            _mark_trusted, allowed_hosts=list(LOOPBACK_HOSTS), www_redirect=False
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        probe = dict(scope)
        await self._check(probe, _no_receive, _discard)
        if probe.get(_TRUSTED):
            await self.app(scope, receive, send)
            return
        host = Headers(scope=scope).get("host")
        message = (
            f"host {host!r} refused: this server answers only to loopback host names"
            if host is not None
            else "a request with no Host header is refused"
        )
        refusal = error_response(
            400, "UntrustedHostError", message, location="header.host", hint=_HINT
        )
        await refusal(scope, receive, send)
