"""Who owns a run on the MCP face over streamable HTTP (issue 27, defect 3).

The face and a gate tool server run in this event loop (uvicorn on 127.0.0.1); the
clients are the SDK's own. A run's one step waits at the gate, so it is in flight
while a stranger tries to list, read and cancel it.
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
GOAL = {"goal": ["summarised(d1)"]}  # one step: ``work`` at the gate


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Gate:
    """A tool server whose ``work`` waits until ``opened``; ``arrived`` is set by a call."""

    def __init__(self) -> None:
        self.opened, self.arrived = anyio.Event(), anyio.Event()

    def server(self) -> Any:
        from mcp.server.mcpserver import MCPServer

        server = MCPServer("gate", log_level="WARNING")

        @server.tool()
        async def work(name: str) -> dict[str, Any]:
            self.arrived.set()
            await self.opened.wait()
            return {"done": f"{name}!"}

        @server.tool()
        async def echo(x: Any) -> dict[str, Any]:
            return {"value": x}

        return server


@contextlib.asynccontextmanager
async def _face(tmp: Path, gate: Gate, **options: Any) -> AsyncIterator[tuple[str, Any]]:
    """The face over HTTP (its URL) and its service, over a gate server."""
    from plansmith.mcp import build_face_server

    async with fh.serving(gate.server().streamable_http_app()) as gate_port:
        service = fh.make_service(tmp, url=f"http://127.0.0.1:{gate_port}/mcp", **options)
        try:
            async with fh.serving(build_face_server(service, env={}).streamable_http_app()) as port:
                yield f"http://127.0.0.1:{port}/mcp", service
        finally:
            gate.opened.set()


async def _start(client: Any) -> str:
    _, run_id = await fh.plan_approve_run(client, **GOAL)
    return run_id


async def _refused_everywhere(client: Any, run_id: str, expected: str) -> None:
    """``client`` cannot list, read (tools and resource) or cancel ``run_id``."""
    listed = await client.call_tool("list_runs", {})
    if listed.is_error:
        assert expected in listed.content[0].text
    else:
        assert listed.structured_content["runs"] == []
    for tool in ("get_run_status", "get_run_report", "cancel_run"):
        assert expected in await fh.error_text(client, tool, {"run_id": run_id}), tool
    with pytest.raises(Exception, match=expected):
        await client.read_resource(f"plansmith://runs/{run_id}")


async def test_two_header_less_http_clients_cannot_see_read_or_cancel_each_others_runs(
    tmp_path: Path,
) -> None:
    from mcp import Client

    gate = Gate()
    async with _face(tmp_path, gate) as (url, service):
        with anyio.fail_after(120):
            async with Client(url) as a, Client(url) as b:  # the SDK's default: no headers
                plan = await fh.call(a, "make_plan", {"domain": "docs", **GOAL})
                await fh.call(a, "approve_plan", {"plan_hash": plan["plan_hash"]})
                refused = await fh.error_text(a, "start_run", {"plan_hash": plan["plan_hash"]})
                assert "InputError" in refused
                assert "needs an owner" in refused
                assert "open_session" in refused
                assert "--share-runs" in refused
                assert "needs an owner" in await fh.error_text(b, "list_runs", {})
                # its plan's run was made, approved and is held: nobody can start it
                held = service.list_runs(owner="anonymous").runs
                assert [r.state for r in held] == ["approved"]

            # the same two clients, each with the session the server issued it
            async with (
                fh.http_client(url, session=True) as a,
                fh.http_client(url, session=True) as b,
            ):
                run_id = await _start(a)
                await gate.arrived.wait()  # the run is in flight
                async with Client(url) as stranger:
                    await _refused_everywhere(stranger, run_id, "needs an owner")
                await _refused_everywhere(b, run_id, "RunNotFoundError")
                assert (await fh.call(a, "get_run_status", {"run_id": run_id}))["state"] in (
                    "starting",
                    "running",
                )
                gate.opened.set()
                status = await fh.poll(a, run_id)
                assert status["state"] == "succeeded"  # nobody else cancelled it
                assert [r["run_id"] for r in (await fh.call(a, "list_runs"))["runs"]] == [run_id]


async def test_session_values_the_server_did_not_issue_are_refused(tmp_path: Path) -> None:
    from plansmith.mcp._owner import Owners

    gate = Gate()
    gate.opened.set()
    async with _face(tmp_path, gate) as (url, _):
        with anyio.fail_after(120):
            async with fh.http_client(url) as owner:
                issued = (await fh.call(owner, "open_session"))["session"]
            session_id, _, mac = issued.partition(".")
            assert len(session_id) >= 32  # a random id
            assert len(mac) >= 32  # and a 128-bit MAC
            async with fh.http_client(url, {"X-Plansmith-Session": issued}) as owner:
                run_id = await _start(owner)
                await fh.poll(owner, run_id)
            claims = [
                "alice",  # a chosen name, as before: it named a session anybody could claim
                session_id,  # the id without its MAC
                f"{session_id}.{'0' * len(mac)}",  # a forged MAC
                Owners().issue(),  # issued by another server (another secret)
            ]
            for value in claims:
                async with fh.http_client(url, {"X-Plansmith-Session": value}) as claimer:
                    await _refused_everywhere(claimer, run_id, "not a session this server issued")
            # a 2026-07-28 request goes through no session manager: its Mcp-Session-Id is
            # the client's say-so, not an identity
            async with fh.http_client(url, {"Mcp-Session-Id": session_id}) as claimer:
                await _refused_everywhere(claimer, run_id, "needs an owner")
            async with fh.http_client(url, {"X-Plansmith-Session": issued}) as owner:
                assert (await fh.call(owner, "get_run_status", {"run_id": run_id}))[
                    "state"
                ] == "succeeded"


async def test_an_authorization_header_owns_runs_by_its_value(tmp_path: Path) -> None:
    gate = Gate()
    async with _face(tmp_path, gate) as (url, _):
        with anyio.fail_after(120):
            token = {"Authorization": "Bearer team-secret"}
            async with (
                fh.http_client(url, token) as a,
                fh.http_client(url, token) as a2,
                fh.http_client(url, {"Authorization": "Bearer other"}) as b,
            ):
                run_id = await _start(a)
                await gate.arrived.wait()
                await _refused_everywhere(b, run_id, "RunNotFoundError")
                listed = (await fh.call(a2, "list_runs"))["runs"]
                assert [r["run_id"] for r in listed] == [run_id]  # same token, same owner
                cancelled = await fh.call(a2, "cancel_run", {"run_id": run_id})
                assert cancelled["state"] == "cancelled"


async def test_with_share_runs_header_less_clients_share_every_run(tmp_path: Path) -> None:
    from mcp import Client

    gate = Gate()
    async with _face(tmp_path, gate, share_runs=True) as (url, _):
        with anyio.fail_after(120):
            async with Client(url) as a, Client(url) as b, fh.http_client(url, session=True) as c:
                run_id = await _start(a)
                await gate.arrived.wait()
                assert [r["run_id"] for r in (await fh.call(b, "list_runs"))["runs"]] == [run_id]
                assert (await fh.call(c, "get_run_status", {"run_id": run_id}))["run_id"] == run_id
                assert (await fh.call(b, "cancel_run", {"run_id": run_id}))["state"] == "cancelled"
                report = await fh.call(a, "get_run_report", {"run_id": run_id})
                assert report["report"]["state"] == "cancelled"
