"""An engine whose tool servers are kept warm (``WarmPools``, as ``plansmith serve`` and
``plansmith mcp`` make it): runs, binding checks and the MCP face's flows, with every
server start counted."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "mcp"))
import _face_helpers as fh
from _engine_helpers import write_inputs

from _shared_servers import docs_domain, problem_text, servers_json
from plansmith.engine import Engine, RunInputs
from plansmith.execution import Event, RunFinished
from plansmith.servers import WarmPools, load_servers

pytestmark = pytest.mark.anyio

WARM = Path(__file__).parent.parent / "servers" / "_servers" / "warm_server.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def started(starts: Path) -> list[int]:
    return [int(line) for line in starts.read_text().split()] if starts.exists() else []


@asynccontextmanager
async def warm_engine(home: Path, **options: Any) -> AsyncIterator[Engine]:
    """An engine whose pool factory keeps its servers warm; they stop at the end."""
    warm = WarmPools(home / "servers.log", **options)
    try:
        with Engine(home, pool_factory=warm.factory) as engine:
            yield engine
    finally:
        with anyio.fail_after(60):
            await warm.aclose()


async def test_a_check_and_two_runs_start_the_server_once(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    inputs = write_inputs(tmp_path, n=2, COUNTER_STARTS=str(starts))
    async with warm_engine(tmp_path / "home") as engine:
        with anyio.fail_after(120):
            await engine.check(inputs)
            first = await engine.run(inputs, approve=True)
            second = await engine.run(inputs, approve=True)
    assert (first.state, second.state) == ("succeeded", "succeeded")
    assert len(started(starts)) == 1
    run_log = (tmp_path / "home" / "runs" / second.run_id / "servers.log").read_text()
    assert "[plansmith] server 'counter' is kept warm" in run_log


async def test_with_an_idle_timeout_of_zero_each_run_starts_its_server(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    inputs = write_inputs(tmp_path, n=1, COUNTER_STARTS=str(starts))
    async with warm_engine(tmp_path / "home", idle_timeout=0) as engine:
        with anyio.fail_after(120):
            for _ in range(2):
                assert (await engine.run(inputs, approve=True)).state == "succeeded"
    assert len(started(starts)) == 2


HOLD_BINDINGS = """\
bindings:
  summarise:
    server: warm
    tool: hold
    arguments: {seconds: 0.2, name: "${d}"}
    outputs: {done: "$.structured.name"}
  index:
    server: warm
    tool: hold
    arguments: {seconds: 0.2, name: "${summarise(d).done}"}
"""


def hold_inputs(folder: Path, starts: Path) -> RunInputs:
    """Four documents summarised then indexed, each step a ``hold`` of the warm server,
    which allows 2 calls in flight."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "domain.yaml").write_text(docs_domain())
    (folder / "problem.yaml").write_text(problem_text(4))
    (folder / "bindings.yaml").write_text(HOLD_BINDINGS)
    server = {
        "command": sys.executable,
        "args": [str(WARM)],
        "env": {"WARM_STARTS": str(starts)},
        "maxInFlight": 2,
    }
    (folder / "servers.json").write_text(json.dumps({"mcpServers": {"warm": server}}))
    return RunInputs(
        folder / "domain.yaml",
        folder / "problem.yaml",
        folder / "servers.json",
        folder / "bindings.yaml",
    )


async def test_max_in_flight_holds_across_two_runs_at_once(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    inputs = hold_inputs(tmp_path / "in", starts)
    seen: dict[str, list[Event]] = {"a": [], "b": []}
    both: list[tuple[str, str]] = []  # (run, event type) as the events of both came
    async with warm_engine(tmp_path / "home") as engine:

        async def run(name: str) -> None:
            def on_event(event: Event) -> None:
                seen[name].append(event)
                both.append((name, event.type))

            await engine.run(inputs, approve=True, run_id=f"r-{name}", subscribe=on_event)

        with anyio.fail_after(120):
            async with anyio.create_task_group() as tg:
                for name in seen:
                    tg.start_soon(run, name)
            async with engine.open_pool(load_servers(inputs.servers)) as pool:
                await pool.start()
                peak = await pool.call("warm", "peak", {})
    for events in seen.values():
        assert isinstance(events[-1], RunFinished)
        assert events[-1].state == "succeeded"
    # the two runs overlapped: each started before the other finished
    assert both.index(("a", "RunStarted")) < both.index(("b", "RunFinished"))
    assert both.index(("b", "RunStarted")) < both.index(("a", "RunFinished"))
    assert peak.structured == {"peak": 2}  # each run alone may have 2 in flight: not 4
    assert len(started(starts)) == 1


async def test_the_mcp_face_plans_each_run_once_and_starts_each_server_once(
    tmp_path: Path,
) -> None:
    """Counted, not claimed: three ``make_plan`` / ``approve_plan`` / ``start_run`` flows
    through one warm face call the engine's planner three times (once per run: the run
    is made at ``make_plan``, ``start_run`` goes on with it) and start the tool server
    once in all (``make_plan``'s binding, each run, the next check share it)."""
    from mcp import Client

    from plansmith.domains.folders import load_folders
    from plansmith.engine import make_plan
    from plansmith.mcp import FaceService, build_face_server

    planned: list[str] = []

    def counting_planner(problem: Any, **options: Any) -> Any:
        plan = make_plan(problem, **options)
        planned.append(plan.hash)
        return plan

    starts = tmp_path / "starts"
    folder = fh.write_domain(tmp_path / "domains")
    (folder / "servers.json").write_text(servers_json(env={"COUNTER_STARTS": str(starts)}))
    warm = WarmPools(tmp_path / "home" / "servers.log")
    engine = Engine(tmp_path / "home", pool_factory=warm.factory, planner=counting_planner)
    service = FaceService.on(engine, load_folders([tmp_path / "domains"]))

    async def on_exit() -> None:  # as ``plansmith mcp`` does (the service closes its runs)
        await warm.aclose()

    face = build_face_server(service, env={}, on_exit=on_exit)
    flows = []
    with anyio.fail_after(120):
        async with Client(face) as client:
            for k in range(3):
                plan, run_id = await fh.plan_approve_run(client, goal=[f"indexed(d{k})"])
                assert plan["binding"]["ok"], plan["binding"]
                assert run_id == plan["run_id"]  # the run make_plan made
                status = await fh.poll(client, run_id)
                flows.append((status["state"], status["plan_hash"] == plan["plan_hash"]))
                assert (len(planned), len(started(starts))) == (k + 1, 1)
    engine.close()
    assert flows == [("succeeded", True)] * 3
    assert len(planned) == 3  # one planning per run
    assert len(started(starts)) == 1  # one start of the server per warm face
    assert warm.running == ()  # the face's exit stopped it
