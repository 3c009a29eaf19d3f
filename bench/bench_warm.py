"""Warm tool servers: the bio and lab demos through the MCP face, cold and warm.

A face made as ``plansmith mcp`` makes it (``FaceService`` over an ``Engine`` whose
pool factory is ``WarmPools.factory``), driven in process through the MCP SDK's
in-memory transport: per demo, two flows ``make_plan`` (with its binding check on the
live servers), ``approve_plan``, ``start_run``, ``get_run_status`` until done. The first
flow after the face starts is cold (its check starts the servers); the second is warm
(the servers kept from the first). ``--idle 0`` stops each server when its last run or
check ends, as every face did before: then both flows are cold, and each starts its
servers twice (the check's, then the run's).

- bio: the full family report (``plansmith demo bio``'s goal) on ``plansmith-bio``.
- lab: 96-sample PCR prep with an 8-channel pipette (``plansmith demo``) on the three
  role servers of ``plansmith-lab`` over one simulated robot. Between the two flows
  the robot's deck is emptied (one ``reset_robot`` call on the warm ``movement`` server,
  not timed). Needs ``.venv-lab`` (``make lab-venv``).

Usage: .venv/bin/python bench/bench_warm.py [--only bio|lab] [--idle SECONDS]
Prints, per demo, each flow's wall time, the servers started during it, and cold / warm.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from plansmith.domains.folders import load_folders
from plansmith.engine import Engine
from plansmith.formats import load_domain, load_problem
from plansmith.mcp import FaceService, build_face_server
from plansmith.servers import WarmPools, load_servers

STARTS = "starts, to be kept warm"  # the line WarmPools writes to HOME/servers.log


def bio_folder(root: Path, home: Path) -> tuple[Path, dict[str, Any]]:
    """The bio domain folder for the face (the demo's problem, its server confined to
    ``home``), and ``make_plan``'s arguments."""
    import json

    from plansmith.domains import bio

    folder = root / "bio"
    folder.mkdir(parents=True)
    for name in ("domain.yaml", "bindings.yaml"):
        shutil.copy(bio.DOMAIN_DIR / name, folder / name)
    inputs = {"gene": bio.DATA_DIR / "query.gb", "family": bio.DATA_DIR / "family.fasta"}
    bio.write_problem(folder / "problem.yaml", "full family report", inputs)
    (folder / "servers.json").write_text(json.dumps(bio.server_config(inputs, home)))
    problem = load_problem(folder / "problem.yaml", load_domain(folder / "domain.yaml"))
    return folder, {"goal": [str(a) for a in problem.goal]}


def lab_folder(root: Path) -> tuple[Path, dict[str, Any]]:
    """The PCR domain folder (96 samples, 8 channels, 30 cycles) on a robot of its own."""
    from plansmith.domains.lab import PCR_BINDINGS, PCR_DOMAIN, problem_for
    from plansmith.domains.lab.sim import require_lab_venv, write_servers

    python = require_lab_venv()
    folder = root / "pcr"
    folder.mkdir(parents=True)
    shutil.copy(PCR_DOMAIN, folder / "domain.yaml")
    shutil.copy(PCR_BINDINGS, folder / "bindings.yaml")
    (folder / "problem.yaml").write_text(problem_for(96, 8, 30))
    write_servers(folder / "servers.json", root / "robot", python)
    return folder, {"tasks": ["prepare_pcr(p1000, A1, 30)"]}


async def call(client: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    if result.is_error:
        raise SystemExit(f"{tool}: {result.content[0].text}")
    data: dict[str, Any] = result.structured_content
    return data


async def flow(client: Any, domain: str, args: dict[str, Any]) -> tuple[float, str, int]:
    """make_plan, approve, start_run, poll until the run ends: seconds, state, steps."""
    t0 = time.perf_counter()
    plan = await call(client, "make_plan", {"domain": domain, **args})
    if not plan["binding"]["ok"]:
        raise SystemExit(f"{domain}: the binding check failed: {plan['binding']}")
    await call(client, "approve_plan", {"plan_hash": plan["plan_hash"]})
    run = await call(client, "start_run", {"plan_hash": plan["plan_hash"]})
    while True:
        status = await call(client, "get_run_status", {"run_id": run["run_id"]})
        if status["state"] in ("succeeded", "failed", "cancelled"):
            return time.perf_counter() - t0, status["state"], int(status["total"])
        await anyio.sleep(0.01)


def starts(log: Path) -> int:
    return log.read_text().count(STARTS) if log.exists() else 0


async def bench(only: list[str], idle: float) -> list[tuple[str, str, float, str, int, int]]:
    from mcp import Client

    root = Path(tempfile.mkdtemp(prefix="bench-warm-"))
    home = root / "home"
    folders: dict[str, tuple[Path, dict[str, Any]]] = {}
    if "bio" in only:
        folders["bio"] = bio_folder(root / "domains", home)
    if "lab" in only:
        folders["pcr"] = lab_folder(root / "domains")
    warm = WarmPools(home / "servers.log", idle_timeout=idle)
    engine = Engine(home, pool_factory=warm.factory)
    service = FaceService.on(engine, load_folders([root / "domains"]))

    async def on_exit() -> None:  # as plansmith mcp does
        await warm.aclose()

    rows = []
    log = home / "servers.log"
    async with Client(build_face_server(service, env={}, on_exit=on_exit)) as client:
        for domain, (folder, args) in folders.items():
            for which in ("first", "second"):
                before = starts(log)
                seconds, state, steps = await flow(client, domain, args)
                rows.append((domain, which, seconds, state, steps, starts(log) - before))
                if domain == "pcr" and which == "first":  # an empty deck for the next run
                    async with engine.open_pool(load_servers(folder / "servers.json")) as pool:
                        await pool.call("movement", "reset_robot", {})
    engine.close()
    shutil.rmtree(root, ignore_errors=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=("bio", "lab"), action="append")
    parser.add_argument(
        "--idle", type=float, default=300.0, help="WarmPools' idle timeout (0: not kept)"
    )
    options = parser.parse_args()
    rows = anyio.run(bench, options.only or ["bio", "lab"], options.idle)
    print(f"idle timeout {options.idle:g} s; python {sys.version.split()[0]}")
    print(f"{'demo':6} {'flow':7} {'steps':>5} {'state':10} {'seconds':>8} {'starts':>6}")
    for domain, which, seconds, state, steps, started in rows:
        print(f"{domain:6} {which:7} {steps:5d} {state:10} {seconds:8.2f} {started:6d}")
    for domain in dict.fromkeys(r[0] for r in rows):
        first, second = (r[2] for r in rows if r[0] == domain)
        print(f"{domain}: first / second = {first / second:.2f}")


if __name__ == "__main__":
    main()
