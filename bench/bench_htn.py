"""plansmith's HTN planner against GTPyhop 2.0.2 on GTPyhop's own domains, in the same run.

Both planners run in this process on the same domain code, loaded twice: once
with the real ``gtpyhop`` module, once with plansmith's stand-in
(``plansmith.compat.gtpyhop``). The figure is CPU time (``time.process_time``)
of planning alone; loading the domain is not counted. Cases:

* blocks_htn (GTPyhop's own methods for Gupta & Nau's algorithm) on uniformly
  random Blocksworld states of 100, 400, 1600 and 3200 blocks (Slaney &
  Thiebaux's method; the seed is the size). GTPyhop runs with its default
  strategy (iterative greedy); its recursive strategy is tried on 100 and 400
  blocks, where it hits Python's recursion limit. "in domain code" is the CPU
  time spent inside blocks_htn's own functions during a (separate, timed) run
  of plansmith: GTPyhop's time divided by it bounds the speed-up of any planner
  that calls those functions.
* every scenario of gtpyhop.examples.mcp-orchestration (each run repeated until
  0.3 s of CPU has passed; the time is per run).

"same plan" compares GTPyhop's plan with plansmith's after removing the steps
that leave the state unchanged (GTPyhop drops them, plansmith keeps them).
Peak memory for 3200 blocks is the peak resident set (``VmHWM``) of a child
process that builds the problem and plans it, and its increase while planning.

``--breakdown`` prints instead where the time goes in each planner (domain code,
state copies, the rest) and a bare loop that calls the domain's functions with
no planner at all: the bound for any planner.

Usage: .venv/bin/python bench/bench_htn.py [--sizes 100,400,1600,3200] [--json out.json]
       .venv/bin/python bench/bench_htn.py --breakdown --sizes 400,1600
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import itertools
import json
import math
import os
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

os.environ.setdefault("GTPYHOP_QUIET", "true")

with contextlib.redirect_stdout(io.StringIO()):
    import gtpyhop as real

from plansmith.compat import gtpyhop as stand_in
from plansmith.formats import load_gtpyhop_problems, py_domain_of
from plansmith.model import PyDomain, PyProblem
from plansmith.planning.htn import Budget, plan_python, seek_plan, without_unchanged

EXAMPLES = Path(real.__file__).parent / "examples"
MCP = EXAMPLES / "mcp-orchestration"
MCP_DOMAINS = (
    "bio_opentrons",
    "cross_server",
    "drug_target_discovery",
    "omega_hdq_dna_bacteria_flex_96_channel",
    "rikyu_hpc",
    "tnf_cancer_modelling",
)


def quiet() -> contextlib.AbstractContextManager[Any]:
    return contextlib.redirect_stdout(io.StringIO())


def cpu(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


# --- random Blocksworld (uniform over states: Slaney & Thiebaux) -----------------


def uniform_towers(n: int, rng: random.Random) -> dict[int, int | str]:
    """A uniformly random state of n blocks as {block: what it is on}.

    The number of towers k is drawn with weight L(n, k) = C(n-1, k-1) n!/k! (the
    Lah numbers count the states with k towers; computed in log space), then a
    random permutation of the blocks is cut at k-1 random places.
    """
    logs = [
        math.lgamma(n)
        - math.lgamma(k)
        - math.lgamma(n - k + 1)
        + math.lgamma(n + 1)
        - math.lgamma(k + 1)
        for k in range(1, n + 1)
    ]
    top = max(logs)
    weights = [math.exp(x - top) for x in logs]
    towers = rng.choices(range(1, n + 1), weights=weights)[0]
    blocks = list(range(1, n + 1))
    rng.shuffle(blocks)
    cuts = sorted(rng.sample(range(1, n), towers - 1))
    pos: dict[int, int | str] = {}
    for start, end in zip([0, *cuts], [*cuts, n], strict=True):
        tower = blocks[start:end]
        pos[tower[0]] = "table"
        pos.update({above: below for below, above in itertools.pairwise(tower)})
    return pos


def blocks_problem(module: ModuleType, n: int) -> tuple[Any, list[Any]]:
    rng = random.Random(n)
    pos = uniform_towers(n, rng)
    goal = uniform_towers(n, rng)
    below = set(pos.values())
    state = module.State(f"bw{n}")
    state.pos = dict(pos)
    state.clear = {b: b not in below for b in pos}
    state.holding = {"hand": False}
    multigoal = module.Multigoal(f"goal{n}")
    multigoal.pos = dict(goal)
    return state, [("achieve", multigoal)]


@contextlib.contextmanager
def as_gtpyhop(module: ModuleType) -> Iterator[None]:
    saved = {k: v for k, v in sys.modules.items() if k == "gtpyhop" or k.startswith("gtpyhop.")}
    for key in saved:
        del sys.modules[key]
    sys.modules["gtpyhop"] = module
    try:
        yield
    finally:
        del sys.modules["gtpyhop"]
        sys.modules.update(saved)


def blocks_htn(module: ModuleType) -> Any:
    """blocks_htn's methods.py and actions.py, declared into a new domain of ``module``."""
    folder = EXAMPLES / "blocks_htn"
    with as_gtpyhop(module), quiet():
        domain = module.Domain(f"blocks_htn ({module.__name__})")
        for part in ("methods", "actions"):
            name = f"_bench_blocks_htn_{part}_{id(module)}"
            spec = importlib.util.spec_from_file_location(name, folder / f"{part}.py")
            assert spec is not None
            assert spec.loader is not None
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
    return domain


