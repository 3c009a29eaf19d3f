"""``plan_python``: a plan artifact for a Python-function (GTPyhop-style) problem."""

from __future__ import annotations

import time
from collections.abc import Callable

from plansmith.errors import Location, PlansmithError
from plansmith.model import Plan, PyDomain, PyProblem, Step
from plansmith.planning._options import PlanOptions
from plansmith.planning.htn._limits import Budget
from plansmith.planning.htn._pyexact import seek_plan_gtpyhop
from plansmith.planning.htn._pyhash import py_domain_hash, py_problem_hash, step_arg
from plansmith.planning.htn._pysearch import seek_plan
from plansmith.planning.htn._pyseed import process_hash_seed

__all__ = ["plan_python", "PY_SETTINGS", "PY_STRATEGIES"]

#: The planner settings of a Python-domain plan with the default strategy;
#: ``plan_python`` records its ``strategy`` and adds ``hash_seed``.
PY_SETTINGS: tuple[tuple[str, str], ...] = (("kind", "htn"), ("strategy", "dfs"))

#: ``dfs``: plansmith's depth-first search with backtracking (the default);
#: ``greedy``: GTPyhop's iterative-greedy strategy, exactly (see ``_pyexact``).
PY_STRATEGIES = ("dfs", "greedy")


def plan_python(
    domain: PyDomain,
    problem: PyProblem,
    options: PlanOptions | None = None,
    *,
    clock: Callable[[], float] = time.perf_counter,
    verify_goals: bool = True,
    strategy: str = "dfs",
) -> Plan:
    """Decompose ``problem.todo`` with the domain's functions; a totally ordered plan.

    Each step depends on the one before it (the functions say nothing about
    which steps are independent). Step arguments are the Python values of the
    action call: JSON scalars as they are, other values as their JSON text.
    Raises UnsolvableError (exit 3), LimitReachedError (exit 4), or DomainError
    for a fault in the domain's code (with the file and line of the function).

    The domain's code runs in this process, under its hash seed, which this
    function cannot change: the plan's ``planner`` settings record it as
    ``hash_seed``, 0 when the process was started with ``PYTHONHASHSEED=0`` (the
    seed ``plansmith plan`` always uses), None otherwise. With None, a domain
    that iterates over sets may plan differently in another process (see
    :func:`process_hash_seed`).

    ``strategy`` is recorded in the plan's ``planner`` settings. ``"dfs"`` (the
    default) backtracks over methods and keeps actions that leave the state
    unchanged. ``"greedy"`` is GTPyhop 2.0.2's default strategy, exactly: the
    first applicable method of each task or goal is final, so it raises
    UnsolvableError where GTPyhop returns False, and actions that leave the
    state unchanged are left out of the plan, as GTPyhop leaves them out.
    """
    if strategy not in PY_STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}: use one of {', '.join(PY_STRATEGIES)}")
    options = options or PlanOptions()
    budget = Budget(options.node_limit, options.time_limit, clock)
    try:
        if strategy == "greedy":
            result = seek_plan_gtpyhop(
                domain,
                problem.state,
                problem.todo,
                budget,
                strategy="iterative_greedy",
                verify_goals=verify_goals,
            )
        else:
            result = seek_plan(
                domain, problem.state, problem.todo, budget, verify_goals=verify_goals
            )
    except PlansmithError as error:
        if error.location is None and problem.source is not None:
            error.location = Location(problem.source)
        raise
    steps: list[Step] = []
    for index, item in enumerate(result.actions):
        steps.append(
            Step(
                id=f"s{index + 1}",
                action=str(item[0]),
                args=tuple(step_arg(a) for a in item[1:]),
                after=(f"s{index}",) if index else (),
            )
        )
    return Plan(
        domain=domain.name,
        problem=problem.name,
        domain_hash=py_domain_hash(domain),
        problem_hash=py_problem_hash(problem),
        steps=tuple(steps),
        settings=(("kind", "htn"), ("strategy", strategy), ("hash_seed", process_hash_seed())),
    )
