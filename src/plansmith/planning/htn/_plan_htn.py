"""``plan_htn``: decompose a problem's tasks into the plan artifact (a DAG and its tree)."""

from __future__ import annotations

import time
from collections.abc import Callable

from plansmith.model import Plan, Problem
from plansmith.planning._dag import assemble_plan
from plansmith.planning._options import PlanOptions
from plansmith.planning.htn._check import check_htn
from plansmith.planning.htn._decompose import decompose
from plansmith.planning.htn._limits import Budget
from plansmith.planning.htn._order import order

__all__ = ["plan_htn", "HTN_SETTINGS"]

HTN_SETTINGS: tuple[tuple[str, str], ...] = (("kind", "htn"), ("strategy", "dfs"))


def plan_htn(
    problem: Problem,
    options: PlanOptions | None = None,
    clock: Callable[[], float] = time.perf_counter,
    *,
    should_stop: Callable[[], bool] | None = None,
) -> Plan:
    """Decompose ``problem.tasks`` (depth-first, backtracking over methods and bindings).

    The steps are the actions in the order the search applied them; ``after``
    comes from the task networks (see ``_order``), and ``decomposition`` holds
    one tree per task of the problem. When the problem also has a goal, the
    decomposition must reach it. Raises DomainError or ProblemError for what
    the planner cannot use, UnsolvableError (exit 3) when no decomposition
    works, LimitReachedError (exit 4) past ``options.node_limit`` (decomposition
    steps) or ``options.time_limit`` (seconds of ``clock``), or once ``should_stop``
    (called every 64 decomposition steps) returns true.
    """
    options = options or PlanOptions()
    check_htn(problem)
    budget = Budget(options.node_limit, options.time_limit, clock, should_stop=should_stop)
    found = decompose(problem, budget)
    ordering = order(found)
    return assemble_plan(
        problem, ordering.actions, ordering.after, HTN_SETTINGS, decomposition=ordering.tree
    )