GTPYHOP_MAIN = sys.modules["gtpyhop.main"]
PEER_CONFIG = (
    "GTPyhop 2.0.2 in this process and Python: strategy iterative greedy "
    "(its default, which importing gtpyhop sets), verbose 0, its structured "
    "logging as shipped (on; the entries kept from earlier runs are cleared before each run)"
)


def gtpyhop_use(domain: Any, strategy: bool | str = False) -> None:
    """Set GTPyhop's domain and strategy (outside the timed calls), and drop the log
    entries its global logger kept from earlier runs (they only grow the heap)."""
    with quiet():
        real.set_verbose_level(0)
    real.set_recursive_planning(strategy)
    real.set_current_domain(domain)
    logger = getattr(GTPYHOP_MAIN, "_global_logger", None)
    if logger is not None:
        logger.structured_handler.clear()


def gtpyhop_plan(state: Any, todo: list[Any]) -> Any:
    return real.find_plan(state, todo)


def ours(domain: PyDomain, state: Any, todo: list[Any]) -> tuple[Any, ...]:
    return seek_plan(domain, state, todo, Budget(None, None, time.perf_counter)).actions


class Clock:
    """Sums the CPU time spent inside wrapped domain functions."""

    def __init__(self) -> None:
        self.spent = 0.0

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any) -> Any:
            start = time.process_time()
            try:
                return fn(*args)
            finally:
                self.spent += time.process_time() - start

        timed.__name__ = getattr(fn, "__name__", "fn")
        return timed


def timed_domain(domain: PyDomain, clock: Clock) -> PyDomain:
    """``domain`` with every action and method timed by ``clock``."""
    return PyDomain(
        domain.name,
        actions=tuple((n, clock.wrap(f)) for n, f in domain.actions),
        task_methods=tuple((n, tuple(map(clock.wrap, ms))) for n, ms in domain.task_methods),
        unigoal_methods=tuple((n, tuple(map(clock.wrap, ms))) for n, ms in domain.unigoal_methods),
        multigoal_methods=tuple(map(clock.wrap, domain.multigoal_methods)),
    )


