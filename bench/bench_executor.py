"""Executor overhead: a raw MCP SDK loop against plansmith's runner, in the same run.

Scenarios (each the same tool calls, ``echo(x=7)`` of the raw baseline's server,
bench/mcp_raw/echo_server.py):
  chain-inmem   1000-step chain, server in process (``Client(server)``)
  chain-stdio   1000-step chain, one stdio server
  wide-stdio4   1000 independent steps over 4 stdio servers, 8 in flight (raw: batches of 8)
  log           chain-inmem and chain-stdio with the durable SQLite log on vs off
  parallel      8 independent steps whose tool sleeps 200 ms, vs one such step
  --resume      a 200-step run (100 documents: summarise, then index) over the test
                server, its engine killed with SIGKILL at 20 random points and resumed
                each time; checks that no finished step is called again, that every
                repeated call carries the same key, and that the outputs equal those
                of an uninterrupted run; then replays the run's record part by part.
                Twice: with a view subscribed (the engine prints each event) and with
                none (each step's start is durable before its call either way)

  --long        a 20 000-step chain over a fake invoker (one event-loop turn a call), the
                heap frozen for the collector during the run (the runner's default) against
                not frozen, interleaved: what full collections cost a long run

  --floor       the floor under the in-memory chain: a bare loop that does only what the
                issue asks of each step (a key in ``_meta``, a start and an end record with
                the output taken from the result; with the log on, both records as JSON
                in one append to a journal before the next call, and into SQLite in
                batches of 256), against the raw loop and plansmith, interleaved

  --parts       each part of a step's CPU alone: the SDK call and pool.call in memory,
                the output check of a result by the SDK (python-jsonschema) and by the pool
                (jsonschema-rs),
                the runner over a fake invoker (memory and SQLite log), event JSON,
                an event's construction, and a SQLite commit of a step's two events

Usage: .venv/bin/python bench/bench_executor.py [--n 1000] [--reps 9] [--resume | --parts]
Prints one table of medians over the interleaved repetitions; ratios are plansmith calls/s
over raw calls/s (>= 0.85 is the target), log-on time over log-off time (<= 1.10), and
8-step time over 1-step time (<= 1.11). Then each ratio's range over the repetitions (one
repetition: raw, log off and log on back to back) and whether each median meets its target.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer

from plansmith.binding import BoundPlan, ToolCatalog, bind, parse_bindings
from plansmith.execution import (
    Emitter,
    Event,
    MemoryRunLog,
    PlanReady,
    RunLog,
    Runner,
    SqliteRunLog,
    bound_to_dict,
    fold,
    step_histories,
)
from plansmith.model import ActionSchema, Domain, JSONValue, Plan, Step, Tier, TypedName
from plansmith.servers import (
    InProcessServer,
    McpInvoker,
    ServerPool,
    ServersConfig,
    StdioServer,
)

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "bench" / "mcp_raw"
ECHO = RAW / "echo_server.py"
WARMUP = 50

DOMAIN = Domain(
    "bench",
    actions=(
        *(ActionSchema(f"e{k}", (TypedName("x"),), tier=Tier.READ) for k in range(4)),
        ActionSchema("nap", (TypedName("x"),), tier=Tier.READ),
    ),
)
BINDINGS = parse_bindings(
    "bindings:\n"
    + "".join(
        f"  e{k}: {{server: s{k}, tool: echo, arguments: {{x: 7}},"
        f" outputs: {{v: '$.structured.result'}}}}\n"
        for k in range(4)
    )
    + "  nap: {server: s0, tool: nap, arguments: {seconds: 0.2}}\n"
)


def make_plan(n: int, *, chain: bool, servers: int = 1, action: str | None = None) -> Plan:
    steps = []
    for i in range(n):
        act = action or f"e{i % servers}"
        after = (f"s{i - 1}",) if chain and i else ()
        steps.append(Step(f"s{i}", act, (f"o{i}",), after=after))
    return Plan("bench", "bench", "sha256:d", "sha256:p", tuple(steps))


def echo_server() -> MCPServer:
    sys.path.insert(0, str(RAW))
    import echo_server as module

    server: MCPServer = module.mcp
    return server


def nap_server() -> MCPServer:
    server = MCPServer("nap", log_level="WARNING")

    @server.tool()
    async def nap(seconds: float) -> float:
        await anyio.sleep(seconds)
        return seconds

    return server


def stdio_params() -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(ECHO)])


Timing = tuple[float, float]  # wall seconds, CPU seconds of this process


def clock() -> Timing:
    return time.perf_counter(), time.process_time()


def since(t0: Timing) -> Timing:
    wall, cpu = clock()
    return wall - t0[0], cpu - t0[1]


async def raw_chain(client: Client, n: int) -> Timing:
    await client.list_tools()
    for _ in range(WARMUP):
        await client.call_tool("echo", {"x": 7})
    t0 = clock()
    for _ in range(n):
        r = await client.call_tool("echo", {"x": 7})
        assert not r.is_error
    return since(t0)


async def raw_wide(clients: list[Client], n: int, width: int = 8) -> Timing:
    for c in clients:
        await c.list_tools()
        for _ in range(WARMUP):
            await c.call_tool("echo", {"x": 7})
    t0 = clock()
    for start in range(0, n, width):
        async with anyio.create_task_group() as tg:
            for j in range(min(width, n - start)):
                tg.start_soon(clients[(start + j) % len(clients)].call_tool, "echo", {"x": 7})
    return since(t0)


async def plansmith_run(pool: ServerPool, bound: BoundPlan, log: RunLog, parallel: int) -> Timing:
    run_id = f"bench-{time.perf_counter_ns()}"
    log.create_run(run_id, "", {})
    Emitter(log, run_id).emit(
        PlanReady(run_id=run_id, plan_hash=bound.plan_hash, bound=bound_to_dict(bound))
    )
    runner = Runner(McpInvoker(pool), log, fold(run_id, log.events(run_id)), max_parallel=parallel)
    t0 = clock()
    outcome = await runner.run()
    elapsed = since(t0)
    assert outcome.state == "succeeded", outcome.reason
    return elapsed


async def warm(pool: ServerPool, names: list[str]) -> None:
    for name in names:
        for _ in range(WARMUP):
            await pool.call(name, "echo", {"x": 7})


def bound_for(plan: Plan, catalog: ToolCatalog) -> BoundPlan:
    return bind(plan, DOMAIN, BINDINGS, catalog, env={})


async def scenario(
    name: str,
    config: ServersConfig,
    plan: Plan,
    parallel: int,
    raw: Callable[[], Awaitable[Timing]],
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = SqliteRunLog(Path(tmp) / "runs.db")
        async with ServerPool(config) as pool:
            catalog = await pool.start()
            await warm(pool, list(config.names))
            bound = bound_for(plan, catalog)
            rows: dict[str, list[Timing]] = {"raw": [], "off": [], "on": []}
            for _ in range(ARGS.reps):  # interleaved repetitions
                rows["raw"].append(await raw())
                rows["off"].append(await plansmith_run(pool, bound, MemoryRunLog(), parallel))
                rows["on"].append(await plansmith_run(pool, bound, sqlite, parallel))
        sqlite.close()
    n = len(plan.steps)
    walls = {k: [w for w, _ in v] for k, v in rows.items()}
    med = {k: statistics.median(v) for k, v in walls.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in rows.items()}
    return {
        "cpu_us": {k: v / n * 1e6 for k, v in cpu.items()},
        "cpu_ratio_off": cpu["raw"] / cpu["off"],
        "cpu_on_over_off": cpu["on"] / cpu["off"],
        "scenario": name,
        "n": n,
        "raw_calls_s": n / med["raw"],
        "off_calls_s": n / med["off"],
        "on_calls_s": n / med["on"],
        "ratio_off": med["raw"] / med["off"],
        "ratio_on": med["raw"] / med["on"],
        "log_on_over_off": med["on"] / med["off"],
        # each repetition's own ratios (its raw, off and on runs were back to back)
        "reps_ratio_off": [r / o for r, o in zip(walls["raw"], walls["off"], strict=True)],
        "reps_on_over_off": [a / o for a, o in zip(walls["on"], walls["off"], strict=True)],
    }


async def parallel_speedup() -> dict[str, Any]:
    config = ServersConfig((InProcessServer("s0", nap_server()),))
    async with ServerPool(config) as pool:
        catalog = await pool.start()
        one = bound_for(make_plan(1, chain=False, action="nap"), catalog)
        eight = bound_for(make_plan(8, chain=False, action="nap"), catalog)
        t1 = statistics.median(
            [(await plansmith_run(pool, one, MemoryRunLog(), 8))[0] for _ in range(3)]
        )
        t8 = statistics.median(
            [(await plansmith_run(pool, eight, MemoryRunLog(), 8))[0] for _ in range(3)]
        )
    return {"one_s": t1, "eight_s": t8, "ratio": t8 / t1, "of_ideal": t1 / t8}


async def main() -> None:
    n = ARGS.n
    load_before = os.getloadavg()[0]
    results = []
    server = echo_server()
    async with Client(server) as client:

        async def raw_inmem() -> Timing:
            return await raw_chain(client, n)

        config = ServersConfig((InProcessServer("s0", server),))
        results.append(
            await scenario("chain-inmem", config, make_plan(n, chain=True), 8, raw_inmem)
        )
    async with Client(stdio_params()) as client:

        async def raw_stdio() -> Timing:
            return await raw_chain(client, n)

        config = ServersConfig((StdioServer("s0", sys.executable, (str(ECHO),)),))
        results.append(
            await scenario("chain-stdio", config, make_plan(n, chain=True), 8, raw_stdio)
        )
    clients = [Client(stdio_params()) for _ in range(4)]
    for c in clients:
        await c.__aenter__()
    try:

        async def raw_wide4() -> Timing:
            return await raw_wide(clients, n)

        config = ServersConfig(
            tuple(StdioServer(f"s{k}", sys.executable, (str(ECHO),)) for k in range(4))
        )
        plan = make_plan(n, chain=False, servers=4)
        results.append(await scenario("wide-stdio4", config, plan, 8, raw_wide4))
    finally:
        for c in reversed(clients):
            await c.__aexit__(None, None, None)
    speed = await parallel_speedup()
    print(f"plansmith build: {build()}\n")
    print(
        "| scenario | steps | raw calls/s | plansmith log off | log on "
        "| ratio off | ratio on | on/off |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['scenario']} | {r['n']} | {r['raw_calls_s']:.0f} | {r['off_calls_s']:.0f} "
            f"| {r['on_calls_s']:.0f} | {r['ratio_off']:.3f} | {r['ratio_on']:.3f} "
            f"| {r['log_on_over_off']:.3f} |"
        )
    print("\nCPU of the engine process per step (us): raw, plansmith log off, log on")
    for r in results:
        c = r["cpu_us"]
        print(
            f"  {r['scenario']}: {c['raw']:.0f}, {c['off']:.0f}, {c['on']:.0f}"
            f"  (raw/off {r['cpu_ratio_off']:.2f}, on/off {r['cpu_on_over_off']:.2f})"
        )
    print(
        f"\nload average (1 min): {load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at"
        " the end (other work on this machine slows the engine's CPU, not only its wall time)"
    )
    print(
        f"parallel: 1 step {speed['one_s'] * 1000:.0f} ms, "
        f"8 steps {speed['eight_s'] * 1000:.0f} ms,"
        f" ratio {speed['ratio']:.3f} ({speed['of_ideal']:.2f} of ideal)"
    )
    print(f"\nover the {ARGS.reps} repetitions (lowest, median, highest), and the targets:")
    for r in results:
        print(
            f"  {r['scenario']}: plansmith / raw {spread(r['reps_ratio_off'])},"
            f" log on / off {spread(r['reps_on_over_off'])}"
        )
    for label, ok in targets(results, speed):
        print(f"  {'met   ' if ok else 'MISSED'} {label}")


def spread(values: list[float]) -> str:
    return f"{min(values):.3f} {statistics.median(values):.3f} {max(values):.3f}"


def targets(results: list[dict[str, Any]], speed: dict[str, Any]) -> list[tuple[str, bool]]:
    """Each of the issue's figures, as a median, against its target."""
    checks = []
    for r in results:
        name = r["scenario"]
        checks.append(
            (f"{name}: plansmith / raw {r['ratio_off']:.3f} >= 0.85", r["ratio_off"] >= 0.85)
        )
        checks.append(
            (
                f"{name}: log on / off {r['log_on_over_off']:.3f} <= 1.10",
                r["log_on_over_off"] <= 1.10,
            )
        )
    checks.append(
        (f"parallel: 8 steps / 1 step {speed['ratio']:.3f} <= 1.11", speed["ratio"] <= 1.11)
    )
    return checks


