"""Paths and configs for the test MCP server (``_servers/counter_server.py``)."""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any

from plansmith.servers import InProcessServer, ServersConfig, StdioServer

COUNTER = Path(__file__).parent / "_servers" / "counter_server.py"


def stdio(name: str = "counter", **env: str) -> StdioServer:
    return StdioServer(name, sys.executable, (str(COUNTER),), tuple(env.items()))


def servers(*configs: Any) -> ServersConfig:
    return ServersConfig(tuple(configs))


def in_process(name: str = "counter") -> InProcessServer:
    sys.path.insert(0, str(COUNTER.parent))
    import counter_server

    return InProcessServer(name, counter_server.server)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port
