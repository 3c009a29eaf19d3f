"""plansmith through its three entry points against GTPyhop 2.0.2, on every problem of
every folder domain GTPyhop ships, in the same run (issue 34).

A folder domain is a folder of ``gtpyhop/examples/`` with ``domain.py`` and
``problems.py`` (33 folders). Each is loaded three times in this process: with
the real ``gtpyhop``, and twice with plansmith's stand-in
(``plansmith.compat.gtpyhop``). Each problem is then planned, the figure being
CPU time (``time.process_time``) per call, loading not counted:

* GTPyhop: its own ``find_plan`` (the strategy the folder's code chose on import,
  else GTPyhop's default, iterative greedy), verbose 0, its structured log
  emptied between batches (outside the timed calls);
* S: ``import gtpyhop`` mapped to the stand-in: its ``find_plan`` on the same
  problem (the folder's chosen strategy, else plansmith's backtracking search);
* D: ``load_gtpyhop_package`` + ``plan_python`` as docs/htn.md gives it:
  ``plan_python(domain, problem, PlanOptions(time_limit=...))`` (strategy
  ``dfs``), called again and again on the same loaded objects, as a user
  planning several times would; it builds the plan artifact with its hashes.

Each planner's calls are timed in batches of at least ``--batch`` CPU seconds
(at least one call), ``--rounds`` batches each, GTPyhop, S and D taking turns;
the figure is the lowest batch mean. A case counts in the ratios only if GTPyhop
and plansmith both return a plan within ``--time-limit`` seconds (wall time for
GTPyhop and S, interrupted by a real-time timer; D's own CPU time limit); the
others are counted apart: no plan, time limit, or an exception.

``--c`` adds C: ``plansmith plan FOLDER --problem NAME`` (the whole process,
which re-executes itself under ``PYTHONHASHSEED=0``) against a ``python -c``
process that imports GTPyhop, loads the folder the same way (importlib) and
calls ``find_plan``, both without ``PYTHONHASHSEED`` (as a user runs them, so
plansmith pays for its re-execution; ``--c-hash-seed 0`` sets it for both, and
then plansmith does not re-execute); CPU time of the process and its children
(``RUSAGE_CHILDREN``), lowest of ``--c-runs``. ``--c-every N`` runs C on every
N-th case only (the whole set takes minutes). The local ``plansmith plan`` runs with
``PLANSMITH_PLAN_SERVER=0``: a plan server of the user's does not serve it.

``--c-server`` adds C through a plan server (``plansmith plan-server``, docs/htn.md):
one is started for the run, in a private ``XDG_RUNTIME_DIR``, and each case's
``plansmith plan`` process hands its work over to it. Its figure counts all the CPU
time spent for the plan, so that none is hidden in the server: the client process's
(``RUSAGE_CHILDREN``) plus the server's own and its children's (the forked child that
plans) between two ``status`` requests before and after the run (the server's
``RUSAGE_SELF`` and ``RUSAGE_CHILDREN``; the second request's handling is counted
too). A run the server did not serve (the client reports each served plan's child CPU
time to ``PLANSMITH_PLAN_SERVER_REPORT``) is run again after restarting the server.

Usage: .venv/bin/python bench/bench_gtpyhop_entry.py [--only PATTERN,...] [--c [--c-every 4]]
       [--c-server] [--time-limit 5] [--batch 0.02] [--rounds 2] [--c-hash-seed 0]
       [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import functools
import io
import json
import math
import os
import platform
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("GTPYHOP_QUIET", "true")

with contextlib.redirect_stdout(io.StringIO()):
    import gtpyhop as real  # type: ignore[import-untyped]

from plansmith.compat import gtpyhop as stand_in
from plansmith.errors import LimitReachedError, UnsolvableError
from plansmith.formats import load_gtpyhop_problems
from plansmith.model import PyProblem
from plansmith.planning import PlanOptions
from plansmith.planning.htn import plan_python, without_unchanged

EXAMPLES = Path(real.__file__).parent / "examples"
GTPYHOP_MAIN = sys.modules["gtpyhop.main"]
ROOT = Path(__file__).resolve().parents[1]
PLANSMITH = Path(sys.executable).parent / "plansmith"


class Timeout(BaseException):  # not an Exception: domain code may catch those
    """The time limit, raised by the real-time timer."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise Timeout after ``seconds`` of wall time. A real-time timer: on this
    kernel, an armed ITIMER_PROF or ITIMER_VIRTUAL stops CLOCK_PROCESS_CPUTIME_ID
    from advancing, so a CPU timer would zero the figures."""

    def stop(signum: int, frame: Any) -> None:
        raise Timeout

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def folders(only: list[str]) -> list[Path]:
    found = sorted(
        p.parent for p in EXAMPLES.rglob("domain.py") if (p.parent / "problems.py").is_file()
    )
    rel = [f for f in found if "__pycache__" not in f.parts]
    if not only:
        return rel
    return [
        f
        for f in rel
        if any(fnmatch.fnmatch(str(f.relative_to(EXAMPLES)), f"*{pattern}*") for pattern in only)
    ]


def quietly() -> contextlib.AbstractContextManager[Any]:
    return contextlib.redirect_stdout(io.StringIO())


def clear_gtpyhop_log() -> None:
    logger = getattr(GTPYHOP_MAIN, "_global_logger", None)
    if logger is not None:
        logger.structured_handler.clear()


def load(folder: Path) -> dict[str, Any]:
    """The folder loaded for GTPyhop, for S and for D, each with the strategy its code chose."""
    from plansmith.compat._gtpyhop_objects import RUNTIME

    with quietly():
        real.set_recursive_planning(False)  # GTPyhop's default, as after `import gtpyhop`
        real_domain, real_problems = load_gtpyhop_problems(folder, stand_in=real)
        real.set_verbose_level(0)
    gtpyhop_domain = real.find_domain_by_name(real_domain.name)
    vars(RUNTIME).update(FRESH_RUNTIME)
    RUNTIME.domains = []
    with quietly():
        s_domain, s_problems = load_gtpyhop_problems(folder, stand_in=stand_in)
        stand_in.set_verbose_level(0)
    s_runtime = dict(vars(RUNTIME))
    s_object = stand_in.find_domain_by_name(s_domain.name)
    return {
        "gtpyhop_domain": gtpyhop_domain,
        "gtpyhop_problems": real_problems,
        "s_domain": s_object,
        "s_runtime": s_runtime,
        "d_domain": s_domain,
        "d_problems": s_problems,
    }


def run_gtpyhop(domain: Any, problem: PyProblem) -> Any:
    real.set_current_domain(domain)
    return real.find_plan(problem.state, list(problem.todo))


def run_s(domain: Any, problem: PyProblem) -> Any:
    stand_in.set_current_domain(domain)
    return stand_in.find_plan(problem.state, list(problem.todo))


def batches(
    planners: dict[str, Callable[[], Any]], batch: float, rounds: int, limit: float
) -> dict[str, dict[str, Any]]:
    """Each planner's lowest batch mean (CPU s a call), its first result, or its failure."""
    out: dict[str, dict[str, Any]] = {}
    for name, fn in planners.items():  # the first call: the answer, and whether it fits
        clear_gtpyhop_log()
        start = time.process_time()
        try:
            with quietly(), time_limit(limit):
                result = fn()
        except Timeout:
            out[name] = {"outcome": "time limit"}
            continue
        except LimitReachedError:
            out[name] = {"outcome": "time limit"}
            continue
        except UnsolvableError:
            out[name] = {"outcome": "no plan"}
            continue
        except Exception as error:  # the planner's failure is a result
            out[name] = {"outcome": f"{type(error).__name__}"}
            continue
        spent = time.process_time() - start
        if result is False:
            out[name] = {"outcome": "no plan"}
            continue
        out[name] = {"outcome": "plan", "result": result, "best": spent, "calls": 1}
    for _ in range(rounds):
        for name, fn in planners.items():
            row = out[name]
            if row["outcome"] != "plan":
                continue
            clear_gtpyhop_log()
            n = max(1, math.ceil(batch / max(row["best"], 1e-7)))
            with quietly():
                start = time.process_time()
                for _ in range(n):
                    fn()
                mean = (time.process_time() - start) / n
            row["best"] = min(row["best"], mean)
            row["calls"] += n
    return out


