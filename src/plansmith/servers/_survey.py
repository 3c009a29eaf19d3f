"""``plansmith tools``: start each server of a servers file, list its tools, say how it went.

Every server is started in parallel in one ``ServerPool`` (no restarts: a survey reports
a server as it is). Each gets a ``ServerSurvey``: how far it got (``stage``), its tools
with their schemas, title and annotations, what its session says of it, and how long it
took to be ready; or, when it failed, a ``ServerStartError`` saying at which stage:

- ``start``: no process or connection (no such program, not executable, nothing
  listening at the url);
- ``initialize``: started, but it did not answer ``initialize`` (it exited, wrote
  something that is not MCP, or said nothing before the start timeout);
- ``tools``: initialised, but ``tools/list`` failed, or it lists no tools.

One server's failure is never another's: the others are surveyed all the same.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TextIO

import anyio
import httpx2

from plansmith.binding import ToolSpec
from plansmith.errors import ServerStartError
from plansmith.servers._config import (
    HttpServer,
    InProcessServer,
    ServerConfig,
    ServersConfig,
    StdioServer,
)
from plansmith.servers._pool import ServerPool, _describe, _start_hint, not_configured

__all__ = ["ServerSurvey", "survey_servers", "transport_of", "STAGES"]

#: the stages of a server's start, in order; a survey that ended well is at ``ready``
STAGES = ("start", "initialize", "tools", "ready")

#: errors that mean the process or connection was never made
_NOT_MADE = (FileNotFoundError, PermissionError, NotADirectoryError, ConnectionRefusedError)


@dataclass(frozen=True, slots=True)
class ServerSurvey:
    """One server as ``plansmith tools`` found it.

    ``stage`` is where it stopped (``STAGES``; ``ready`` when nothing failed); ``seconds``
    the time from asking it to start to its tools being listed (None when it failed);
    ``info`` what its session says of it (``name``, ``version``, ``protocol``).
    """

    name: str
    transport: str
    stage: str = "ready"
    tools: tuple[ToolSpec, ...] = ()
    seconds: float | None = None
    info: tuple[tuple[str, str], ...] = ()
    error: ServerStartError | None = field(default=None, compare=False)

    @property
    def started(self) -> bool:
        """Its process ran, or its url answered."""
        return self.stage != "start"

    @property
    def initialised(self) -> bool:
        """It answered ``initialize``."""
        return self.stage in ("tools", "ready")

    @property
    def ok(self) -> bool:
        return self.error is None


def transport_of(config: ServerConfig) -> str:
    """How plansmith talks to the server: ``stdio``, ``http`` (streamable), ``sse``, or
    ``in-process``."""
    if isinstance(config, StdioServer):
        return "stdio"
    if isinstance(config, HttpServer):
        return "sse" if config.sse else "http"
    assert isinstance(config, InProcessServer)
    return "in-process"


async def survey_servers(
    config: ServersConfig,
    names: Sequence[str] | None = None,
    *,
    start_timeout: float = 30.0,
    errlog: TextIO | None = None,
) -> tuple[ServerSurvey, ...]:
    """Start ``names`` (default: every server of ``config``) in parallel, list their tools,
    and close them; one ``ServerSurvey`` each, in the order asked. Raises only when a
    name is not in ``config`` (a ``ServerStartError`` naming the servers it has)."""
    wanted = tuple(names) if names else config.names
    unknown = not_configured(config, wanted)
    if unknown is not None:
        raise unknown
    found: dict[str, ServerSurvey] = {}
    async with ServerPool(
        config, errlog=errlog, start_timeout=start_timeout, restart_limit=0
    ) as pool:

        async def one(name: str) -> None:
            server = config.get(name)
            assert server is not None
            began = time.monotonic()
            try:
                catalog = await pool.start((name,))
            except ServerStartError:
                found[name] = _failed(server, pool.phase(name), pool.start_error(name), errlog)
                return
            seconds = time.monotonic() - began
            tools = dict(catalog.servers).get(name, ())
            info = tuple(pool.server_info(name).items())
            error = None
            if not tools:
                error = ServerStartError(
                    f"server {name!r} lists no tools",
                    location=server.loc,
                    hint="plansmith binds actions to tools: check the server's arguments"
                    " (a filesystem server needs its directories, some need a token)",
                )
            found[name] = ServerSurvey(
                name,
                transport_of(server),
                "tools" if error else "ready",
                tools,
                None if error else seconds,
                info,
                error,
            )

        async with anyio.create_task_group() as tg:
            for name in wanted:
                tg.start_soon(one, name)
    return tuple(found[name] for name in wanted)


def _failed(
    server: ServerConfig, phase: str, error: BaseException | None, errlog: TextIO | None
) -> ServerSurvey:
    """The survey of a server whose start failed in ``phase`` with ``error``."""
    name = server.name
    said = _describe(error)
    if phase == "tools":
        stage, message = "tools", f"server {name!r} answered initialize, but not tools/list"
        hint = "a server plansmith binds to must offer tools (the tools capability)"
    elif _not_made(error):
        stage, message = "start", f"server {name!r} did not start"
        hint = _start_hint([(server, error)], errlog)
    else:
        stage, message = "initialize", f"server {name!r} did not answer initialize"
        hint = _start_hint([(server, error)], errlog)
        if isinstance(server, StdioServer):
            hint += "; a stdio server must write only MCP messages to its stdout"
    return ServerSurvey(
        name,
        transport_of(server),
        stage,
        error=ServerStartError(f"{message}: {said}", location=server.loc, hint=hint),
    )


def _not_made(error: BaseException | None) -> bool:
    """Whether ``error`` says the process or connection was never made (not a timeout,
    which is an ``OSError`` too, nor a connection that closed)."""
    if isinstance(error, BaseExceptionGroup):
        return any(_not_made(e) for e in error.exceptions)
    if isinstance(error, httpx2.ConnectError):
        return True
    return isinstance(error, _NOT_MADE)
