"""Run progress for hosts on protocol 2025-11-25: ``resources/subscribe``.

A host of the handshake era (``initialize``) cannot ``subscriptions/listen``. It
subscribes to a resource instead (``resources/subscribe``, the capability
``resources.subscribe: true``) and is sent ``notifications/resources/updated`` each
time it changes, until it unsubscribes (``resources/unsubscribe``) or disconnects.

The updates are those ``RunUpdates`` publishes on the face's subscription bus (one a
run event, for ``plansmith://runs/{id}`` and ``.../events``): one bus, two eras.
Each connection has one sender task (in the face's lifespan task group) that sends
its pending URIs in order; an update of a URI already pending is the same update
(``resources/updated`` says "read it again", not what changed), so a slow host
costs at most one pending update per URI it subscribed to.

The MCP SDK's ``MCPServer`` serves only ``subscriptions/listen``; the two legacy
methods go on its low-level server (``Server.add_request_handler``, as the SDK says
for a method of the handshake era), whose capabilities then say ``subscribe: true``
on legacy connections. The 2026-07-28 wire never routes them here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
from anyio.abc import TaskGroup
from mcp.server import MCPServer, ServerRequestContext
from mcp.server.connection import Connection
from mcp.server.subscriptions import ResourceUpdated, ServerEvent, SubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, EmptyResult, SubscribeRequestParams, UnsubscribeRequestParams

__all__ = ["LegacySubscriptions", "Check"]

logger = logging.getLogger(__name__)

#: Raises ``MCPError`` (INVALID_PARAMS) for a URI the caller may not subscribe to.
Check = Callable[[ServerRequestContext[Any, Any], str], None]


class _Subscriber:
    """One connection: the URIs it subscribed to, and those with an update to send."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.uris: set[str] = set()
        self.pending: dict[str, None] = {}  # insertion-ordered set
        self.wake = anyio.Event()
        self.closed = False

    def add(self, uri: str) -> None:
        if uri in self.uris:
            self.pending[uri] = None
            self.wake.set()

    def close(self) -> None:
        self.closed = True
        self.wake.set()


class LegacySubscriptions:
    """``resources/subscribe`` and ``resources/unsubscribe`` over ``bus``.

    ``check`` is called on each subscribe (it raises for an unknown URI, or a run the
    caller may not read). ``install`` registers the two methods on a server;
    ``start`` (in the server's lifespan) listens to the bus until its task group ends.
    """

    def __init__(self, bus: SubscriptionBus, check: Check) -> None:
        self._bus = bus
        self._check = check
        self._subscribers: dict[Connection, _Subscriber] = {}
        self._group: TaskGroup | None = None

    def install(self, server: MCPServer) -> None:
        # MCPServer keeps its low-level server private and has no other way to serve a
        # method of the handshake era (an extension may not bind a spec method).
        lowlevel = server._lowlevel_server
        lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, self._subscribe)
        lowlevel.add_request_handler(
            "resources/unsubscribe", UnsubscribeRequestParams, self._unsubscribe
        )

    def start(self, group: TaskGroup) -> None:
        self._group = group
        group.start_soon(self._listen)

    async def _listen(self) -> None:
        unsubscribe = self._bus.subscribe(self._deliver)
        try:
            await anyio.sleep_forever()
        finally:
            unsubscribe()
            for subscriber in list(self._subscribers.values()):
                subscriber.close()
            self._subscribers.clear()

    def _deliver(self, event: ServerEvent) -> None:
        if isinstance(event, ResourceUpdated):
            for subscriber in self._subscribers.values():
                subscriber.add(event.uri)

    async def _subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: SubscribeRequestParams
    ) -> EmptyResult:
        self._check(ctx, params.uri)
        connection = _connection(ctx)
        subscriber = self._subscribers.get(connection)
        if subscriber is None:
            group = self._group
            if group is None:
                raise MCPError(INTERNAL_ERROR, "the server is not serving subscriptions")
            subscriber = self._subscribers[connection] = _Subscriber(connection)
            connection.exit_stack.callback(self._drop, connection)  # on disconnect
            group.start_soon(self._send, subscriber)
        subscriber.uris.add(params.uri)
        return EmptyResult()

    async def _unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: UnsubscribeRequestParams
    ) -> EmptyResult:
        subscriber = self._subscribers.get(_connection(ctx))
        if subscriber is not None:  # unsubscribing from what was not subscribed: no-op
            subscriber.uris.discard(params.uri)
            subscriber.pending.pop(params.uri, None)
        return EmptyResult()

    def _drop(self, connection: Connection) -> None:
        subscriber = self._subscribers.pop(connection, None)
        if subscriber is not None:
            subscriber.close()

    async def _send(self, subscriber: _Subscriber) -> None:
        while True:
            await subscriber.wake.wait()
            if subscriber.closed:
                return
            subscriber.wake = anyio.Event()
            while subscriber.pending:
                uri = next(iter(subscriber.pending))
                del subscriber.pending[uri]
                if uri not in subscriber.uris:  # unsubscribed meanwhile
                    continue
                try:  # a closed stream is dropped quietly by the SDK; anything else ends
                    await subscriber.connection.send_resource_updated(uri)  # this sender only
                except Exception:
                    logger.exception("resources/updated could not be sent; unsubscribed")
                    self._drop(subscriber.connection)
                    return


def _connection(ctx: ServerRequestContext[Any, Any]) -> Connection:
    """The connection a request came on. ``ServerSession`` (one a request) keeps it
    private; it is what the SDK's own ``ServerSession`` sends notifications on."""
    connection: Connection = ctx.session._connection
    return connection