def actions_of(result: Any) -> list[Any]:
    if isinstance(result, list):
        return result
    return [(s.action, *s.args) for s in result.steps]


def same_plan(domain: Any, problem: PyProblem, mine: Any, theirs: list[Any]) -> bool | None:
    """Whether plansmith's plan, without its steps that change nothing, is GTPyhop's
    (None: it cannot be replayed from the problem's state, which the domain's code
    changed while planning)."""
    try:
        kept = without_unchanged(domain, problem.state, actions_of(mine))
    except Exception:
        return None
    return [tuple(a) for a in kept] == [tuple(a) for a in theirs]


def run_cases(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    for folder in folders(args.only):
        name = str(folder.relative_to(EXAMPLES))
        try:
            loaded = load(folder)
        except Exception as error:
            print(f"  {name}: load failed: {error}", file=sys.stderr)
            continue
        from plansmith.compat._gtpyhop_objects import RUNTIME

        options = PlanOptions(time_limit=args.time_limit)
        for g_problem, d_problem in zip(
            loaded["gtpyhop_problems"], loaded["d_problems"], strict=True
        ):
            vars(RUNTIME).update(loaded["s_runtime"])
            planners: dict[str, Callable[[], Any]] = {
                "gtpyhop": functools.partial(run_gtpyhop, loaded["gtpyhop_domain"], g_problem),
                "S": functools.partial(run_s, loaded["s_domain"], d_problem),
                "D": functools.partial(plan_python, loaded["d_domain"], d_problem, options),
            }
            found = batches(planners, args.batch, args.rounds, args.time_limit)
            row: dict[str, Any] = {
                "case": f"{name}/{g_problem.name}",
                "folder": str(folder),
                "problem": g_problem.name,
            }
            for key, res in found.items():
                row[key] = {k: v for k, v in res.items() if k != "result"}
            g = found["gtpyhop"]
            if g["outcome"] == "plan":
                for key in ("S", "D"):
                    if found[key]["outcome"] == "plan":
                        row[key]["same_plan"] = same_plan(
                            loaded["d_domain"], d_problem, found[key]["result"], g["result"]
                        )
            rows.append(row)
        print(f"  {name}: {len(loaded['d_problems'])} problems", file=sys.stderr, flush=True)
    return rows


# --- C: whole processes ------------------------------------------------------------

PEER_SCRIPT = r"""
import contextlib, importlib, importlib.util, io, os, sys
from types import ModuleType
os.environ.setdefault("GTPYHOP_QUIET", "true")
folder, wanted = sys.argv[1], sys.argv[2]
with contextlib.redirect_stdout(io.StringIO()):
    import gtpyhop
    name = "_peer_pkg"
    init = os.path.join(folder, "__init__.py")
    if os.path.isfile(init):
        spec = importlib.util.spec_from_file_location(
            name, init, submodule_search_locations=[folder]
        )
        pkg = importlib.util.module_from_spec(spec)
        sys.modules[name] = pkg
        spec.loader.exec_module(pkg)
    else:
        pkg = ModuleType(name)
        pkg.__path__ = [folder]
        sys.modules[name] = pkg
    domain = importlib.import_module(name + ".domain")
    problems = importlib.import_module(name + ".problems")
    getter = getattr(problems, "get_problems", None) or getattr(pkg, "get_problems")
    found = getter()
    value = next(v for k, v in found.items() if str(k) == wanted)
    state, goal = value[0], value[1]
    if isinstance(goal, dict):
        mg = gtpyhop.Multigoal("goal_" + wanted)
        if goal and all(isinstance(v, dict) for v in goal.values()):
            for var, w in goal.items():
                setattr(mg, var, dict(w))
        else:
            var = next(iter(gtpyhop.get_current_domain()._unigoal_method_dict))
            setattr(mg, var, dict(goal))
        todo = [mg]
    elif type(goal).__name__ == "Multigoal":
        todo = [goal]
    else:
        todo = list(goal)
    the_domain = getattr(domain, "the_domain", None) or gtpyhop.get_current_domain()
    gtpyhop.set_current_domain(the_domain)
    gtpyhop.set_verbose_level(0)
    plan = gtpyhop.find_plan(state, todo)
print("plan" if plan is not False else "no plan")
"""


C_HASH_SEED = ""  # --c-hash-seed: set for both processes (then plansmith does not re-execute)
SERVER_ENV: dict[str, str] = {}  # --c-server: the variables that name the bench's plan server
AUTO_ENV: dict[str, str] = {}  # --c-auto: the private run folder of the servers plans start
AUTO_TOTALS = {"auto": 0.0, "gtpyhop": 0.0}  # --c-auto: every run's CPU, where both planned
AUTO_COLD: list[float] = []  # --c-auto: the first run's CPU (it started the server)
AUTO_STARTS: list[int] = []  # --c-auto: how many servers the runs started


def child_cpu(
    command: list[str], timeout: float, *, server: bool = False, auto: bool = False
) -> tuple[float, str]:
    """CPU seconds (user + system) of ``command`` and its children, and its outcome;
    ``server``: ``plansmith plan`` through the bench's plan server; ``auto``: with the
    default settings (a plan server it starts, or the one an earlier run started)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}  # as a user runs it
    if C_HASH_SEED:
        env["PYTHONHASHSEED"] = C_HASH_SEED
    env["GTPYHOP_QUIET"] = "true"
    env["PLANSMITH_PLAN_SERVER"] = "0"  # a user's plan server does not serve the local runs
    if server:
        env.pop("PLANSMITH_PLAN_SERVER")
        env.update(SERVER_ENV)
    if auto:
        env.pop("PLANSMITH_PLAN_SERVER")
        env.update(AUTO_ENV)
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        return math.nan, "time limit"
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    spent = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode == 0:
        return spent, "no plan" if done.stdout.strip() == "no plan" else "plan"
    return spent, {3: "no plan", 4: "time limit"}.get(done.returncode, f"exit {done.returncode}")


class PlanServer:
    """The bench's own plan server (``--c-server``), in a private run folder."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="psb-", dir="/tmp"))  # a short socket path
        (self.root / "run").mkdir(mode=0o700)
        self.report = self.root / "report.txt"
        SERVER_ENV.update(
            XDG_RUNTIME_DIR=str(self.root / "run"),
            PLANSMITH_PLAN_SERVER_REPORT=str(self.report),
        )
        os.environ["XDG_RUNTIME_DIR"] = SERVER_ENV["XDG_RUNTIME_DIR"]  # for status requests
        self.restarts = -1
        self.start()

    def command(self, *words: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, **SERVER_ENV}
        return subprocess.run(
            [str(PLANSMITH), "plan-server", *words],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )

    def start(self) -> None:
        done = self.command("start", "--idle", "3600")
        if done.returncode != 0:
            raise SystemExit(f"the plan server did not start: {done.stderr}")
        self.restarts += 1

    def cpu(self) -> float | None:
        """CPU seconds of the server and its children so far; None when it is gone."""
        from plansmith.cli._plan_server import status_figures

        figures = status_figures()
        if figures is None:
            return None
        return float(figures["cpu_s"]) + float(figures["children_cpu_s"])

    def served(self) -> list[float]:
        if not self.report.exists():
            return []
        return [float(line) for line in self.report.read_text().split()]

    def run(self, command: list[str], timeout: float) -> tuple[float, str, dict[str, float]]:
        """CPU seconds of ``command`` through the server (client + server + its child),
        its outcome and the parts; run again after a restart when it was not served."""
        for _ in range(3):
            before = self.cpu()
            if before is None:
                self.start()
                continue
            served = len(self.served())
            spent, outcome = child_cpu(command, timeout, server=True)
            after = self.cpu()
            reports = self.served()
            if after is None or len(reports) != served + 1:
                continue  # planned locally (the server went away or refused): again
            parts = {"client": spent, "server": after - before - reports[-1], "child": reports[-1]}
            return spent + after - before, outcome, parts
        return math.nan, "not served", {}

    def stop(self) -> None:
        self.command("stop")
        shutil.rmtree(self.root, ignore_errors=True)


class AutoServers:
    """``--c-auto``: ``plansmith plan`` as a user runs it, with the default settings: the
    first run starts a plan server (``_plan_client.start_and_hand_over``), the later
    ones hand over to it. All the CPU is counted: the client process's and the
    server's own and its children's between a ``status`` before and after the run (0
    before, when none listens: the run that starts one pays for its start and its
    warm-up). The first run of all is kept apart too (``cold``)."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="psa-", dir="/tmp"))  # a short socket path
        (self.root / "run").mkdir(mode=0o700)
        AUTO_ENV.update(XDG_RUNTIME_DIR=str(self.root / "run"))
        self.cold: float | None = None
        self.total = 0.0

    def cpu(self) -> float:
        from plansmith.cli._plan_server import status_figures

        saved = os.environ.get("XDG_RUNTIME_DIR")
        os.environ["XDG_RUNTIME_DIR"] = AUTO_ENV["XDG_RUNTIME_DIR"]
        try:
            figures = status_figures()
        finally:
            if saved is None:
                os.environ.pop("XDG_RUNTIME_DIR", None)
            else:
                os.environ["XDG_RUNTIME_DIR"] = saved
        if figures is None:
            return 0.0
        return float(figures["cpu_s"]) + float(figures["children_cpu_s"])

    def run(self, command: list[str], timeout: float) -> tuple[float, str]:
        before = self.cpu()
        spent, outcome = child_cpu(command, timeout, auto=True)
        after = self.cpu()
        whole = spent + max(0.0, after - before)  # a server that ended meanwhile: its client's
        if self.cold is None:
            self.cold = whole
        self.total += whole
        return whole, outcome

    def stop(self) -> None:
        env = {**os.environ, **AUTO_ENV}
        stop = [str(PLANSMITH), "plan-server", "stop"]
        subprocess.run(stop, env=env, capture_output=True, check=False)
        log = self.root / "run" / "plansmith" / "plan-server.log"
        text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        AUTO_STARTS.append(text.count(" listening on "))  # servers started by the runs
        shutil.rmtree(self.root, ignore_errors=True)


def run_c(
    rows: list[dict[str, Any]],
    every: int,
    runs: int,
    limit: float,
    server: PlanServer | None = None,
    *,
    auto: AutoServers | None = None,
) -> None:
    chosen = rows[::every]
    for i, row in enumerate(chosen):
        peer = [sys.executable, "-c", PEER_SCRIPT, row["folder"], row["problem"]]
        ours = [
            str(PLANSMITH),
            "plan",
            row["folder"],
            "--problem",
            row["problem"],
            "--time-limit",
            str(limit),
        ]
        best: dict[str, float] = {
            "gtpyhop": math.inf, "plansmith": math.inf, "server": math.inf, "auto": math.inf
        }  # fmt: skip
        outcome: dict[str, str] = {}
        parts: dict[str, float] = {}
        for _ in range(runs):
            last_gtpyhop = math.nan
            for key, cmd in (("gtpyhop", peer), ("plansmith", ours)):
                spent, out = child_cpu(cmd, limit * 3 + 10)
                outcome[key] = out
                if out == "plan":
                    best[key] = min(best[key], spent)
                if key == "gtpyhop":
                    last_gtpyhop = spent
            if server is not None:
                spent, out, split = server.run(ours, limit * 3 + 10)
                outcome["server"] = out
                if out == "plan" and spent < best["server"]:
                    best["server"], parts = spent, split
            if auto is not None:
                spent, out = auto.run(ours, limit * 3 + 10)
                outcome["auto"] = out
                if out == "plan":
                    best["auto"] = min(best["auto"], spent)
                if out == "plan" and outcome.get("gtpyhop") == "plan":  # both: in the totals
                    AUTO_TOTALS["auto"] += spent
                    AUTO_TOTALS["gtpyhop"] += last_gtpyhop
        row["C"] = {"gtpyhop": best["gtpyhop"], "plansmith": best["plansmith"], "outcome": outcome}
        if server is not None:
            row["C"]["server"] = best["server"]
            row["C"]["server_parts"] = parts
        if auto is not None:
            row["C"]["auto"] = best["auto"]
        if (i + 1) % 10 == 0:
            print(f"  C: {i + 1}/{len(chosen)}", file=sys.stderr, flush=True)


# --- report ------------------------------------------------------------------------


def geo(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("S", "D"):
        ratios, over50, slower, not_same, unknown = [], [], 0, 0, 0
        apart: dict[str, int] = {}
        for r in rows:
            g, m = r["gtpyhop"], r[key]
            if g["outcome"] == "plan" and m["outcome"] == "plan":
                ratio = m["best"] / g["best"]
                ratios.append(ratio)
                if g["best"] > 0.05:
                    over50.append(ratio)
                slower += ratio > 1
                not_same += m.get("same_plan", True) is False
                unknown += m.get("same_plan", True) is None
            else:
                label = f"GTPyhop {g['outcome']}, plansmith {m['outcome']}"
                apart[label] = apart.get(label, 0) + 1
        out[key] = {
            "cases": len(ratios),
            "geo_mean": geo(ratios),
            "geo_mean_over_50ms": geo(over50),
            "cases_over_50ms": len(over50),
            "slower": slower,
            "plan_differs": not_same,
            "plan_not_replayable": unknown,
            "apart": apart,
        }
    c_rows = [r for r in rows if "C" in r]
    if c_rows and "server" in c_rows[0]["C"]:
        out["C_server"] = c_figures(c_rows, "server")
    if c_rows and "auto" in c_rows[0]["C"]:
        out["C_auto"] = c_figures(c_rows, "auto")
        out["C_auto"]["total_ratio"] = (
            AUTO_TOTALS["auto"] / AUTO_TOTALS["gtpyhop"] if AUTO_TOTALS["gtpyhop"] else math.nan
        )
        out["C_auto"]["cold_first_call_s"] = AUTO_COLD[0] if AUTO_COLD else math.nan
        out["C_auto"]["servers_started"] = AUTO_STARTS[0] if AUTO_STARTS else 0
    if c_rows:
        c_ratios: list[float] = []
        c_slower, over50_slower, over50_n = 0, 0, 0
        for r in c_rows:
            c = r["C"]
            if math.isfinite(c["gtpyhop"]) and math.isfinite(c["plansmith"]):
                ratio = c["plansmith"] / c["gtpyhop"]
                c_ratios.append(ratio)
                c_slower += ratio > 1
                if r["gtpyhop"].get("best", 0) > 0.05:
                    over50_n += 1
                    over50_slower += ratio > 1
        out["C"] = {
            "sampled": len(c_rows),
            "cases": len(c_ratios),
            "geo_mean": geo(c_ratios),
            "slower": c_slower,
            "over_50ms": over50_n,
            "over_50ms_slower": over50_slower,
        }
    return out


def c_figures(c_rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """C's figures for plansmith's ``key`` ("plansmith": local, "server": plan server)."""
    ratios: list[float] = []
    slower, over50_slower, over50_n = 0, 0, 0
    parts: dict[str, list[float]] = {"client": [], "server": [], "child": []}
    for r in c_rows:
        c = r["C"]
        if math.isfinite(c["gtpyhop"]) and math.isfinite(c[key]):
            ratio = c[key] / c["gtpyhop"]
            ratios.append(ratio)
            slower += ratio > 1
            if r["gtpyhop"].get("best", 0) > 0.05:
                over50_n += 1
                over50_slower += ratio > 1
            for part, value in c.get("server_parts", {}).items():
                parts[part].append(value)
    return {
        "sampled": len(c_rows),
        "cases": len(ratios),
        "geo_mean": geo(ratios),
        "slower": slower,
        "over_50ms": over50_n,
        "over_50ms_slower": over50_slower,
        "median_parts_ms": {
            part: sorted(v)[len(v) // 2] * 1000
            for part, v in parts.items()
            if v and key != "plansmith"
        },
    }


def print_report(
    rows: list[dict[str, Any]], figures: dict[str, Any], args: argparse.Namespace
) -> None:
    print(
        "| case | GTPyhop ms | S ms | S ratio | D ms | D ratio "
        "| C GTPyhop s | C plansmith s | C ratio | C server s | C server ratio "
        "| C default s | C default ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

    def cell(r: dict[str, Any], key: str) -> tuple[str, str]:
        g, m = r["gtpyhop"], r[key]
        if m["outcome"] != "plan":
            return m["outcome"], "-"
        ms = f"{m['best'] * 1000:.3f}"
        if g["outcome"] != "plan":
            return ms, "-"
        return ms, f"{m['best'] / g['best']:.2f}"

    for r in rows:
        g = r["gtpyhop"]
        g_ms = f"{g['best'] * 1000:.3f}" if g["outcome"] == "plan" else g["outcome"]
        s_ms, s_ratio = cell(r, "S")
        d_ms, d_ratio = cell(r, "D")
        c = r.get("C")
        if c is None:
            c_cells = "| | | | | | |"
        else:
            gc, pc, sc = c["gtpyhop"], c["plansmith"], c.get("server", math.nan)
            ac = c.get("auto", math.nan)
            ratio = f"{pc / gc:.2f}" if math.isfinite(gc) and math.isfinite(pc) else "-"
            s_ratio = f"{sc / gc:.2f}" if math.isfinite(gc) and math.isfinite(sc) else "-"
            a_ratio = f"{ac / gc:.2f}" if math.isfinite(gc) and math.isfinite(ac) else "-"
            c_cells = f"{gc:.3f} | {pc:.3f} | {ratio} | {sc:.3f} | {s_ratio} | {ac:.3f} | {a_ratio}"
        print(f"| {r['case']} | {g_ms} | {s_ms} | {s_ratio} | {d_ms} | {d_ratio} | {c_cells} |")
    print()
    for key in ("S", "D"):
        f = figures[key]
        print(
            f"{key}: plansmith/GTPyhop CPU geo-mean {f['geo_mean']:.3f} over {f['cases']} cases "
            f"(both plan); {f['geo_mean_over_50ms']:.3f} over the {f['cases_over_50ms']} where "
            f"GTPyhop needs over 50 ms; plansmith slower in {f['slower']}; plan differs "
            f"(unchanged steps removed) in {f['plan_differs']}, not replayable in "
            f"{f['plan_not_replayable']}"
        )
        for label, n in sorted(f["apart"].items()):
            print(f"    apart: {label}: {n}")
    if "C" in figures:
        f = figures["C"]
        print(
            f"C: whole-process CPU geo-mean {f['geo_mean']:.3f} over {f['cases']} of "
            f"{f['sampled']} sampled cases (every {args.c_every}th, PYTHONHASHSEED "
            f"{args.c_hash_seed or 'unset'}); plansmith slower in "
            f"{f['slower']}; where "
            f"GTPyhop's find_plan needs over 50 ms: {f['over_50ms']} cases, slower in "
            f"{f['over_50ms_slower']}"
        )
    if "C_auto" in figures:
        f = figures["C_auto"]
        print(
            f"C with the default settings (plansmith plan starts a plan server, then hands"
            f" over to it; client + server + its children): geo-mean {f['geo_mean']:.3f} over"
            f" {f['cases']} of {f['sampled']} sampled cases; plansmith slower in {f['slower']};"
            f" where GTPyhop's find_plan needs over 50 ms: {f['over_50ms']} cases, slower in"
            f" {f['over_50ms_slower']}; every run's CPU summed (cold start included):"
            f" {f['total_ratio']:.3f}; the first run (it started the server):"
            f" {f['cold_first_call_s'] * 1000:.0f} ms; servers started: {f['servers_started']}"
        )
    if "C_server" in figures:
        f = figures["C_server"]
        parts = ", ".join(f"{k} {v:.1f}" for k, v in f["median_parts_ms"].items())
        print(
            f"C through the plan server: whole CPU (client + server + its child) geo-mean "
            f"{f['geo_mean']:.3f} over {f['cases']} of {f['sampled']} sampled cases; plansmith "
            f"slower in {f['slower']}; where GTPyhop's find_plan needs over 50 ms: "
            f"{f['over_50ms']} cases, slower in {f['over_50ms_slower']}; median ms: {parts}"
        )
    print(
        f"time limit {args.time_limit} s (wall for GTPyhop and S, CPU for D), "
        f"batches of >= {args.batch} s, {args.rounds} rounds; "
        f"Python {platform.python_version()}, gtpyhop {getattr(real, '__version__', '2.0.2')}, "
        f"PYTHONHASHSEED={os.environ.get('PYTHONHASHSEED', 'unset')}, load {os.getloadavg()[0]:.2f}"
    )


FRESH_RUNTIME: dict[str, Any] = {}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", default="", help="comma-separated patterns of folder paths")
    parser.add_argument("--time-limit", type=float, default=5.0, help="seconds a call")
    parser.add_argument("--batch", type=float, default=0.02, help="CPU seconds a batch")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--c", action="store_true", help="also the whole processes (C)")
    parser.add_argument("--c-every", type=int, default=1, help="C on every N-th case")
    parser.add_argument("--c-runs", type=int, default=2, help="C runs a case (lowest kept)")
    parser.add_argument(
        "--c-hash-seed", default="", help="PYTHONHASHSEED for C's processes (default: unset)"
    )
    parser.add_argument(
        "--c-server", action="store_true", help="C also through a plan server (with --c)"
    )
    parser.add_argument(
        "--c-auto",
        action="store_true",
        help="C also with the default settings: a plan server plansmith plan starts (with --c)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from plansmith.compat._gtpyhop_objects import RUNTIME

    FRESH_RUNTIME.update(vars(RUNTIME))
    args.only = [p for p in args.only.split(",") if p]
    global C_HASH_SEED  # noqa: PLW0603 - one setting for the whole run
    C_HASH_SEED = args.c_hash_seed
    rows = run_cases(args)
    if args.c:
        server = PlanServer() if args.c_server else None
        auto = AutoServers() if args.c_auto else None
        try:
            run_c(rows, args.c_every, args.c_runs, args.time_limit, server, auto=auto)
        finally:
            if server is not None:
                server.stop()
                print(f"  plan server restarts: {server.restarts}", file=sys.stderr)
            if auto is not None:
                if auto.cold is not None:
                    AUTO_COLD.append(auto.cold)
                auto.stop()
    figures = summary(rows)
    print_report(rows, figures, args)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "figures": figures}, indent=1, default=str))


if __name__ == "__main__":
    main()
