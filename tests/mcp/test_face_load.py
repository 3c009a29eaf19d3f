"""Fifty concurrent runs over streamable HTTP from five client sessions.

The face and a gate tool server run in this event loop (uvicorn on 127.0.0.1). Every
run's first step waits at the gate, so all fifty are in flight together: the next one
is refused as busy, and each session sees only its own runs. Then the gate opens.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import _face_helpers as fh
import anyio
import pytest

pytestmark = pytest.mark.anyio
SESSIONS = 5
RUNS_PER_SESSION = 10


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _gate_server(gate: anyio.Event, arrived: list[str]) -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("gate", log_level="WARNING")

    @server.tool()
    async def work(name: str) -> dict[str, Any]:
        arrived.append(name)
        await gate.wait()
        return {"done": f"{name}!"}

    @server.tool()
    async def echo(x: Any) -> dict[str, Any]:
        return {"value": x}

    return server


@contextlib.asynccontextmanager
async def _session(url: str, name: str, issued: dict[str, str]) -> AsyncIterator[Any]:
    """A 2026-07-28 client session (no MCP session id): the plansmith header, with the
    value the server issued for ``name`` (``open_session`` on its first use; ``issued``
    keeps the values by name)."""
    if name not in issued:
        async with fh.http_client(url) as client:
            issued[name] = (await fh.call(client, "open_session"))["session"]
    async with fh.http_client(url, {"X-Plansmith-Session": issued[name]}) as client:
        yield client


async def test_fifty_runs_from_five_sessions_are_isolated_and_the_next_is_busy(
    tmp_path: Path,
) -> None:
    from plansmith.mcp import build_face_server

    gate, arrived = anyio.Event(), []
    async with fh.serving(_gate_server(gate, arrived).streamable_http_app()) as gate_port:
        service = fh.make_service(
            tmp_path, url=f"http://127.0.0.1:{gate_port}/mcp", max_runs=SESSIONS * RUNS_PER_SESSION
        )
        face = build_face_server(service, env={})
        async with fh.serving(face.streamable_http_app()) as port:
            url = f"http://127.0.0.1:{port}/mcp"
            runs: dict[str, list[str]] = {}
            issued: dict[str, str] = {}
            async with anyio.create_task_group() as tg:

                async def start(name: str) -> None:
                    async with _session(url, name, issued) as client:
                        runs[name] = [
                            (await fh.plan_approve_run(client, goal=["indexed(d1)"]))[1]
                            for _ in range(RUNS_PER_SESSION)
                        ]

                for k in range(SESSIONS):
                    tg.start_soon(start, f"s{k}")
            assert sum(len(v) for v in runs.values()) == 50

            async with _session(url, "s0", issued) as s0, _session(url, "s1", issued) as s1:
                args = {"domain": "docs", "goal": ["indexed(d1)"]}
                plan = await fh.call(s0, "make_plan", args)  # made and held: no run in flight
                await fh.call(s0, "approve_plan", {"plan_hash": plan["plan_hash"]})
                busy = await fh.error_text(s0, "start_run", {"plan_hash": plan["plan_hash"]})
                assert "BusyError" in busy
                assert "retry later" in busy
                mine = await fh.call(s0, "list_runs")
                assert sorted(r["run_id"] for r in mine["runs"]) == sorted(
                    [*runs["s0"], plan["run_id"]]  # and the run held for its approval
                )
                theirs = runs["s1"][0]
                for tool in ("get_run_status", "get_run_report", "cancel_run"):
                    text = await fh.error_text(s0, tool, {"run_id": theirs})
                    assert "RunNotFoundError" in text
                with pytest.raises(Exception, match="RunNotFoundError"):
                    await s0.read_resource(f"plansmith://runs/{theirs}")
                assert (await fh.call(s1, "get_run_status", {"run_id": theirs}))["run_id"] == theirs

                gate.set()
                for name, ids in runs.items():
                    async with _session(url, name, issued) as client:
                        for run_id in ids:
                            status = await fh.poll(client, run_id)
                            assert (status["state"], status["done"]) == ("succeeded", 2)
                await fh.call(s0, "start_run", {"plan_hash": plan["plan_hash"]})  # room again
    assert len(arrived) >= 50


async def test_legacy_http_sessions_are_told_apart_by_their_mcp_session_id(
    tmp_path: Path,
) -> None:
    from mcp import Client

    from plansmith.mcp import build_face_server

    gate, arrived = anyio.Event(), []
    gate.set()
    async with fh.serving(_gate_server(gate, arrived).streamable_http_app()) as gate_port:
        service = fh.make_service(tmp_path, url=f"http://127.0.0.1:{gate_port}/mcp")
        async with fh.serving(build_face_server(service, env={}).streamable_http_app()) as port:
            url = f"http://127.0.0.1:{port}/mcp"
            async with Client(url, mode="legacy") as a, Client(url, mode="legacy") as b:
                _, run_id = await fh.plan_approve_run(a, goal=["summarised(d1)"])
                await fh.poll(a, run_id)
                assert (await fh.call(b, "list_runs"))["runs"] == []
                assert "RunNotFoundError" in await fh.error_text(
                    b, "get_run_report", {"run_id": run_id}
                )