def build() -> str:
    """Which build of plansmith this process runs: compiled (``make compiled``) or not."""
    from plansmith.execution import _runner

    compiled = (_runner.__file__ or "").endswith(".so")
    return f"compiled (mypyc, {sys.prefix})" if compiled else f"pure Python ({sys.prefix})"


def _cpu_us(fn: Callable[[], object], count: int) -> float:
    t0 = time.process_time()
    for _ in range(count):
        fn()
    return (time.process_time() - t0) / count * 1e6


async def parts(n: int = 2000, reps: int = 5) -> None:
    """Where a step's CPU goes, each part alone (medians of ``reps`` interleaved runs)."""
    import json

    from plansmith.execution import FakeInvoker, StepSucceeded, ToolCall, ToolResult
    from plansmith.execution._event_fast import event_json, step_started, step_succeeded
    from plansmith.servers._output_check import OutputChecks

    rows: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        rows.setdefault(name, []).append(value)

    server = echo_server()
    answer = ToolResult({"result": 7}, "7")

    async def at_once(call: ToolCall) -> ToolResult:
        await anyio.lowlevel.checkpoint()
        return answer

    async with (
        Client(server) as client,
        ServerPool(ServersConfig((InProcessServer("s0", server),))) as pool,
    ):
        catalog = await pool.start()
        await warm(pool, ["s0"])
        bound = bound_for(make_plan(n, chain=True), catalog)
        echo = catalog.tool("s0", "echo")
        assert echo is not None
        assert echo.output_schema is not None
        checks = OutputChecks((echo,))
        await client.list_tools()
        echoed = await client.call_tool("echo", {"x": 7})
        with tempfile.TemporaryDirectory() as tmp:
            sqlite = SqliteRunLog(Path(tmp) / "runs.db")
            for _ in range(reps):
                t0 = time.process_time()
                for _ in range(n):
                    await client.session.validate_tool_result("echo", echoed)
                add(
                    "output check, the SDK's (python-jsonschema)",
                    (time.process_time() - t0) / n * 1e6,
                )
                t0 = time.process_time()
                for _ in range(n):
                    assert checks.passes("echo", echoed)
                add(
                    "output check, the pool's (jsonschema-rs)", (time.process_time() - t0) / n * 1e6
                )
                t0 = time.process_time()
                for _ in range(n):
                    await client.call_tool("echo", {"x": 7})
                add("SDK call_tool, in memory", (time.process_time() - t0) / n * 1e6)
                t0 = time.process_time()
                for _ in range(n):
                    await pool.call("s0", "echo", {"x": 7}, key="r/s1")
                add("ServerPool.call, in memory", (time.process_time() - t0) / n * 1e6)
                for name, log in (("memory", MemoryRunLog()), ("SQLite", sqlite)):
                    run_id = f"parts-{time.perf_counter_ns()}"
                    log.create_run(run_id, "", {})
                    Emitter(log, run_id).emit(
                        PlanReady(
                            run_id=run_id, plan_hash=bound.plan_hash, bound=bound_to_dict(bound)
                        )
                    )
                    state = fold(run_id, log.events(run_id))
                    runner = Runner(FakeInvoker(at_once), log, state)
                    t0 = time.process_time()
                    await runner.run()
                    add(
                        f"runner step, fake invoker, {name} log",
                        (time.process_time() - t0) / n * 1e6,
                    )
            sqlite.close()
    args = ("o1",)
    started = step_started(
        "parts", 1, "2026-01-01T00:00:00.000Z", "s1", "e0", args, "s0", "echo", 1, "parts/s1"
    )
    result: dict[str, JSONValue] = {
        "structured": {"result": 7},
        "text": "7",
        "is_error": False,
        "retryable": False,
    }
    ended = step_succeeded(
        "parts", 2, started.time, "s1", "e0", args, "s0", "echo", 1, 0.153, {"v": 7}, result
    )
    encode = json.JSONEncoder(separators=(",", ":")).encode
    fields: dict[str, Any] = {
        "run_id": "parts",
        "seq": 2,
        "time": started.time,
        "step": "s1",
        "action": "e0",
        "args": args,
        "server": "s0",
        "tool": "echo",
        "attempt": 1,
        "duration_ms": 0.153,
        "outputs": {"v": 7},
        "result": result,
    }
    ordered: tuple[Any, ...] = tuple(fields.values())
    with tempfile.TemporaryDirectory() as tmp:
        log = SqliteRunLog(Path(tmp) / "runs.db")
        pairs = iter(
            [
                (replace(ended, seq=2 * k + 1), replace(started, seq=2 * k + 2))
                for k in range(reps * 2000)
            ]
        )

        def commit() -> None:
            end, start = next(pairs)
            log.append(end)
            log.append(start)
            log.flush()

        for _ in range(reps):
            add(
                "event JSON, json.dumps(to_dict())", _cpu_us(lambda: encode(ended.to_dict()), 20000)
            )
            add("event JSON, event_json", _cpu_us(lambda: event_json(ended), 20000))
            add("StepSucceeded(**fields)", _cpu_us(lambda: StepSucceeded(**fields), 20000))
            add("step_succeeded(*values)", _cpu_us(lambda: step_succeeded(*ordered), 20000))
            add("SQLite: append a step's two events, commit", _cpu_us(commit, 2000))
        log.close()
    print("CPU per item (us), medians of interleaved runs:")
    for name, values in rows.items():
        print(f"  {name}: {statistics.median(values):.1f}")


