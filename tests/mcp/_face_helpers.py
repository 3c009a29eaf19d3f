"""Domain folders for the face tests: a document domain bound to the counter server."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from _shared_servers import (
    COUNTER,
    INDEX,
    INDEX_BINDING,
    SUMMARISE,
    SUMMARISE_BINDING,
    action,
    binding,
    docs_domain,
    free_port,
    problem_text,
    servers_json,
)

DOMAIN = docs_domain(
    SUMMARISE,
    INDEX,
    action("archive", "indexed(d)", "archived(d)", "read"),
    predicates="  archived: [document]\n",
    rest="""\
tasks:
  publish:
    parameters: {d: document}
    methods:
      - name: both
        subtasks: [summarise(d), index(d)]
goals:
  searchable:
    description: "make documents searchable (index them)"
    goal: [indexed(d)]
    parameters: {d: document}
  summarised:
    description: "summarise a document"
    goal: [summarised(d)]
    parameters: {d: document}
""",
)

BINDINGS = (
    "bindings:\n"
    + SUMMARISE_BINDING
    + INDEX_BINDING
    + binding("archive", "sleep", "{seconds: 600}")
)


def write_domain(
    root: Path,
    *,
    n: int = 3,
    url: str | None = None,
    name: str = "docs",
    bindings: str = BINDINGS,
) -> Path:
    """A domain folder under ``root``: stdio counter server, or the one at ``url``."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "domain.yaml").write_text(DOMAIN)
    (folder / "problem.yaml").write_text(problem_text(n, goal="indexed(d0)"))
    (folder / "bindings.yaml").write_text(bindings)
    (folder / "servers.json").write_text(servers_json(url=url))
    return folder


TERMINAL = ("succeeded", "failed", "cancelled")


def make_service(
    root: Path,
    *,
    n: int = 3,
    url: str | None = None,
    max_runs: int = 8,
    max_parallel: int = 8,
    bindings: str = BINDINGS,
    **options: Any,
) -> Any:
    """A ``FaceService`` (as ``plansmith mcp`` makes it) over one ``docs`` folder (plus
    the shipped domains); enter it (``async with``) to use it without a face server."""
    from plansmith.domains.folders import load_folders, shipped_domain_dirs
    from plansmith.engine import Engine
    from plansmith.mcp import FaceService

    write_domain(root / "domains", n=n, url=url, bindings=bindings)
    folders = load_folders([root / "domains", *shipped_domain_dirs()])
    engine = Engine(root / "home")
    return FaceService.on(engine, folders, max_runs=max_runs, max_parallel=max_parallel, **options)


async def call(client: Any, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    """A tool's structured result; a tool error fails the test with its text."""
    result = await client.call_tool(tool, args or {})
    assert not result.is_error, result.content[0].text
    data: dict[str, Any] = result.structured_content
    return data


async def error_text(client: Any, tool: str, args: dict[str, Any]) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error, result.structured_content
    text: str = result.content[0].text
    return text


async def poll(client: Any, run_id: str) -> dict[str, Any]:
    """Poll ``get_run_status`` until the run is over (a short pause between polls)."""
    import anyio

    with anyio.fail_after(120):
        while True:
            status = await call(client, "get_run_status", {"run_id": run_id})
            if status["state"] in TERMINAL:
                return status
            await anyio.sleep(0.02)


async def plan_approve_run(client: Any, **plan_args: Any) -> tuple[dict[str, Any], str]:
    plan = await call(client, "make_plan", {"domain": "docs", **plan_args})
    assert plan["status"] == "planned", plan
    await call(client, "approve_plan", {"plan_hash": plan["plan_hash"]})
    run = await call(client, "start_run", {"plan_hash": plan["plan_hash"]})
    return plan, run["run_id"]


@contextlib.asynccontextmanager
async def serving(app: Any) -> AsyncIterator[int]:
    """Serve an ASGI app with uvicorn on 127.0.0.1 in this event loop; yields the port."""
    import anyio
    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        with anyio.fail_after(30):
            while not server.started:
                await anyio.sleep(0.01)
        port: int = server.servers[0].sockets[0].getsockname()[1]
        try:
            yield port
        finally:
            server.should_exit = True


@contextlib.asynccontextmanager
async def http_client(
    url: str, headers: dict[str, str] | None = None, *, session: bool = False
) -> AsyncIterator[Any]:
    """An SDK client (2026-07-28: no MCP session) over streamable HTTP sending ``headers``.
    With ``session``, it first calls ``open_session`` and sends the value it returns as
    the ``X-Plansmith-Session`` header from then on."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers=headers or {}, timeout=httpx2.Timeout(60, read=300))
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        if session:
            opened = await call(client, "open_session")
            assert opened["header"] == "X-Plansmith-Session", opened
            http.headers[opened["header"]] = opened["session"]
        yield client


def _wait_port(port: int, proc: subprocess.Popen[bytes]) -> None:
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the counter server exited"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError("the counter server did not listen")


@pytest.fixture(scope="module")
def counter_url() -> Iterator[str]:
    """The counter test server over streamable HTTP, one process per test module."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(COUNTER), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
