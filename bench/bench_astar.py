"""Optimal planning: plansmith's A* + LM-cut against Fast Downward's ``astar(lmcut())``.

Runs both planners, in the same run, on the tasks of the suite (by default the IPC tasks
of the ``pddl`` 0.5.1 sdist, fetched into a cache outside the repository by
bench/ipc_tasks.py; ``--suite DIR`` or $PLANSMITH_PDDL_BENCHMARKS for your own), and
checks that each plan is valid and exactly as long as the optimal plan (the domains have
unit costs). The optimal length is the suite's ``optimal_length`` in ``expected.csv``
where given; else Fast Downward's A* + LM-cut plan length in the same run (LM-cut is
admissible, so that plan is optimal; ``opt`` is then marked ``*``). A task with neither
(no table entry, and FD did not finish or was not run) is checked for validity only
(``opt`` ``?``).
The figure is whole-process CPU time (user + system of the child, from
``resource.getrusage(RUSAGE_CHILDREN)``), with a CPU limit per task (default 60 s):

  plansmith   ``plansmith plan DOMAIN TASK --search astar --heuristic lmcut --time-limit 60``
              (the CLI's time limit is CPU time)
  fd          Fast Downward (``up-fast-downward`` wheel), ``--search "astar(lmcut())"``,
              ``--overall-time-limit 60`` (driver, translator and search all counted)

Each child also runs under ``RLIMIT_AS`` (``--memory``, default 8 GiB), so that a
runaway search fails cleanly instead of swapping, and under ``RLIMIT_CPU`` of the limit
plus 30 s as a backstop. A run counts as solved only if it finished within the CPU limit
with a valid plan of the optimal length. ``exp`` is Fast Downward's expansion count (and
plansmith's when it stopped at the limit: its CLI only prints the counts then).

Usage: .venv/bin/python bench/bench_astar.py [--time-limit 60] [--only childsnack,barman/p0?]
        [--memory 8] [--heuristic lmcut] [--peers fd] [--suite DIR] [--json results.json]
``--only`` takes comma-separated shell patterns matched against the domain name and
against ``domain/problem`` (``barman``, ``sokoban/p0?``, ``*/p01``).
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import ipc_tasks
from bench_classical import (
    BIN,
    CHILD_ENV,
    check_plan,
    fd_driver,
    geomean,
    plan_length,
    warm_bytecode,
)

GIB = 1 << 30


@dataclass
class Run:
    planner: str
    domain: str
    task: str
    optimal: int | None  # None: not known (validity checked only)
    finished: bool
    cpu: float
    length: int | None
    valid: bool  # a valid plan whose cost is its length
    expanded: int | None = None
    status: str = ""  # solved, limit, memory, error, timeout (wall clock)
    ok: bool = False  # finished within the CPU limit, valid, of the optimal length

    def judge(self, optimal: int | None, limit: float) -> None:
        self.optimal = optimal
        self.ok = self.finished and self.valid and self.cpu <= limit
        self.ok = self.ok and (optimal is None or self.length == optimal)


@dataclass
class Child:
    returncode: int | None  # None: killed at the wall-clock timeout
    cpu: float
    output: str  # stdout and stderr


def run_child(cmd: list[str], cwd: Path, cpu_limit: float, memory: int) -> Child:
    """Run ``cmd`` under RLIMIT_AS ``memory`` bytes and RLIMIT_CPU ``cpu_limit + 30`` s;
    its CPU time is user + system from RUSAGE_CHILDREN."""
    backstop = int(cpu_limit) + 30

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CPU, (backstop, backstop + 5))

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = subprocess.run(
            cmd,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            timeout=8 * cpu_limit + 120,  # wall clock: the machine is shared
            check=False,
            env=CHILD_ENV,
            preexec_fn=limits,
        )
        code: int | None = proc.returncode
        output = proc.stdout
    except subprocess.TimeoutExpired as exc:
        code = None
        output = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else ""
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Child(code, cpu, output)


def _status(child: Child, *, limit_codes: set[int], memory_codes: set[int]) -> str:
    code = child.returncode
    if code is None:
        return "timeout"
    if code == 0:
        return "solved"
    if code in memory_codes or "MemoryError" in child.output:
        return "memory"
    if code in limit_codes or code < 0:  # < 0: killed by a signal (RLIMIT_CPU)
        return "limit"
    return "error"


def run_plansmith(
    domain: Path, task: Path, work: Path, *, limit: float, memory: int, heuristic: str
) -> Run:
    out = work / "plan.json"
    cmd = [str(BIN / "plansmith"), "plan", str(domain), str(task), "--search", "astar"]
    cmd += ["--heuristic", heuristic, "--time-limit", f"{limit:g}"]
    cmd += ["--format", "json", "--output", str(out)]
    child = run_child(cmd, work, limit, memory)  # the CPU limit is the CLI's own
    finished = child.returncode == 0
    length = None
    valid = False
    if finished and out.exists():
        plan = json.loads(out.read_text())
        length = len(plan["steps"])
        valid = length == plan["cost"] and check_plan(domain, task, out)
    found = re.search(r"expanded (\d+)", child.output)
    expanded = int(found.group(1)) if found else None
    status = _status(child, limit_codes={4}, memory_codes=set())
    return Run(
        "plansmith", domain.parent.name, task.name, None, finished, child.cpu, length, valid,
        expanded, status,
    )  # fmt: skip


def run_fd(domain: Path, task: Path, work: Path, *, limit: float, memory: int) -> Run:
    out = work / "fd.plan"
    cmd = [sys.executable, str(fd_driver()), "--overall-time-limit", f"{limit:g}s"]
    cmd += ["--plan-file", str(out), str(domain), str(task), "--search", "astar(lmcut())"]
    child = run_child(cmd, work, limit, memory)
    finished = child.returncode == 0
    length = plan_length(out) if finished else None
    found = re.findall(r"Expanded (\d+) state", child.output)
    expanded = int(found[-1]) if found else None
    # the driver's exit codes: 22 out of memory, 23 out of time, 24 both
    status = _status(child, limit_codes={23, 24}, memory_codes={22})
    return Run(
        "fd", domain.parent.name, task.name, None, finished, child.cpu, length,
        length is not None, expanded, status,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--time-limit",
        "--timeout",
        dest="limit",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="CPU seconds per task and planner",
    )
    parser.add_argument(
        "--only",
        default="",
        metavar="PATTERN",
        help="comma-separated patterns: domain or domain/problem",
    )
    parser.add_argument("--memory", type=float, default=8.0, help="GiB of address space per child")
    parser.add_argument("--heuristic", default="lmcut")
    parser.add_argument("--peers", default="fd")
    ipc_tasks.add_suite_option(parser)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    suite = ipc_tasks.resolve(args.suite)
    selection = ipc_tasks.load(suite, [p for p in args.only.split(",") if p])
    memory = int(args.memory * GIB)
    with_fd = "fd" in args.peers.split(",")
    warm_bytecode()
    results: list[Run] = []
    print(f"suite: {suite} ({len(selection)} tasks)")
    print(f"time limit {args.limit:g} s CPU, memory {args.memory:g} GiB per child", flush=True)
    print(f"{'task':<18}{'opt':>5}{'plansmith':>10}{'len':>4}{'ok':>3}{'status':>8}", end="")
    print(f"{'fd':>9}{'len':>4}{'ok':>3}{'exp':>9}{'ratio':>8}" if with_fd else "", flush=True)
    for task in selection:
        with tempfile.TemporaryDirectory() as tmp:
            mine = run_plansmith(
                task.domain_file,
                task.problem_file,
                Path(tmp),
                limit=args.limit,
                memory=memory,
                heuristic=args.heuristic,
            )
        results.append(mine)
        peer = None
        if with_fd:
            with tempfile.TemporaryDirectory() as tmp:
                peer = run_fd(
                    task.domain_file, task.problem_file, Path(tmp), limit=args.limit, memory=memory
                )
            results.append(peer)
        optimal, mark = task.optimal, ""
        if optimal is None and peer is not None and peer.finished and peer.cpu <= args.limit:
            optimal, mark = peer.length, "*"  # FD's A* + LM-cut: optimal
        mine.judge(optimal, args.limit)
        opt = f"{optimal}{mark}" if optimal is not None else "?"
        line = f"{task.label:<18}{opt:>5}"
        line += f"{mine.cpu:>10.2f}{mine.length or '-':>4}{'y' if mine.ok else 'n':>3}"
        line += f"{mine.status:>8}"
        if peer is not None:
            peer.judge(optimal, args.limit)
            ratio = f"{mine.cpu / peer.cpu:.2f}" if mine.ok and peer.ok else "-"
            line += f"{peer.cpu:>9.2f}{peer.length or '-':>4}{'y' if peer.ok else 'n':>3}"
            line += f"{peer.expanded or '-':>9}{ratio:>8}"
        print(line, flush=True)
    print()
    mine_runs = [r for r in results if r.planner == "plansmith"]
    wrong = [r for r in mine_runs if r.finished and r.length is not None and not r.ok]
    unknown = sum(r.optimal is None and r.ok for r in mine_runs)
    print(
        f"plansmith A* + {args.heuristic}: {sum(r.ok for r in mine_runs)}/{len(mine_runs)} "
        f"solved optimally within {args.limit:g} s CPU"
        + (f" ({unknown} of them of unknown optimal length: checked valid only)" if unknown else "")
        + (
            f"; NOT OPTIMAL OR TOO SLOW: {[r.domain + '/' + r.task for r in wrong]}"
            if wrong
            else ""
        )
    )
    unsolved = [f"{r.domain}/{r.task} ({r.status})" for r in mine_runs if not r.ok]
    if unsolved:
        print(f"plansmith unsolved: {', '.join(unsolved)}")
    if with_fd:
        fd_runs = {(r.domain, r.task): r for r in results if r.planner == "fd"}
        both = [(m, fd_runs[(m.domain, m.task)]) for m in mine_runs]
        both = [(m, p) for m, p in both if m.ok and p.ok]
        mean = geomean([m.cpu / p.cpu for m, p in both])
        print(
            f"fd astar(lmcut()): {sum(r.ok for r in fd_runs.values())}/{len(fd_runs)} solved "
            f"optimally; geometric mean CPU ratio plansmith/fd = {mean:.2f} over "
            f"{len(both)} tasks solved by both"
        )
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=2))


if __name__ == "__main__":
    main()
