"""Helpers of the drug target server tests: start the servers (stdio or in memory) and
call their tools, recording each answer as ``Answer``."""

from __future__ import annotations

import json
import os
import shutil
import sys
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from plansmith.domains.drugtarget import DOMAIN_DIR
from plansmith.domains.drugtarget.server import create_server
from plansmith.servers import load_servers
from plansmith.servers._config import StdioServer

SERVERS_JSON = DOMAIN_DIR / "servers.json"


@dataclass(frozen=True)
class Answer:
    """A tool call's outcome: its text and isError, or a JSON-RPC error (code, message)."""

    text: str = ""
    is_error: bool = False
    code: int | None = None

    @property
    def data(self) -> Any:
        return json.loads(self.text)


def stdio_params(source: str) -> StdioServerParameters:
    """The server of ``source`` as servers.json starts it: its program found as plansmith's
    pool finds it (on PATH, else beside this interpreter; ``python`` is this one)."""
    entry = load_servers(SERVERS_JSON).get(source)
    assert isinstance(entry, StdioServer), entry
    command = entry.command
    if command == "python":
        command = sys.executable
    elif os.sep not in command and shutil.which(command) is None:
        command = str(Path(sys.executable).parent / command)
    return StdioServerParameters(command=command, args=list(entry.args))


async def call(client: Client, tool: str, args: dict[str, Any] | None) -> Answer:
    try:
        result = await client.call_tool(tool, args)
    except MCPError as error:
        return Answer(text=error.message, code=error.code)
    text = "".join(getattr(c, "text", "") for c in result.content)
    assert len(result.content) == 1
    assert result.content[0].type == "text"
    return Answer(text=text, is_error=bool(result.is_error))


class Servers:
    """Clients of several sources at once (``async with Servers(names, stdio=True)``)."""

    def __init__(self, sources: list[str], *, stdio: bool) -> None:
        self.sources = sources
        self.stdio = stdio
        self.clients: dict[str, Client] = {}
        self._stack = AsyncExitStack()

    async def __aenter__(self) -> Servers:
        for source in self.sources:
            server: Any = stdio_params(source) if self.stdio else create_server(source)
            client = Client(server, read_timeout_seconds=30)
            self.clients[source] = await self._stack.enter_async_context(client)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    async def __call__(self, source: str, tool: str, args: dict[str, Any] | None) -> Answer:
        return await call(self.clients[source], tool, args)