class _FloorLog:
    """The least a durable log can do per step: the JSON of two records (orjson) appended
    to a journal with one write, and the rows inserted into SQLite in batches."""

    def __init__(self, root: Path) -> None:
        import sqlite3

        self.db = sqlite3.connect(root / "floor.db", isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS events (run_id TEXT NOT NULL, seq INTEGER NOT NULL,"
            " type TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, seq))"
        )
        self.fd = os.open(root / "floor.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.rows: list[Any] = []
        self.insert = "INSERT INTO events VALUES " + ",".join(["(?,?,?,?)"] * 256)

    def write(self, records: tuple[dict[str, Any], ...]) -> None:
        import orjson

        lines = []
        for record in records:
            body = orjson.dumps(record)  # the fastest JSON encoder there is for Python
            lines.append(body)
            self.rows += (record["run_id"], record["seq"], record["type"], body.decode())
        os.write(self.fd, b"\n".join(lines) + b"\n")
        if len(self.rows) >= 4 * 256:
            self.db.execute(self.insert, self.rows[: 4 * 256])
            del self.rows[: 4 * 256]

    def close(self) -> None:
        rows, self.rows = self.rows, []
        if rows:
            v = iter(rows)
            self.db.executemany("INSERT INTO events VALUES (?,?,?,?)", zip(v, v, v, v, strict=True))
        os.close(self.fd)
        self.db.close()


async def floor_chain(client: Client, n: int, log: _FloorLog | None) -> Timing:
    """A bare loop doing only what each step needs (see ``--floor``)."""
    run_id = f"floor-{time.perf_counter_ns()}"
    kept: list[dict[str, Any]] = []
    seq = 0
    ended: dict[str, Any] | None = None
    t0 = clock()
    for i in range(n):
        key = f"{run_id}/s{i}"
        seq += 1
        started = {"type": "StepStarted", "run_id": run_id, "seq": seq, "time": time.time()}
        started |= {"step": f"s{i}", "action": "e0", "args": [f"o{i}"], "key": key}
        if log is not None:  # the previous step's end and this start, before the call
            log.write((ended, started) if ended is not None else (started,))
        else:
            kept.append(started)
        r = await client.call_tool("echo", {"x": 7}, meta={"io.plansmith/idempotency-key": key})
        structured = r.structured_content or {}
        seq += 1
        ended = {"type": "StepSucceeded", "run_id": run_id, "seq": seq, "time": time.time()}
        ended |= {"step": f"s{i}", "outputs": {"v": structured["result"]}}
        if log is None:
            kept.append(ended)
    if log is not None and ended is not None:
        log.write((ended,))
    return since(t0)


async def floor(n: int = 1000, reps: int = 7) -> None:
    """The bare loop's ratios next to plansmith's, in memory, interleaved."""
    server = echo_server()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sqlite = SqliteRunLog(root / "runs.db")
        async with (
            Client(server) as client,
            ServerPool(ServersConfig((InProcessServer("s0", server),))) as pool,
        ):
            await client.list_tools()
            catalog = await pool.start()
            await warm(pool, ["s0"])
            for _ in range(WARMUP):
                await client.call_tool("echo", {"x": 7})
            bound = bound_for(make_plan(n, chain=True), catalog)
            rows: dict[str, list[Timing]] = {}
            for _ in range(reps):
                floor_log = _FloorLog(root)
                for name, timing in (
                    ("raw", raw_chain(client, n)),
                    ("floor, log off", floor_chain(client, n, None)),
                    ("floor, log on", floor_chain(client, n, floor_log)),
                    ("plansmith, log off", plansmith_run(pool, bound, MemoryRunLog(), 8)),
                    ("plansmith, log on", plansmith_run(pool, bound, sqlite, 8)),
                ):
                    rows.setdefault(name, []).append(await timing)
                floor_log.close()
        sqlite.close()
    wall = {k: statistics.median(w for w, _ in v) for k, v in rows.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in rows.items()}
    print(f"in-memory {n}-step chain, medians of {reps} interleaved runs; plansmith {build()}")
    print("| loop | calls/s | CPU us a step | / raw (calls/s) | log on / off (time) |")
    print("|---|---:|---:|---:|---:|")
    for name in rows:
        kind = name.split(",")[0]
        on_off = f"{wall[name] / wall[kind + ', log off']:.3f}" if name.endswith("log on") else ""
        print(
            f"| {name} | {n / wall[name]:.0f} | {cpu[name] / n * 1e6:.0f}"
            f" | {wall['raw'] / wall[name]:.3f} | {on_off} |"
        )


async def long_chain(n: int = 20_000, reps: int = 3) -> None:
    """A long chain with the heap frozen during the run (the default) and not: CPU a step."""
    import contextlib

    import plansmith.execution._runner as runner_module
    from plansmith.execution import ToolCall, ToolResult

    answer = ToolResult({"result": 7}, "7")

    class AtOnce:  # a fake invoker: one event-loop turn, then the same answer
        async def invoke(self, call: ToolCall) -> ToolResult:
            await anyio.lowlevel.checkpoint()
            return answer

    async with ServerPool(ServersConfig((InProcessServer("s0", echo_server()),))) as pool:
        catalog = await pool.start()
    bound = bound_for(make_plan(n, chain=True), catalog)
    frozen = runner_module.frozen_heap
    rows: dict[str, list[float]] = {"frozen": [], "not frozen": []}
    for rep in range(reps):
        for name, times in rows.items():
            runner_module.frozen_heap = frozen if name == "frozen" else contextlib.nullcontext
            log = MemoryRunLog()
            run_id = f"long-{rep}-{name}"
            log.create_run(run_id, "", {})
            Emitter(log, run_id).emit(
                PlanReady(run_id=run_id, plan_hash=bound.plan_hash, bound=bound_to_dict(bound))
            )
            runner = Runner(AtOnce(), log, fold(run_id, log.events(run_id)))
            t0 = time.process_time()
            outcome = await runner.run()
            times.append((time.process_time() - t0) / n * 1e6)
            assert outcome.state == "succeeded", outcome.reason
            del log, runner, outcome
    runner_module.frozen_heap = frozen
    on, off = statistics.median(rows["frozen"]), statistics.median(rows["not frozen"])
    print(
        f"{n}-step chain, fake invoker, CPU a step (median of {reps}): heap frozen during"
        f" the run {on:.1f} us, not frozen {off:.1f} us (not frozen / frozen {off / on:.2f})"
    )


COUNTER = ROOT / "tests" / "servers" / "_servers" / "counter_server.py"
DOCS_DOMAIN = """\
domain: docs
types: {document: object}
predicates: {exists: [document], summarised: [document], indexed: [document]}
actions:
  summarise:
    parameters: {d: document}
    precondition: [exists(d), not summarised(d)]
    effect: [summarised(d)]
    tier: read
  index:
    parameters: {d: document}
    precondition: [summarised(d)]
    effect: [indexed(d)]
    tier: read
"""
DOCS_BINDINGS = """\
bindings:
  summarise: {server: counter, tool: work, arguments: {name: "${d}"},
              outputs: {done: "$.structured.done"}, retries: 2, idempotent: true}
  index: {server: counter, tool: work, arguments: {name: "${summarise(d).done}"},
          outputs: {done: "$.structured.done"}, retries: 2, idempotent: true}
"""


def write_docs(folder: Path, n_docs: int, call_log: Path) -> list[str]:
    import json

    docs = [f"d{k}" for k in range(n_docs)]
    (folder / "domain.yaml").write_text(DOCS_DOMAIN)
    (folder / "problem.yaml").write_text(
        "problem: many\ndomain: docs\n"
        f"objects: {{{', '.join(f'{d}: document' for d in docs)}}}\n"
        f"init: [{', '.join(f'exists({d})' for d in docs)}]\n"
        f"goal: [{', '.join(f'indexed({d})' for d in docs)}]\n"
    )
    (folder / "bindings.yaml").write_text(DOCS_BINDINGS)
    server = {
        "command": sys.executable,
        "args": [str(COUNTER)],
        "env": {"COUNTER_LOG": str(call_log)},
    }
    (folder / "servers.json").write_text(json.dumps({"mcpServers": {"counter": server}}))
    return [
        str(folder / f) for f in ("domain.yaml", "problem.yaml", "servers.json", "bindings.yaml")
    ]


def child(home: str, run_id: str, files: list[str], *, views: bool = True) -> None:
    """Run (or resume, when ``files`` is empty) and print one JSON line per event
    (``views``) or nothing (no view subscribed)."""
    import json

    from plansmith.engine import Engine, RunInputs

    engine = Engine(home)

    def show(event: object) -> None:
        sys.stdout.write(json.dumps(event.to_dict()) + "\n")  # type: ignore[attr-defined]
        sys.stdout.flush()

    async def go() -> None:
        subscribe = show if views else None
        if files:
            inputs = RunInputs(*(Path(f) for f in files))
            await engine.run(inputs, approve=True, subscribe=subscribe, run_id=run_id)
        else:
            await engine.resume(run_id, subscribe=subscribe)

    anyio.run(go)


def _count_lines(path: Path) -> int:
    return len(path.read_bytes().splitlines()) if path.exists() else 0


def resume_bench(kills: int = 20, n_docs: int = 100, seed: int = 7, *, views: bool = True) -> None:
    """With ``views``, the child prints its events and is killed after a random number
    of step events; without, it prints nothing and is killed after a random number of
    tool calls (read from the server's call log)."""
    import json
    import random
    import signal
    import subprocess

    from plansmith.engine import Engine, RunInputs
    from plansmith.execution import StepSucceeded

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        call_log = root / "calls.jsonl"
        files = write_docs(root, n_docs, call_log)
        home = str(root / "home")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        violations = 0
        checkpoints: list[tuple[set[str], int]] = []
        t0 = time.perf_counter()
        for k in range(kills + 1):
            args = [sys.executable, __file__, "--child" if views else "--quiet-child"]
            args += [home, "r-resume", *(files if k == 0 else [])]
            proc = subprocess.Popen(args, stdout=subprocess.PIPE, env=env)
            assert proc.stdout is not None
            finished = False
            stop_after = rng.randint(1, 40) if k < kills else -1  # the last run goes on
            if views:
                seen = 0
                for line in proc.stdout:  # read every line: a full pipe would block the child
                    event = json.loads(line)
                    finished = event["type"] == "RunFinished"
                    if event["type"] in ("StepStarted", "StepSucceeded"):
                        seen += 1
                        if seen == stop_after:
                            os.kill(proc.pid, signal.SIGKILL)  # the child this benchmark started
                            break
            else:
                target = _count_lines(call_log) + (stop_after + 1) // 2
                while proc.poll() is None:
                    if stop_after > 0 and _count_lines(call_log) >= target:
                        os.kill(proc.pid, signal.SIGKILL)  # the child this benchmark started
                        break
                    time.sleep(0.002)
            proc.wait()
            finished = finished or proc.returncode == 0
            proc.stdout.close()
            sys.stderr.write(f"  cycle {k}: {'finished' if finished else 'killed'}\n")
            engine = Engine(home)
            done = {e.step for e in engine.log.events("r-resume") if isinstance(e, StepSucceeded)}
            engine.close()
            calls_now = call_log.read_text().splitlines() if call_log.exists() else []
            checkpoints.append((set(done), len(calls_now)))
            if finished:
                break
        elapsed = time.perf_counter() - t0
        calls = [json.loads(line) for line in call_log.read_text().splitlines()]
        for done_at, count_at in checkpoints:
            later = {c["key"] for c in calls[count_at:]}
            violations += len(later & {f"r-resume/{s}" for s in done_at})
        keys_per_call: dict[str, set[str]] = {}
        for c in calls:
            keys_per_call.setdefault(str(c["args"]["name"]), set()).add(c["key"])
        engine = Engine(home)
        resumed = anyio.run(engine.resume, "r-resume")
        recorded = engine.log.events("r-resume")

        async def replay() -> list[Event]:
            with anyio.fail_after(300):
                return await engine.replay("r-resume")

        replayed = anyio.run(replay)
        engine.close()
        fresh_dir = root / "fresh"
        fresh_dir.mkdir()
        fresh_files = write_docs(fresh_dir, n_docs, fresh_dir / "calls.jsonl")
        fresh_engine = Engine(fresh_dir / "home")

        async def fresh_run() -> object:
            return await fresh_engine.run(RunInputs(*(Path(f) for f in fresh_files)), approve=True)

        fresh = anyio.run(fresh_run)
        fresh_engine.close()
        repeated = len(calls) - len({c["key"] for c in calls})
        print(
            f"resume ({'views subscribed' if views else 'no view'}):"
            f" {sum(1 for _ in checkpoints) - 1} kills, run {resumed.state}, "
            f"{len(calls)} calls for {2 * n_docs} steps ({repeated} repeated), "
            f"finished steps called again: {violations}, "
            f"steps with more than one key: {sum(len(v) > 1 for v in keys_per_call.values())}, "
            f"outputs equal to an uninterrupted run: {resumed.outputs == fresh.outputs}"  # type: ignore[attr-defined]
            f" ({elapsed:.0f} s)"
        )
        parts = sum(e.type == "RunStarted" for e in recorded)
        print(
            f"  replay of its {parts} parts: {len(replayed)} events for {len(recorded)} recorded,"
            " each step's events as recorded:"
            f" {step_histories(replayed) == step_histories(recorded)}"
        )


if __name__ == "__main__":
    if sys.argv[1:2] in (["--child"], ["--quiet-child"]):
        child(sys.argv[2], sys.argv[3], sys.argv[4:], views=sys.argv[1] == "--child")
        sys.exit(0)
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--resume", action="store_true", help="only the kill-and-resume run")
    parser.add_argument("--parts", action="store_true", help="only the per-step parts, alone")
    parser.add_argument("--long", action="store_true", help="only the long chain, GC frozen/not")
    parser.add_argument("--floor", action="store_true", help="only the bare loop's floor")
    ARGS = parser.parse_args()
    if ARGS.resume:
        resume_bench(views=True)
        resume_bench(views=False)
    elif ARGS.parts:
        anyio.run(parts)
    elif ARGS.long:
        anyio.run(long_chain)
    elif ARGS.floor:
        anyio.run(floor)
    else:
        anyio.run(main)
