"""A server's answer the SDK cannot read fails its one call, instead of hanging it.

The stdio (and HTTP+SSE) transports of the MCP SDK parse each line a server writes;
a line that does not parse (nested deeper than pydantic's JSON parser goes, about 200
levels; a lone surrogate escape; not a JSON-RPC message at all) is handed to the
session as an exception, which logs it and drops it. When the line was the answer to a
call, that call waits forever (or until its timeout, which then says ``timeout`` and is
retried). The streamable HTTP transport already answers such a response with a
``PARSE_ERROR`` for its request (it knows the request); this does the same for the
others, from the line itself: the wrapped read stream finds the line's top-level
``"id"`` with a scanner that keeps no stack (any depth, linear time) and, when the line
is a response (an ``id`` and no ``method``), hands the session a JSON-RPC error for that
id in its place. The call fails with the SDK's ``MCPError`` (code -32700), which the
pool reports as a ``protocol_error`` (not retried); other calls on the server go on.
A line that names no request (a banner, a stray ``print``, a request from the server)
is passed on as before: logged in one line, and dropped.

A line that is not UTF-8 is one of these. The pool has the SDK's stdio transport decode
with ``surrogateescape`` (its default, ``strict``, raises in the transport's reader, which
then only drains the server's output: no answer reaches the session again, and every call
in flight, healthy or not, waits for its timeout). Each byte that is not UTF-8 is then a
lone surrogate, which the SDK's parser refuses: the line fails its own call, saying which
byte is at fault, and the answers after it are read as before.

An error the server sends with ``"id": null`` (JSON-RPC's answer to a request it could not
read: a parse error, an invalid request) names no request either, and the SDK drops it,
so the call it answers would wait for ever too. The wrapped streams keep the ids of the
requests in flight (sent, neither answered nor cancelled; a ``subscriptions/listen``
stream, which a long-lived pool holds open for tool changes, is not counted): when exactly
one is, the error
is that request's answer, and its call fails with the server's code and message (a
``protocol_error``). With several in flight it cannot be told whose it is: it is dropped
as before, and their timeouts apply.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import TracebackType
from typing import Any

from mcp.shared.message import SessionMessage
from mcp.types import (
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)

__all__ = ["answer_unreadable", "response_id"]

#: a JSON token: a string, a structural character, or a run of anything else (a number,
#: a literal, or garbage); whitespace between them is skipped by ``finditer``
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')
_MOST = 300  # characters of the parser's complaint kept in the error
#: a byte that is not UTF-8, as the ``surrogateescape`` error handler reads it
_NOT_UTF8 = re.compile("[\udc80-\udcff]")


def response_id(line: str) -> int | str | None:
    """The ``id`` of the JSON-RPC response ``line`` holds, read without parsing the rest:
    None when ``line`` is not a JSON object with a top-level string or integer ``id``
    and no top-level ``method`` (a request or notification from the server)."""
    depth = 0
    key: str | None = None
    expect_key = False
    found: int | str | None = None
    for match in _TOKEN.finditer(line):
        token = match.group()
        first = token[0]
        if first in "{[":
            if depth == 0 and first == "[":
                return None  # a batch, or not an object
            if depth == 1:
                if key == "method":
                    return None
                key = None
            depth += 1
            expect_key = depth == 1
            continue
        if depth == 0:
            return None  # text before the object: not a JSON-RPC line
        if first in "}]":
            depth -= 1
            if depth == 0:
                break
            continue
        if depth != 1:
            continue
        if first == ",":
            expect_key = True
        elif first == ":":
            expect_key = False
        elif expect_key:
            key = _string(token) if first == '"' else None
        else:  # a value at the top level
            if key == "method":
                return None
            if key == "id":
                found = _scalar(token)
            key = None
    return found


def _string(token: str) -> str | None:
    try:
        value = json.loads(token)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _scalar(token: str) -> int | str | None:
    """A request id as JSON-RPC writes it: a string or an integer (else None)."""
    if token.startswith('"'):
        return _string(token)
    try:
        return int(token)
    except ValueError:
        return None


def _unread_line(error: Exception) -> tuple[str, str] | None:
    """The line the SDK could not read and what its parser said of it, from the
    parser's error (pydantic keeps the input); None for another kind of error."""
    errors = getattr(error, "errors", None)
    if not callable(errors):
        return None
    try:
        details = errors(include_url=False)
    except Exception:  # not pydantic's: nothing to read from it
        return None
    for detail in details if isinstance(details, list) else ():
        given = detail.get("input") if isinstance(detail, dict) else None
        said = str(detail.get("msg", "")) if isinstance(detail, dict) else ""
        if isinstance(given, str):
            return given, said
        if isinstance(given, dict) and "jsonrpc" in given:  # parsed, but not a message
            try:
                return json.dumps(given, default=str), "not a JSON-RPC message"
            except (TypeError, ValueError, RecursionError):
                return None
    return None


