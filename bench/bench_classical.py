"""plansmith's classical planner against Fast Downward and pyperplan, in the same run.

Each planner runs as its own process on every task of the suite: by default the IPC
tasks of the ``pddl`` 0.5.1 sdist, fetched into a cache outside the repository by
bench/ipc_tasks.py; ``--suite DIR`` (or $PLANSMITH_PDDL_BENCHMARKS) for your own. The
figure is whole-process CPU time (user + system of the child, from
``resource.getrusage(RUSAGE_CHILDREN)``), so Python start-up, parsing and grounding count
for every planner alike. pyperplan is not run on the tasks it cannot read (``pyperplan``
= ``n`` in the suite's expected.csv; printed as ``n/a``).

Configurations:
  plansmith   ``plansmith plan DOMAIN TASK`` (default: lazy GBFS + hFF, preferred operators)
  fd          Fast Downward (``up-fast-downward`` wheel), ``lazy_greedy([ff], preferred=[ff])``
  pyperplan   pyperplan 2.1, ``-s gbf -H hff``

The peers are GPL and are only run as processes, never imported.
Usage: .venv/bin/python bench/bench_classical.py [--timeout 60] [--only barman,sokoban/p0?]
        [--peers fd,pyperplan] [--suite DIR] [--json results.json]
``--only`` takes comma-separated shell patterns matched against the domain name and
against ``domain/problem`` (``barman``, ``sokoban/p0?``, ``*/p01``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import ipc_tasks

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


@dataclass
class Run:
    planner: str
    domain: str
    task: str
    solved: bool
    cpu: float
    length: int | None
    valid: bool | None


# Every planner runs with Python's bytecode cache on (and warmed once), as users run them.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str], cwd: Path, timeout: float) -> tuple[bool, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = subprocess.run(
            cmd, cwd=cwd, capture_output=True, timeout=timeout, check=False, env=CHILD_ENV
        )
        ok = proc.returncode == 0
    except subprocess.TimeoutExpired:
        ok = False
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return ok, cpu


def fd_driver() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("up_fast_downward")
    if spec is None or spec.origin is None:
        raise SystemExit("up-fast-downward is not installed: make install")
    return Path(spec.origin).parent / "downward" / "fast-downward.py"


def plan_length(path: Path) -> int | None:
    if not path.exists():
        return None
    lines = [ln for ln in path.read_text().splitlines() if ln.strip().startswith("(")]
    return len(lines)


def run_plansmith(domain: Path, task: Path, work: Path, timeout: float) -> tuple[Run, Path]:
    out = work / "plan.json"
    cmd = [str(BIN / "plansmith"), "plan", str(domain), str(task), "--format", "json"]
    ok, cpu = timed([*cmd, "--output", str(out)], work, timeout)
    length = len(json.loads(out.read_text())["steps"]) if ok and out.exists() else None
    return Run("plansmith", domain.parent.name, task.name, ok, cpu, length, None), out


def run_fd(domain: Path, task: Path, work: Path, timeout: float) -> Run:
    out = work / "fd.plan"
    cmd = [sys.executable, str(fd_driver()), "--plan-file", str(out), str(domain), str(task)]
    cmd += ["--evaluator", "h=ff()", "--search", "lazy_greedy([h], preferred=[h])"]
    ok, cpu = timed(cmd, work, timeout)
    length = plan_length(out) if ok else None
    return Run("fd", domain.parent.name, task.name, ok and length is not None, cpu, length, None)


def run_pyperplan(domain: Path, task: Path, work: Path, timeout: float) -> Run:
    local_domain, local_task = work / "domain.pddl", work / task.name
    shutil.copy(domain, local_domain)
    shutil.copy(task, local_task)
    cmd = [str(BIN / "pyperplan"), "-s", "gbf", "-H", "hff", str(local_domain), str(local_task)]
    ok, cpu = timed(cmd, work, timeout)
    length = plan_length(work / f"{task.name}.soln") if ok else None
    return Run(
        "pyperplan", domain.parent.name, task.name, ok and length is not None, cpu, length, None
    )


def check_plan(domain: Path, task: Path, plan_json: Path) -> bool:
    from plansmith.formats import load_domain, load_problem, parse_plan_json
    from plansmith.planning import validate

    try:
        problem = load_problem(task, load_domain(domain))
        validate(parse_plan_json(plan_json.read_text()), problem)
    except Exception:
        return False
    return True


def warm_bytecode() -> None:
    """Compile every package the planners import, so no run pays for compiling."""
    import compileall
    import sysconfig

    for folder in (ROOT / "src", Path(sysconfig.get_paths()["purelib"])):
        compileall.compile_dir(str(folder), quiet=2, workers=0)


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument(
        "--only", default="", metavar="PATTERN", help="comma-separated: domain or domain/pNN"
    )
    parser.add_argument("--peers", default="fd,pyperplan")
    ipc_tasks.add_suite_option(parser)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    suite = ipc_tasks.resolve(args.suite)
    selection = ipc_tasks.load(suite, [p for p in args.only.split(",") if p])
    warm_bytecode()
    peers = [p for p in args.peers.split(",") if p]
    runners = {"fd": run_fd, "pyperplan": run_pyperplan}
    results: list[Run] = []
    print(f"suite: {suite} ({len(selection)} tasks), limit {args.timeout:g} s per task")
    header = f"{'task':<24}{'plansmith':>12}{'len':>5}{'ok':>4}"
    header += "".join(f"{p:>12}{'len':>5}" for p in peers)
    print(header)
    for task in selection:
        domain, problem = task.domain_file, task.problem_file
        line = f"{task.label:<24}"
        with tempfile.TemporaryDirectory() as tmp:
            mine, plan_json = run_plansmith(domain, problem, Path(tmp), args.timeout)
            mine.valid = mine.solved and check_plan(domain, problem, plan_json)
        results.append(mine)
        line += f"{mine.cpu:>12.3f}{mine.length or '-':>5}{'y' if mine.valid else 'n':>4}"
        for peer in peers:
            if peer == "pyperplan" and not task.pyperplan:
                line += f"{'n/a':>12}{'-':>5}"
                continue
            with tempfile.TemporaryDirectory() as peer_tmp:
                run = runners[peer](domain, problem, Path(peer_tmp), args.timeout)
            results.append(run)
            line += f"{run.cpu:>12.3f}{run.length or '-':>5}"
        print(line, flush=True)
    print()
    mine_runs = [r for r in results if r.planner == "plansmith"]
    solved = sum(r.solved and bool(r.valid) for r in mine_runs)
    print(f"plansmith coverage: {solved}/{len(mine_runs)} solved with a valid plan")
    for peer in peers:
        peer_runs = {(r.domain, r.task): r for r in results if r.planner == peer}
        both = [(m, peer_runs.get((m.domain, m.task))) for m in mine_runs]
        pairs = [(m, p) for m, p in both if p is not None and m.solved and p.solved]
        ratio = geomean([m.cpu / p.cpu for m, p in pairs])
        cover = sum(r.solved for r in peer_runs.values())
        print(
            f"{peer}: coverage {cover}/{len(peer_runs)}; geometric mean CPU ratio "
            f"plansmith/{peer} = {ratio:.3f} over {len(pairs)} tasks solved by both "
            f"({1 / ratio:.2f}x {'faster' if ratio < 1 else 'slower'})"
        )
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=2))


if __name__ == "__main__":
    main()
