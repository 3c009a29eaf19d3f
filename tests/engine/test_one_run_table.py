"""One run table: runs started from the CLI's API, the web face and the MCP face over
ONE engine (one SQLite run log) are all in ``Engine.list``, each recorded with the
owner and the approver its face names, and each face's own listing agrees."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "mcp"))
sys.path.insert(0, str(Path(__file__).parent.parent / "web"))
import _face_helpers as fh
from _web_helpers import asgi_client, sse_events

from plansmith.cli._person import cli_person
from plansmith.engine import OWNER_KEY, Engine, RunInputs
from plansmith.execution import PlanApproved, RunView

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _approvals(engine: Engine, run_id: str) -> list[tuple[str, str]]:
    events = engine.log.events(run_id)
    return [(e.by, e.approver) for e in events if isinstance(e, PlanApproved)]


async def _web_run(web: Any) -> str:
    """Create a run over HTTP, approve its plan hash, and read its SSE stream to the end."""
    created = await web.post("/api/runs", json={"domain": "docs", "problem": "problem"})
    assert created.status_code == 201, created.text
    run = created.json()
    assert run["status"] == "awaiting approval", run
    approved = await web.post(
        f"/api/runs/{run['run_id']}/approve", json={"plan_hash": run["plan_hash"]}
    )
    assert approved.status_code == 202, approved.text
    stream = await web.get(f"/api/runs/{run['run_id']}/events")  # ends after RunFinished
    assert json.loads(sse_events(stream.text)[-1]["data"])["type"] == "RunFinished"
    run_id: str = run["run_id"]
    return run_id


async def test_runs_of_the_cli_web_and_mcp_faces_share_one_run_table(tmp_path: Path) -> None:
    from mcp import Client

    from plansmith.domains.folders import load_folders
    from plansmith.mcp import FaceService, build_face_server
    from plansmith.web import WebSettings, create_app

    folder = fh.write_domain(tmp_path / "domains")
    engine = Engine(tmp_path / "home")
    app = create_app(engine, WebSettings(home=engine.home, domains=tmp_path / "domains"))
    service = FaceService.on(engine, load_folders([tmp_path / "domains"]))
    inputs = RunInputs(
        folder / "domain.yaml",
        folder / "problem.yaml",
        folder / "servers.json",
        folder / "bindings.yaml",
    )
    with anyio.fail_after(120):
        async with (
            app.router.lifespan_context(app),
            asgi_client(app) as web,
            Client(build_face_server(service, env={})) as client,
        ):
            # (1) as `plansmith run --yes` calls it: no owner, the terminal's person approves
            cli = await engine.run(inputs, approve=True, approver=cli_person())
            assert cli.state == "succeeded"
            web_id = await _web_run(web)  # (2) the web face, over HTTP
            _, mcp_id = await fh.plan_approve_run(client, goal=["indexed(d1)"])  # (3) MCP
            assert (await fh.poll(client, mcp_id))["state"] == "succeeded"

            ids = {"cli": cli.run_id, "web": web_id, "mcp": mcp_id}
            assert len(set(ids.values())) == 3
            listed = engine.list()
            assert [i.run_id for i in listed] == [mcp_id, web_id, cli.run_id]  # newest first
            for run_id in ids.values():
                view = RunView.fold(engine.log.events(run_id), run_id)
                assert view.state == "succeeded", (run_id, view.state)

            owners = {f: str(engine.log.run(r).inputs.get(OWNER_KEY, "")) for f, r in ids.items()}
            approvers = {face: _approvals(engine, r) for face, r in ids.items()}
            print(f"owners: {owners}\napprovers: {approvers}")
            assert owners == {"cli": "", "web": "web", "mcp": "local"}
            for face, owner in owners.items():
                assert [i.run_id for i in engine.list(owner=owner)] == [ids[face]]
            assert approvers == {
                "cli": [("person", cli_person())],
                "web": [("person", "web:127.0.0.1")],  # httpx's ASGI client address
                "mcp": [("person", "mcp:local")],  # the face and its owner
            }

            # each face's listing: the web lists the whole log, MCP only this caller's runs
            web_runs = (await web.get("/api/runs")).json()
            assert [(r["run_id"], r["status"]) for r in web_runs] == [
                (r, "succeeded") for r in (mcp_id, web_id, cli.run_id)
            ]
            mcp_runs = (await fh.call(client, "list_runs"))["runs"]
            assert [(r["run_id"], r["state"]) for r in mcp_runs] == [(mcp_id, "succeeded")]
    engine.close()