@contextlib.contextmanager
def timing(owner: Any, name: str, clock: Clock) -> Iterator[None]:
    """``owner.name`` timed by ``clock`` for the duration (for the breakdown only)."""
    saved = getattr(owner, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return saved(*args, **kwargs)
        finally:
            clock.spent += time.process_time() - start

    setattr(owner, name, timed)
    try:
        yield
    finally:
        setattr(owner, name, saved)


def bare_loop(domain: PyDomain, state: Any, todo: list[Any]) -> list[Any]:
    """The domain's functions called in the order a planner calls them, with no
    planner: first method only, no copies, no checks (right for blocks_htn only,
    whose tasks have one method that always applies). No planner that hands the
    domain the problem's own objects can take less time than this."""
    actions = dict(domain.actions)
    tasks = dict(domain.task_methods)
    agenda = list(reversed(todo))
    plan = []
    while agenda:
        item = agenda.pop()
        action = actions.get(item[0])
        if action is not None:
            state = action(state, *item[1:])
            plan.append(item)
        else:
            agenda.extend(reversed(tasks[item[0]][0](state, *item[1:])))
    return plan


def shell_of(module: ModuleType, obj: Any) -> Any:
    """A copy of ``obj`` whose attributes are set one by one (kept inline by CPython)."""
    out = object.__new__(type(obj))
    for key, value in vars(obj).items():
        setattr(out, key, value)
    return out


def run_breakdown(sizes: list[int]) -> list[dict[str, Any]]:
    """Where the CPU time goes in each planner on n blocks: one plain run each (the
    total), then one instrumented run each that times the parts."""
    from plansmith.planning.htn import _pystate

    rows = []
    real_domain = blocks_htn(real)
    pydomain = py_domain_of(blocks_htn(stand_in))
    for n in sizes:
        gtpyhop_use(real_domain)
        state, todo = blocks_problem(real, n)
        t_theirs, theirs = cpu(lambda s=state, t=todo: gtpyhop_plan(s, t))
        saved = dict(real_domain._action_dict), dict(real_domain._task_method_dict)
        domain_clock, copy_clock, compare_clock, log_clock = Clock(), Clock(), Clock(), Clock()
        real_domain._action_dict.update(
            {k: domain_clock.wrap(f) for k, f in real_domain._action_dict.items()}
        )
        real_domain._task_method_dict.update(
            {k: [domain_clock.wrap(m) for m in ms] for k, ms in saved[1].items()}
        )
        gtpyhop_use(real_domain)
        state, todo = blocks_problem(real, n)
        try:
            with (
                timing(real.State, "copy", copy_clock),
                timing(real.State, "__ne__", compare_clock),
                timing(GTPYHOP_MAIN, "_log_if_available", log_clock),
            ):
                gtpyhop_plan(state, todo)
        finally:
            real_domain._action_dict.update(saved[0])
            real_domain._task_method_dict.update(saved[1])
        state, todo = blocks_problem(stand_in, n)
        t_ours, mine = cpu(lambda s=state, t=todo: ours(pydomain, s, t))
        ours_clock, apply_clock, shell_clock = Clock(), Clock(), Clock()
        state, todo = blocks_problem(stand_in, n)
        with (
            timing(_pystate.StateOps, "apply", apply_clock),
            timing(_pystate.StateOps, "shell", shell_clock),
        ):
            ours(timed_domain(pydomain, ours_clock), state, todo)
        state, todo = blocks_problem(stand_in, n)
        state = shell_of(stand_in, state)
        todo = [(todo[0][0], shell_of(stand_in, todo[0][1]))]
        t_bare, bare = cpu(lambda s=state, t=todo: bare_loop(pydomain, s, t))
        # apply's time includes the actions', which the domain clock also counts
        actions = {f for _, f in pydomain.actions}
        action_clock = Clock()
        state, todo = blocks_problem(stand_in, n)
        timed_actions = PyDomain(
            pydomain.name,
            actions=tuple((k, action_clock.wrap(f)) for k, f in pydomain.actions),
            task_methods=pydomain.task_methods,
        )
        ours(timed_actions, state, todo)
        assert len(actions) == len(pydomain.actions)
        rows.append(
            {
                "blocks": n,
                "same": list(mine) == theirs == bare,
                "gtpyhop": t_theirs,
                "gtpyhop_domain": domain_clock.spent,
                "gtpyhop_copy": copy_clock.spent,
                "gtpyhop_compare": compare_clock.spent,
                "gtpyhop_log": log_clock.spent,
                "plansmith": t_ours,
                "plansmith_domain": ours_clock.spent,
                "plansmith_apply": max(apply_clock.spent - action_clock.spent, 0.0),
                "plansmith_shell": shell_clock.spent,
                "bare": t_bare,
            }
        )
        print(f"  breakdown {n}: done", file=sys.stderr, flush=True)
    return rows


def breakdown_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| blocks | planner | total CPU s | domain's functions | state copies | "
        "state compare | logging | rest (search) | ratio | bound: bare loop s (ratio) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        g, o = r["gtpyhop"], r["plansmith"]
        g_rest = g - r["gtpyhop_domain"] - r["gtpyhop_copy"] - r["gtpyhop_compare"]
        g_rest -= r["gtpyhop_log"]
        o_rest = o - r["plansmith_domain"] - r["plansmith_apply"] - r["plansmith_shell"]
        lines.append(
            f"| {r['blocks']} | GTPyhop | {g:.3f} | {r['gtpyhop_domain']:.3f} | "
            f"{r['gtpyhop_copy']:.3f} (deepcopy) | {r['gtpyhop_compare']:.3f} | "
            f"{r['gtpyhop_log']:.3f} | {g_rest:.3f} | | |"
        )
        lines.append(
            f"| {r['blocks']} | plansmith | {o:.3f} | {r['plansmith_domain']:.3f} | "
            f"{r['plansmith_apply']:.3f} (apply) + {r['plansmith_shell']:.3f} (shells) | - | - | "
            f"{o_rest:.3f} | {g / o:.1f}x | {r['bare']:.3f} ({g / r['bare']:.1f}x) |"
        )
    lines.append("")
    lines.append(
        "Parts come from a second, instrumented run of each planner (a timer around each "
        "call; the domain's functions timed at the methods and actions the planner calls). "
        "'rest' is the plain run's total less the parts."
    )
    same = all(r["same"] for r in rows)
    lines.append(f"same plan in all three: {'yes' if same else 'NO'}")
    return "\n".join(lines)


# --- the cases -------------------------------------------------------------------


def run_blocks(sizes: list[int]) -> list[dict[str, Any]]:
    real_domain = blocks_htn(real)
    our_domain = blocks_htn(stand_in)
    pydomain = py_domain_of(our_domain)
    rows = []
    for n in sizes:
        state, todo = blocks_problem(real, n)
        gtpyhop_use(real_domain)
        t_theirs, theirs = cpu(lambda s=state, t=todo: gtpyhop_plan(s, t))
        state, todo = blocks_problem(stand_in, n)
        t_ours, mine = cpu(lambda s=state, t=todo: ours(pydomain, s, t))
        problem = PyProblem(f"bw{n}", state, tuple(todo))
        t_artifact, _ = cpu(lambda p=problem: plan_python(pydomain, p))
        state, todo = blocks_problem(stand_in, n)
        clock = Clock()
        ours(timed_domain(pydomain, clock), state, todo)
        t_domain = clock.spent
        recursive = "-"
        if n <= 400:
            state, todo = blocks_problem(real, n)
            gtpyhop_use(real_domain, "recursive_dfs")
            try:
                t_rec, _ = cpu(lambda s=state, t=todo: gtpyhop_plan(s, t))
                recursive = f"{t_rec:.3f}"
            except RecursionError:
                recursive = "RecursionError"
            gtpyhop_use(real_domain)
        rows.append(
            {
                "case": f"blocks_htn {n} blocks",
                "actions": len(mine),
                "gtpyhop": t_theirs,
                "plansmith": t_ours,
                "plansmith_artifact": t_artifact,
                "ratio": t_theirs / t_ours,
                "domain_code": t_domain,
                "bound": t_theirs / t_domain,
                "same": theirs is not False and list(mine) == theirs,
                "gtpyhop_recursive": recursive,
            }
        )
        print(f"  blocks {n}: done", file=sys.stderr, flush=True)
    return rows


def repeat_cpu(fn: Callable[[], Any], budget: float = 0.3) -> tuple[float, Any]:
    runs, total, out = 0, 0.0, None
    while total < budget or runs < 3:
        spent, out = cpu(fn)
        total += spent
        runs += 1
    return total / runs, out


def run_mcp() -> list[dict[str, Any]]:
    rows = []
    for name in MCP_DOMAINS:
        domain, problems = load_gtpyhop_problems(MCP / name, stand_in=stand_in)
        real_pydomain, real_problems = load_gtpyhop_problems(MCP / name, stand_in=real)
        real_domain = real.find_domain_by_name(real_pydomain.name)
        gtpyhop_use(real_domain)
        for problem, theirs_problem in zip(problems, real_problems, strict=True):
            todo = list(problem.todo)
            real_todo = list(theirs_problem.todo)
            t_theirs, theirs = repeat_cpu(
                lambda p=theirs_problem, t=real_todo: gtpyhop_plan(p.state, t)
            )
            t_ours, mine = repeat_cpu(lambda d=domain, p=problem, t=todo: ours(d, p.state, t))
            kept = without_unchanged(domain, problem.state, mine)
            rows.append(
                {
                    "case": f"{name} {problem.name}",
                    "actions": len(mine),
                    "gtpyhop_actions": len(theirs) if theirs is not False else None,
                    "gtpyhop": t_theirs,
                    "plansmith": t_ours,
                    "ratio": t_theirs / t_ours,
                    "same": theirs is not False and kept == theirs,
                }
            )
    return rows


def peak_child(planner: str, n: int) -> dict[str, float]:
    """Peak RSS (MB) of a child process that plans n blocks with ``planner``."""
    out = subprocess.run(
        [sys.executable, __file__, "--peak", planner, "--sizes", str(n)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def peak_rss_mb() -> float:
    """This process's peak resident set (VmHWM; ``ru_maxrss`` keeps the parent's peak
    across exec on Linux, so it is only the fallback)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def peak_main(planner: str, n: int) -> None:
    module = real if planner == "gtpyhop" else stand_in
    domain = blocks_htn(module)
    state, todo = blocks_problem(module, n)
    before = peak_rss_mb()
    if planner == "gtpyhop":
        gtpyhop_use(domain)
        gtpyhop_plan(state, todo)
    else:
        ours(py_domain_of(domain), state, todo)
    after = peak_rss_mb()
    print(json.dumps({"peak_mb": after, "increase_mb": after - before}))


def table(blocks: list[dict[str, Any]], mcp: list[dict[str, Any]], peaks: dict[str, Any]) -> str:
    lines = [
        "| case | actions | GTPyhop CPU s | plansmith CPU s | ratio | same plan |"
        " in domain code s (bound) | plansmith + artifact s | GTPyhop recursive |",
        "|---|---:|---:|---:|---:|:-:|---:|---:|---|",
    ]
    lines.extend(
        f"| {r['case']} | {r['actions']} | {r['gtpyhop']:.3f} | {r['plansmith']:.3f} | "
        f"{r['ratio']:.1f}x | {'yes' if r['same'] else 'NO'} | "
        f"{r['domain_code']:.3f} ({r['bound']:.1f}x) | {r['plansmith_artifact']:.3f} | "
        f"{r['gtpyhop_recursive']} |"
        for r in blocks
    )
    lines += [
        "",
        "| case | actions (GTPyhop's) | GTPyhop CPU ms | plansmith CPU ms | ratio | same plan |",
        "|---|---:|---:|---:|---:|:-:|",
    ]
    lines.extend(
        f"| {r['case']} | {r['actions']} ({r['gtpyhop_actions']}) | "
        f"{r['gtpyhop'] * 1000:.2f} | {r['plansmith'] * 1000:.3f} | {r['ratio']:.1f}x | "
        f"{'yes' if r['same'] else 'NO'} |"
        for r in mcp
    )
    if peaks:
        lines.append("")
        for planner, peak in peaks.items():
            lines.append(
                f"peak memory, {planner}, {peaks_size(peak)}: {peak['peak_mb']:.0f} MB resident "
                f"({peak['increase_mb']:+.0f} MB while planning)"
            )
    return "\n".join(lines)


def peaks_size(peak: dict[str, Any]) -> str:
    return f"{peak['blocks']} blocks"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,400,1600,3200")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--peak", choices=["gtpyhop", "plansmith"], help=argparse.SUPPRESS)
    parser.add_argument("--no-peak", action="store_true", help="skip the memory children")
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="only the table of where the time goes in each planner, for --sizes",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.peak:
        peak_main(args.peak, sizes[-1])
        return 0
    print(PEER_CONFIG)
    print()
    if args.breakdown:
        rows = run_breakdown(sizes)
        print(breakdown_table(rows))
        if args.json:
            args.json.write_text(json.dumps({"breakdown": rows}, indent=1))
        return 0 if all(r["same"] for r in rows) else 1
    blocks = run_blocks(sizes)
    mcp = run_mcp()
    peaks: dict[str, Any] = {}
    if not args.no_peak and sizes:
        for planner in ("gtpyhop", "plansmith"):
            peaks[planner] = peak_child(planner, max(sizes)) | {"blocks": max(sizes)}
    print(table(blocks, mcp, peaks))
    targets = [r for r in blocks if r["case"].split()[1] in {"400", "1600"}]
    targets += [r for r in mcp if r["case"] == "bio_opentrons scenario_6"]
    print()
    for r in targets:
        met = r["ratio"] >= 10 and r["same"]
        print(f"target >= 10x with the same plan, {r['case']}: {'met' if met else 'NOT met'}")
    if args.json:
        args.json.write_text(json.dumps({"blocks": blocks, "mcp": mcp, "peaks": peaks}, indent=1))
    same = all(r["same"] for r in blocks + mcp)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
