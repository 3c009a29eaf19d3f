"""plansmith's classical planner against Fast Downward and pyperplan, in the same run.

Each planner runs as its own process on every task of ../shared/benchmarks/pddl
(or $PLANSMITH_PDDL_BENCHMARKS); the figure is whole-process CPU time (user +
system of the child, from ``resource.getrusage(RUSAGE_CHILDREN)``), so Python
start-up, parsing and grounding count for every planner alike.

Configurations:
  plansmith   ``plansmith plan DOMAIN TASK`` (default: lazy GBFS + hFF, preferred operators)
  fd          Fast Downward (``up-fast-downward`` wheel), ``lazy_greedy([ff], preferred=[ff])``
  pyperplan   pyperplan 2.1, ``-s gbf -H hff``

The peers are GPL and are only run as processes, never imported.
Usage: .venv/bin/python bench/bench_classical.py [--timeout 60] [--only blocks,gripper]
        [--peers fd,pyperplan] [--json results.json]
"""

from __future__ import annotations

import argparse
import csv
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

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DEFAULT_SUITE = ROOT.parent / "shared" / "benchmarks" / "pddl"


@dataclass
class Run:
    planner: str
    domain: str
    task: str
    solved: bool
    cpu: float
    length: int | None
    valid: bool | None


def suite_dir() -> Path:
    return Path(os.environ.get("PLANSMITH_PDDL_BENCHMARKS", DEFAULT_SUITE))


def tasks(only: set[str] | None) -> list[tuple[str, Path, Path]]:
    suite = suite_dir()
    rows = csv.DictReader((suite / "expected.csv").open())
    out = []
    for row in rows:
        if only and row["domain"] not in only:
            continue
        folder = suite / row["domain"]
        out.append((row["domain"], folder / "domain.pddl", folder / row["problem"]))
    return out


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
    parser.add_argument("--only", default="")
    parser.add_argument("--peers", default="fd,pyperplan")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    only = {d for d in args.only.split(",") if d} or None
    warm_bytecode()
    peers = [p for p in args.peers.split(",") if p]
    runners = {"fd": run_fd, "pyperplan": run_pyperplan}
    results: list[Run] = []
    header = f"{'task':<24}{'plansmith':>12}{'len':>5}{'ok':>4}"
    header += "".join(f"{p:>12}{'len':>5}" for p in peers)
    print(header)
    for domain_name, domain, task in tasks(only):
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            mine, plan_json = run_plansmith(domain, task, work, args.timeout)
            mine.valid = mine.solved and check_plan(domain, task, plan_json)
            row = [mine]
            for peer in peers:
                with tempfile.TemporaryDirectory() as peer_tmp:
                    row.append(runners[peer](domain, task, Path(peer_tmp), args.timeout))
        results.extend(row)
        line = f"{domain_name + '/' + task.stem:<24}"
        line += f"{mine.cpu:>12.3f}{mine.length or '-':>5}{'y' if mine.valid else 'n':>4}"
        line += "".join(f"{r.cpu:>12.3f}{r.length or '-':>5}" for r in row[1:])
        print(line, flush=True)
    print()
    mine_runs = [r for r in results if r.planner == "plansmith"]
    solved = sum(r.solved and bool(r.valid) for r in mine_runs)
    print(f"plansmith coverage: {solved}/{len(mine_runs)} solved with a valid plan")
    for peer in peers:
        peer_runs = {(r.domain, r.task): r for r in results if r.planner == peer}
        both = [(m, peer_runs[(m.domain, m.task)]) for m in mine_runs]
        both = [(m, p) for m, p in both if m.solved and p.solved]
        ratio = geomean([m.cpu / p.cpu for m, p in both])
        cover = sum(r.solved for r in peer_runs.values())
        print(
            f"{peer}: coverage {cover}/{len(peer_runs)}; geometric mean CPU ratio "
            f"plansmith/{peer} = {ratio:.3f} over {len(both)} tasks solved by both "
            f"({1 / ratio:.2f}x {'faster' if ratio < 1 else 'slower'})"
        )
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=2))


if __name__ == "__main__":
    main()
