"""Lab throughput: bio_opentrons scenario_6 (612 steps) on the Opentrons simulator over stdio.

In one process and on one robot (three role servers, already started):
  1. plansmith: the bound plan through the Runner (SQLite run log, idempotency keys);
  2. raw: an mcp SDK loop issuing the same tool calls with the same arguments, one by one,
     through its own three ``mcp.Client`` sessions to the same robot;
  passes 1 and 2 alternate three times (best of each is reported);
and, for the ceiling, the same calls straight into the simulated robot (``labrobot.Robot``)
in a lab-venv process, with no MCP at all.
``reset_robot`` gives each pass an empty deck. Cold start: the first pass including
starting the three servers and the robot; warm: a pass with them running.
It also reports the CPU time per call of this process (plansmith or the raw loop) and of
the lab server processes (from /proc): on a shared machine the wall-clock figures move
with the load of other jobs, the CPU figures much less.
Needs .venv-lab (``make lab-venv``). Run: ``.venv/bin/python bench/bench_lab.py``.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

ROUNDS = int(os.environ.get("BENCH_LAB_ROUNDS", "3"))
_SIMULATOR_ALONE = """
import json, os, sys, tempfile, time
os.environ["OT_API_CONFIG_DIR"] = tempfile.mkdtemp()
sys.path.insert(0, sys.argv[1])
from labrobot import Robot
calls = json.load(open(sys.argv[2]))
robot = Robot()
started, cpu = time.perf_counter(), time.process_time()
for n, (tool, args) in enumerate(calls):
    ok, text = robot.answer(tool, args, f"k{n}")
    assert ok, (tool, text)
print(time.perf_counter() - started, time.process_time() - cpu)
"""


def lab_cpu(robot: Path) -> float:
    """CPU seconds used so far by the lab server processes of ``robot`` (from /proc; 0.0
    where there is none). Each pass reads it before and after: the servers' share of a call."""
    total = 0.0
    proc = Path("/proc")
    if not proc.is_dir():
        return total
    tick = os.sysconf("SC_CLK_TCK")
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if str(robot).encode() not in (entry / "cmdline").read_bytes():
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime + stime
    return total


class Cpu:
    """CPU seconds of this process and of the lab servers over one pass."""

    def __init__(self, robot: Path) -> None:
        self.robot = robot
        self.client = 0.0
        self.servers = 0.0

    def __enter__(self) -> Cpu:
        self._client, self._servers = time.process_time(), lab_cpu(self.robot)
        return self

    def __exit__(self, *exc: object) -> None:
        self.client = time.process_time() - self._client
        self.servers = lab_cpu(self.robot) - self._servers


