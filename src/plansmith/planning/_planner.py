"""``plan(problem, options) -> Plan``: the one entry point of the planner.

A problem with a goal and no tasks is planned by classical forward search; a
problem with tasks (HTN) is decomposed. Either way the result is the same plan
artifact: a DAG of ground steps with a content hash.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from plansmith.errors import Location, ProblemError
from plansmith.model import Plan, Problem
from plansmith.planning._dag import build_plan
from plansmith.planning._options import PlanOptions
from plansmith.planning._solve import solve

__all__ = ["plan"]


def plan(
    problem: Problem,
    options: PlanOptions | None = None,
    *,
    clock: Callable[[], float] = time.perf_counter,
    should_stop: Callable[[], bool] | None = None,
) -> Plan:
    """Plan ``problem``. Raises UnsolvableError (none exists) or LimitReachedError.

    ``should_stop``, when given, is called every few dozen expansions (HTN: decomposition
    steps); once it returns true the search stops with LimitReachedError. A caller that
    runs the planner in a thread and gives up on it (Ctrl-C, a cancelled request) uses it
    to stop the search, e.g. with a ``threading.Event``'s ``is_set``.
    """
    options = options or PlanOptions()
    if problem.tasks:
        # HTN is a dozen modules: imported only for problems that need it.
        from plansmith.planning.htn import plan_htn  # noqa: PLC0415

        return plan_htn(problem, options, clock=clock, should_stop=should_stop)
    if not problem.goal:
        raise ProblemError(
            f"problem {problem.name!r} has neither a goal nor tasks",
            location=problem.loc or Location(problem.source),
            hint="add `goal: [pred(obj), ...]` (classical) or `tasks: [task(obj), ...]` (HTN) "
            "to the problem: empty lists leave nothing to plan",
        )
    result = solve(problem, options, clock=clock, should_stop=should_stop)
    return build_plan(problem, result.actions, options.settings())
