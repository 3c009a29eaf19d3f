"""The Dask executor against the local one, on the same plans, in the same run.

A real ``LocalCluster`` on 127.0.0.1 with 2 worker processes: worker ``a`` hosts server
``s0`` (resource ``mcp:s0``), worker ``b`` hosts ``s1``. Both executors drive the same
stdio servers (tests/servers/_servers/dask_echo_server.py): locally through a
``ServerPool``, on the cluster through a ``DaskPool`` whose workers spawn them. Scenarios:
  sleep   --n (200) independent steps, each a tool that sleeps 50 ms, alternating s0 and
          s1; 16 in flight (8 per server). Ideal time: n * 50 ms / 16.
  chain   --chain (100) no-op steps one after another on s0: the time per step over the
          local executor's is the Dask scheduling overhead per step (client -> scheduler
          -> worker -> client, on top of the MCP call itself).

Usage: .venv/bin/python bench/bench_dask.py [--n 200] [--chain 100] [--reps 3]
Prints the median wall times, the ratio Dask over local, and the overhead per step.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from plansmith.binding import BoundPlan, ToolCatalog, bind, parse_bindings
from plansmith.execution import Emitter, MemoryRunLog, PlanReady, Runner, bound_to_dict, fold
from plansmith.model import ActionSchema, Domain, Plan, Step, Tier, TypedName
from plansmith.servers import DaskPool, McpInvoker, ServerPool, ToolPool, parse_servers

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "servers"))
import _dask_helpers as dh  # noqa: E402 (the tests' cluster and echo server)

SLEEP = 0.05
PARALLEL = 16
PER_SERVER = 8

DOMAIN = Domain(
    "bench",
    actions=tuple(
        ActionSchema(name, (TypedName("x"),), tier=Tier.READ) for name in ("nap0", "nap1", "noop")
    ),
)
BINDINGS = parse_bindings(
    "bindings:\n"
    f"  nap0: {{server: s0, tool: work, arguments: {{name: '${{x}}', seconds: {SLEEP}}}}}\n"
    f"  nap1: {{server: s1, tool: work, arguments: {{name: '${{x}}', seconds: {SLEEP}}}}}\n"
    "  noop: {server: s0, tool: noop, arguments: {}}\n"
)


def make_plan(n: int, *, chain: bool) -> Plan:
    steps = []
    for i in range(n):
        action = "noop" if chain else f"nap{i % 2}"
        after = (f"s{i - 1}",) if chain and i else ()
        steps.append(Step(f"s{i}", action, (f"o{i}",), after=after))
    return Plan("bench", "bench", "sha256:d", "sha256:p", tuple(steps))


def servers() -> Any:
    entry = {"command": sys.executable, "args": [str(dh.ECHO)], "maxInFlight": PER_SERVER}
    return parse_servers(json.dumps({"mcpServers": {"s0": entry, "s1": entry}}))


async def run_plan(pool: ToolPool, bound: BoundPlan) -> float:
    log = MemoryRunLog()
    run_id = f"bench-{time.perf_counter_ns()}"
    log.create_run(run_id, "", {})
    Emitter(log, run_id).emit(
        PlanReady(run_id=run_id, plan_hash=bound.plan_hash, bound=bound_to_dict(bound))
    )
    runner = Runner(
        McpInvoker(pool),
        log,
        fold(run_id, log.events(run_id)),
        max_parallel=PARALLEL,
        server_limits={"s0": PER_SERVER, "s1": PER_SERVER},
    )
    t0 = time.perf_counter()
    outcome = await runner.run()
    elapsed = time.perf_counter() - t0
    assert outcome.state == "succeeded", outcome.reason
    return elapsed


async def measure(address: str) -> dict[str, list[float]]:
    config = servers()
    rows: dict[str, list[float]] = {k: [] for k in ("sleep-local", "sleep-dask")}
    rows.update({k: [] for k in ("chain-local", "chain-dask")})
    async with ServerPool(config) as local, DaskPool(config, address) as dask:
        catalogs: list[ToolCatalog] = [await local.start(), await dask.start()]
        plans = {
            "sleep": make_plan(ARGS.n, chain=False),
            "chain": make_plan(ARGS.chain, chain=True),
        }
        bound = {k: bind(p, DOMAIN, BINDINGS, catalogs[0], env={}) for k, p in plans.items()}
        pools: dict[str, ToolPool] = {"local": local, "dask": dask}
        for pool in pools.values():  # warm up: sessions, imports on the workers
            await run_plan(pool, bind(make_plan(20, chain=False), DOMAIN, BINDINGS, catalogs[1]))
        for _ in range(ARGS.reps):  # interleaved repetitions
            for scenario in ("sleep", "chain"):
                for name, pool in pools.items():
                    rows[f"{scenario}-{name}"].append(await run_plan(pool, bound[scenario]))
    return rows


HOSTS = {"a": {"mcp:s0": PER_SERVER}, "b": {"mcp:s1": PER_SERVER}}


def serve_cluster() -> None:
    """``--serve-cluster``: run the cluster in this process, print its scheduler's
    address, and stop when stdin closes (the scheduler then has a process of its own,
    as it does when plansmith connects to a real cluster)."""
    with dh.local_cluster(HOSTS) as cluster:
        print(cluster.address, flush=True)
        sys.stdin.read()


def main() -> None:
    t0 = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve-cluster"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        address = child.stdout.readline().strip()
        started = time.perf_counter() - t0
        rows = anyio.run(measure, address)
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=60)
    med = {k: statistics.median(v) for k, v in rows.items()}
    ideal = ARGS.n * SLEEP / PARALLEL
    overhead = (med["chain-dask"] - med["chain-local"]) / ARGS.chain
    print(f"cluster start (scheduler + 2 worker processes): {started:.2f} s")
    print(f"{'scenario':<40}{'local s':>10}{'dask s':>10}{'dask/local':>12}")
    for scenario, label in (
        ("sleep", f"sleep: {ARGS.n} x {SLEEP * 1000:.0f} ms, {PARALLEL} in flight"),
        ("chain", f"chain: {ARGS.chain} no-op steps in a row"),
    ):
        local, dask = med[f"{scenario}-local"], med[f"{scenario}-dask"]
        print(f"{label:<40}{local:>10.3f}{dask:>10.3f}{dask / local:>12.2f}")
    print(f"ideal time of the sleep plan: {ideal:.3f} s")
    sleep_local, sleep_dask = med["sleep-local"], med["sleep-dask"]
    print(
        f"over the ideal, per step: local {(sleep_local - ideal) / ARGS.n * 1000:.2f} ms, "
        f"dask {(sleep_dask - ideal) / ARGS.n * 1000:.2f} ms"
    )
    per_local = med["chain-local"] / ARGS.chain * 1000
    print(
        f"Dask scheduling overhead per step (chain): {overhead * 1000:.2f} ms "
        f"(local {per_local:.2f} ms per step, dask {per_local + overhead * 1000:.2f} ms)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--chain", type=int, default=100)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--serve-cluster", action="store_true", help=argparse.SUPPRESS)
    ARGS = parser.parse_args()
    serve_cluster() if ARGS.serve_cluster else main()