def simulator_alone(
    lab_python: Path, server_dir: Path, calls: object, home: Path
) -> tuple[float, float]:
    """Seconds (wall clock, CPU) for ``calls`` made straight on a simulated robot, in a
    lab-venv process."""
    import json
    import subprocess

    path = home / "calls.json"
    path.write_text(json.dumps([[tool, args] for _, tool, args in calls]))  # type: ignore[attr-defined]
    done = subprocess.run(
        [str(lab_python), "-c", _SIMULATOR_ALONE, str(server_dir), str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    wall, cpu = done.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


async def main() -> int:
    from mcp import Client, StdioServerParameters

    from plansmith.binding import ParamRef, Ref, bind, load_bindings, render
    from plansmith.domains.lab.sim import (
        BIO_BINDINGS,
        LAB_PYTHON,
        REPO_ROOT,
        SERVER_SCRIPT,
        flex_plan,
        lab_venv_problem,
        plan_scenario,
        read_mapping,
        servers_config,
    )
    from plansmith.execution import (
        Emitter,
        PlanApproved,
        PlanReady,
        RunCreated,
        Runner,
        SqliteRunLog,
        bound_to_dict,
        fold,
    )
    from plansmith.model import JSONValue
    from plansmith.servers import McpInvoker, ServerPool, parse_servers

    problem = lab_venv_problem()
    if problem is not None:
        print(f"skipped: {problem} (make lab-venv)")
        return 0
    home = Path(tempfile.mkdtemp(prefix="bench-lab-"))
    robot = home / "robot"
    plan, py_domain = plan_scenario("scenario_6")
    mapped, domain = flex_plan(plan, py_domain, read_mapping(BIO_BINDINGS))
    bindings = load_bindings(BIO_BINDINGS)
    config_dict = servers_config(robot)
    import json

    config = parse_servers(json.dumps(config_dict))
    log = SqliteRunLog(home / "runs.db")

    cpu: dict[str, list[Cpu]] = {"plansmith": [], "raw": []}

    async def plansmith_pass(pool: ServerPool, catalog: object, n: int) -> float:
        run_id = f"bench-{n}"
        bound = bind(mapped, domain, bindings, catalog, env=os.environ)  # type: ignore[arg-type]
        log.create_run(run_id, "", {})
        emitter = Emitter(log, run_id)
        emitter.emit(RunCreated(run_id=run_id))
        emitter.emit(PlanReady(run_id=run_id, plan_hash=mapped.hash, bound=bound_to_dict(bound)))
        emitter.emit(PlanApproved(run_id=run_id, plan_hash=mapped.hash, by="bench"))
        runner = Runner(
            McpInvoker(pool), log, fold(run_id, log.events(run_id)), max_parallel=1, emitter=emitter
        )
        with Cpu(robot) as used:
            started = time.perf_counter()
            outcome = await runner.run()
            elapsed = time.perf_counter() - started
        assert outcome.state == "succeeded", outcome.reason
        if n:
            cpu["plansmith"].append(used)
        return elapsed

    started = time.perf_counter()
    async with ServerPool(config) as pool:
        catalog = await pool.start()
        bound = bind(mapped, domain, bindings, catalog, env=os.environ)
        cold_pass = await plansmith_pass(pool, catalog, 0)
        cold = time.perf_counter() - started
        calls: list[tuple[str, str, dict[str, Any]]] = []
        for step in bound.steps:
            params: dict[str, JSONValue] = dict(step.params)

            def value(ref: Ref, params: dict[str, JSONValue] = params) -> JSONValue:
                assert isinstance(ref, ParamRef)
                return params[ref.name]

            arguments = render(step.arguments, value)
            assert isinstance(arguments, dict)
            calls.append((step.server, step.tool, arguments))
        stdio = {
            role: StdioServerParameters(
                command=str(LAB_PYTHON),
                args=[str(SERVER_SCRIPT), "--role", role, "--robot", str(robot)],
                cwd=str(REPO_ROOT),
            )
            for role in ("movement", "liquid", "modules")
        }
        warm: list[float] = []
        raw: list[float] = []
        async with (
            Client(stdio["movement"]) as movement,
            Client(stdio["liquid"]) as liquid,
            Client(stdio["modules"]) as modules,
        ):
            clients = {"movement": movement, "liquid": liquid, "modules": modules}
            for c in clients.values():
                await c.list_tools()
            for rounds in range(ROUNDS):  # interleaved: the machine's load hits both alike
                await pool.call("movement", "reset_robot", {})
                warm.append(await plansmith_pass(pool, catalog, rounds + 1))
                await pool.call("movement", "reset_robot", {})
                with Cpu(robot) as used:
                    t0 = time.perf_counter()
                    for n, (server, tool, arguments) in enumerate(calls):
                        meta: Any = {"io.plansmith/idempotency-key": f"raw/{rounds}/{n}"}
                        result = await clients[server].call_tool(tool, arguments, meta=meta)
                        assert not result.is_error, (tool, result.content)
                    raw.append(time.perf_counter() - t0)
                cpu["raw"].append(used)
    log.close()
    alone, alone_cpu = simulator_alone(LAB_PYTHON, SERVER_SCRIPT.parent / "labserver", calls, home)
    steps = len(calls)
    best, best_raw = min(warm), min(raw)
    print(f"scenario_6: {steps} steps, one at a time over stdio, 3 role servers, one robot")
    print(
        f"cold start (start 3 servers + robot, then run): {cold:.2f} s "
        f"(of which the run {cold_pass:.2f} s, {steps / cold_pass:.0f} actions/s)"
    )
    print(
        f"plansmith warm: {', '.join(f'{t:.2f}' for t in warm)} s -> "
        f"{steps / best:.0f} actions/s (best of {ROUNDS})"
    )
    print(
        f"raw mcp SDK loop: {', '.join(f'{t:.2f}' for t in raw)} s -> "
        f"{steps / best_raw:.0f} actions/s (best of {ROUNDS})"
    )
    print(
        f"simulator alone (no MCP, in process): {alone:.2f} s -> {steps / alone:.0f} calls/s; "
        f"CPU {alone_cpu / steps * 1000:.2f} ms per call"
    )
    for who, passes in cpu.items():
        client = min(p.client for p in passes) / steps * 1000
        servers = min(p.servers for p in passes) / steps * 1000
        print(
            f"CPU per call, {who} pass (least of {len(passes)}): this process {client:.2f} ms, "
            f"lab servers {servers:.2f} ms -> {1000 / (client + servers):.0f} calls/s "
            "if nothing else ran"
        )
    ratio = best_raw / best
    print(
        f"plansmith / raw throughput: {ratio:.2f}x best against best, "
        f"{statistics.median(raw) / statistics.median(warm):.2f}x median against median "
        f"(target >= 0.8x); vs the paper's 16.5 actions/s: {steps / best / 16.5:.1f}x "
        "(target >= 15x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
