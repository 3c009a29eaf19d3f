"""Paths and configs for the test MCP server (``_servers/counter_server.py``)."""

from __future__ import annotations

import os
import sys
from typing import Any

from _shared_servers import COUNTER, free_port
from plansmith.servers import InProcessServer, ServersConfig, StdioServer

__all__ = ["COUNTER", "free_port", "in_process", "servers", "stdio", "exited"]


def stdio(name: str = "counter", **env: str) -> StdioServer:
    return StdioServer(name, sys.executable, (str(COUNTER),), tuple(env.items()))


def servers(*configs: Any) -> ServersConfig:
    return ServersConfig(tuple(configs))


def in_process(name: str = "counter") -> InProcessServer:
    sys.path.insert(0, str(COUNTER.parent))
    import counter_server

    return InProcessServer(name, counter_server.server)


async def exited(pid: int) -> None:
    """Wait (at most 30 s) for process ``pid`` to end: on its pidfd, no polling."""
    import anyio

    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        with anyio.fail_after(30):
            await anyio.wait_readable(fd)
    finally:
        os.close(fd)