def answered(item: Exception) -> SessionMessage | Exception:
    """In place of the SDK's parse error ``item``: a JSON-RPC error answering the
    request the unreadable line responds to, or ``item`` when it names none."""
    unread = _unread_line(item)
    if unread is None:
        return item
    line, said = unread
    request = response_id(line)
    if request is None:
        return item
    bad = _NOT_UTF8.search(line)
    if bad is not None:  # read with surrogateescape: each such byte is a lone surrogate
        said = (
            f"not valid UTF-8 (byte 0x{ord(bad.group()) - 0xDC00:02x} at character {bad.start()})"
        )
    if len(said) > _MOST:
        said = said[: _MOST - 1] + "…"
    message = f"the server's answer could not be read: {said or type(item).__name__}"
    error = ErrorData(code=PARSE_ERROR, message=message)
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request, error=error))


class _InFlight:
    """The ids of the requests sent on one session and neither answered nor cancelled."""

    __slots__ = ("ids",)

    def __init__(self) -> None:
        self.ids: dict[int | str, None] = {}

    def sent(self, item: Any) -> None:
        message = getattr(item, "message", None)
        if isinstance(message, JSONRPCRequest):
            if message.method != "subscriptions/listen":  # a stream held open: no call
                self.ids[message.id] = None
        elif (
            isinstance(message, JSONRPCNotification)
            and message.method == "notifications/cancelled"  # the server will not answer it
        ):
            cancelled = (message.params or {}).get("requestId")
            if isinstance(cancelled, int | str):
                self.ids.pop(cancelled, None)

    def received(self, item: Any) -> Any:
        """``item`` as the session should get it: an error with no id answering the one
        request in flight (see the module docstring)."""
        message = getattr(item, "message", None)
        if isinstance(message, JSONRPCResponse):
            self.ids.pop(message.id, None)
        elif isinstance(message, JSONRPCError):
            if message.id is not None:
                self.ids.pop(message.id, None)
            elif len(self.ids) == 1:
                (request,) = self.ids
                error = message.error
                said = f"the server answered a request it could not read: {error.message}"
                answer = ErrorData(code=error.code, message=said, data=error.data)
                return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request, error=answer))
        return item


class _Wrapped:
    """A transport stream of the SDK's, wrapped: closing and ``async with`` go to it."""

    def __init__(self, inner: Any, in_flight: _InFlight) -> None:
        self._inner = inner
        self._in_flight = in_flight

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        await self.aclose()
        return None


class _Answering(_Wrapped):
    """The transport's read stream, with each unreadable response answered (``answered``)
    and an error with no id given to the one request in flight (``_InFlight``)."""

    @property
    def last_context(self) -> Any:  # the SDK reads the sender's context this way
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        item = await self._inner.receive()
        return self._answer(item)

    def _answer(self, item: Any) -> Any:
        if isinstance(item, Exception):
            item = answered(item)
        return self._in_flight.received(item)

    def __aiter__(self) -> _Answering:
        return self

    async def __anext__(self) -> Any:
        item = await self._inner.__anext__()
        return self._answer(item)


class _Sending(_Wrapped):
    """The transport's write stream, noting the requests sent (``_InFlight``)."""

    async def send(self, item: Any) -> None:
        self._in_flight.sent(item)  # before: the answer may come before send returns
        await self._inner.send(item)


def answer_unreadable(
    transport: AbstractAsyncContextManager[Any],
) -> AbstractAsyncContextManager[Any]:
    """``transport`` (an SDK client transport) whose read stream answers each response it
    cannot read with a ``PARSE_ERROR`` for that response's request, and an error with no
    id with the one request in flight."""

    @asynccontextmanager
    async def wrapped() -> AsyncIterator[Any]:
        async with transport as (read_stream, write_stream):
            in_flight = _InFlight()
            yield _Answering(read_stream, in_flight), _Sending(write_stream, in_flight)

    return wrapped()
