"""The bio full report: plansmith end to end against a plain Python script, in the same run.

plansmith: ``Engine(home).run(...)`` on the goal "full family report" with the tools
found on this machine: load the files, plan (A*), start the ``plansmith-bio`` server
(a stdio process), bind, approve (every action is tier read), run the steps over MCP
with the durable SQLite run log.

script: the same tool bodies the server runs (``_tools_seq``, ``_tools_family``,
``report_tool``), called in process in the plan's order, with the same arguments and
the same backends, with no planner, no MCP and no log. Its time includes importing
the tool modules (Biopython), as a fresh script would pay; the plansmith run pays the
same import in its server process.

Where plansmith's time goes is measured by wrapping, in this process only, the engine's
calls to the problem loader, the planner, ``ServerPool.start`` and ``bind`` with timers,
and from the run's events: each step's call time (``duration_ms``: the MCP round trip
with the tool's work) and the execution's wall time (RunStarted to RunFinished).

Usage: .venv/bin/python bench/bench_bio.py [--order script-first|plansmith-first]
Runs each side once and prints one table.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio

from plansmith.domains import bio
from plansmith.engine import Engine, RunInputs, load_problem_files, make_plan
from plansmith.execution import Event, RunOutcome, StepSucceeded
from plansmith.servers import ServerPool

T = TypeVar("T")
INPUTS = {"gene": bio.DATA_DIR / "query.gb", "family": bio.DATA_DIR / "family.fasta"}


def _timed(phases: dict[str, float], name: str, fn: Callable[..., T]) -> Callable[..., T]:
    def wrapper(*args: Any, **kwargs: Any) -> T:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            phases[name] = phases.get(name, 0.0) + time.perf_counter() - t0

    return wrapper


def run_plansmith(home: Path) -> tuple[float, dict[str, float], list[Event], RunOutcome]:
    problem = bio.write_problem(home / "problem.yaml", "full family report", INPUTS)
    (home / "servers.json").write_text(json.dumps(bio.server_config(INPUTS, home)))
    inputs = RunInputs(
        bio.DOMAIN_DIR / "domain.yaml",
        problem,
        home / "servers.json",
        bio.DOMAIN_DIR / "bindings.yaml",
    )
    phases: dict[str, float] = {}
    planner = _timed(phases, "plan", make_plan)  # the engine's planner, timed
    start = ServerPool.start

    async def timed_start(self: ServerPool, names: tuple[str, ...] | None = None) -> Any:
        t0 = time.perf_counter()
        try:
            return await start(self, names)
        finally:
            phases["servers"] = phases.get("servers", 0.0) + time.perf_counter() - t0

    ServerPool.start = timed_start  # type: ignore[method-assign]
    events: list[Event] = []
    marks: dict[str, float] = {}

    def on_event(event: Event) -> None:
        events.append(event)
        marks.setdefault(event.type, time.perf_counter())

    async def go() -> RunOutcome:
        engine = Engine(home, planner=planner)
        try:
            return await engine.run(inputs, subscribe=on_event)
        finally:
            engine.close()

    t0 = time.perf_counter()
    outcome = anyio.run(go)
    total = time.perf_counter() - t0
    ServerPool.start = start  # type: ignore[method-assign]
    # reading the files, and binding: what the run took to its plan, but for planning and
    # the servers' start-up
    phases["load+bind"] = marks["PlanReady"] - t0 - phases["plan"] - phases["servers"]
    phases["execution"] = marks["RunFinished"] - marks["RunStarted"]
    phases["shutdown"] = t0 + total - marks["RunFinished"]
    return total, phases, events, outcome


def run_script(root: Path, actions: list[str]) -> tuple[float, dict[str, float]]:
    """The plan's steps as plain calls of the tool bodies, in order; seconds per step."""
    t0 = time.perf_counter()
    from plansmith.domains.bio import _tools_family as fam
    from plansmith.domains.bio import _tools_seq as seq
    from plansmith.domains.bio._paths import Sandbox
    from plansmith.domains.bio._report import report_tool

    times = {"import": time.perf_counter() - t0}
    box = Sandbox.of([root], INPUTS)
    r = str(root)
    search: dict[str, Any] = {"query": f"{r}/gene.fasta", "out": f"{r}/gene.family.hits.json"}
    search |= {"homologues": f"{r}/homologues.fasta", "top": 20, "min_identity": 0.0}
    aln, nwk = f"{r}/homologues.aln.fasta", f"{r}/homologues.nwk"
    calls: dict[str, Callable[[], object]] = {
        "load_sequences(family)": lambda: seq.load_sequences(box, "family", f"{r}/family.fasta"),
        "load_sequences(gene)": lambda: seq.load_sequences(box, "gene", f"{r}/gene.fasta"),
        "gc_content": lambda: seq.stats_tool(box, f"{r}/gene.fasta", f"{r}/gene.stats.json"),
        "find_orfs": lambda: seq.orfs_tool(box, f"{r}/gene.fasta", f"{r}/gene.orfs.json", 150, 1),
        "make_blast_db": lambda: fam.make_blast_db_tool(
            box, f"{r}/family.fasta", f"{r}/family.blastdb/family"
        ),
        "search_blast": lambda: fam.blast_search_tool(
            box, database=f"{r}/family.blastdb/family", **search
        ),
        "search_biopython": lambda: fam.biopython_search_tool(
            box, database=f"{r}/family.fasta", **search
        ),
        "align_mafft": lambda: fam.msa_tool(box, f"{r}/homologues.fasta", aln, "mafft"),
        "align_clustalo": lambda: fam.msa_tool(box, f"{r}/homologues.fasta", aln, "clustalo"),
        "align_biopython": lambda: fam.msa_tool(box, f"{r}/homologues.fasta", aln, "biopython"),
        "tree_fasttree": lambda: fam.tree_tool(box, aln, nwk, "fasttree"),
        "tree_nj": lambda: fam.tree_tool(box, aln, nwk, "biopython"),
        "write_report": lambda: report_tool(
            box,
            out=f"{r}/gene.report.md",
            title="Gene family report: gene in family",
            query=f"{r}/gene.fasta",
            stats=f"{r}/gene.stats.json",
            orfs=f"{r}/gene.orfs.json",
            hits=f"{r}/gene.family.hits.json",
            alignment=aln,
            tree=nwk,
            picture=None,
            notes=[],
        ),
    }
    for action in actions:
        t1 = time.perf_counter()
        calls[action]()
        times[action] = time.perf_counter() - t1
    return time.perf_counter() - t0, times


def _step_name(e: StepSucceeded) -> str:
    return f"load_sequences({e.args[0]})" if e.action == "load_sequences" else e.action


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--order", choices=["script-first", "plansmith-first"])
    parser.set_defaults(order="script-first")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home, script_root = Path(tmp) / "home", Path(tmp) / "script"
        home.mkdir()
        script_root.mkdir()
        plan = make_plan(
            load_problem_files(
                bio.DOMAIN_DIR / "domain.yaml",
                bio.write_problem(Path(tmp) / "p.yaml", "full family report", INPUTS),
            )
        )
        order = [
            f"load_sequences({s.args[0]})" if s.action == "load_sequences" else s.action
            for s in plan.steps
        ]
        if args.order == "script-first":
            s_total, s_times = run_script(script_root, order)
            p_total, phases, events, outcome = run_plansmith(home)
        else:
            p_total, phases, events, outcome = run_plansmith(home)
            s_total, s_times = run_script(script_root, order)
    if outcome.state != "succeeded":
        sys.exit(f"plansmith run {outcome.state}: {outcome.reason}")
    calls = {_step_name(e): e.duration_ms / 1000 for e in events if isinstance(e, StepSucceeded)}
    print(f"tools: {', '.join(sorted(bio.detect_tools())) or 'none'}")
    print(f"plan: {' -> '.join(order)}")
    print(f"{'':28} {'plansmith s':>12} {'script s':>10}")
    for name in ("load+bind", "plan", "servers", "execution", "shutdown"):
        print(f"  {name:26} {phases.get(name, 0.0):12.3f} {'':>10}")
    print(f"  {'import tool modules':26} {'(in server)':>12} {s_times['import']:10.3f}")
    for name in order:
        print(f"  call {name:21} {calls.get(name, 0.0):12.3f} {s_times[name]:10.3f}")
    script_calls = sum(s_times.values()) - s_times["import"]
    print(f"  {'sum of calls':26} {sum(calls.values()):12.3f} {script_calls:10.3f}")
    print(f"  {'end to end':26} {p_total:12.3f} {s_total:10.3f}")
    print(f"ratio plansmith / script: {p_total / s_total:.2f}")


if __name__ == "__main__":
    main()
