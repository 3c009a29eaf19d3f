"""``solve(problem, options) -> SolveResult``: ground the problem, then search.

The search and the heuristic are picked by name from :data:`SEARCHES` and
:data:`HEURISTICS`. The clock is injected: it is only read for the time limit,
which counts grounding too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from plansmith.errors import Location, PlanningError, ProblemError, UnsolvableError
from plansmith.model import GroundAction, Number, Problem
from plansmith.planning._adl import GOAL_ACTION, apply_step, needs_compiling, objects_of
from plansmith.planning._derived import derived_rules
from plansmith.planning._grounding import ground
from plansmith.planning._options import PlanOptions
from plansmith.planning._task import Operator, TaskSpace
from plansmith.planning.heuristics import HEURISTICS
from plansmith.planning.search import SEARCHES, Limits

__all__ = ["SolveResult", "solve"]


@dataclass(frozen=True, slots=True)
class SolveResult:
    """A plan as ground actions, its cost, and what the search and grounding did."""

    actions: tuple[GroundAction, ...]
    cost: Number
    expanded: int
    generated: int
    evaluated: int
    grounding_facts: int
    grounding_operators: int


def solve(
    problem: Problem,
    options: PlanOptions | None = None,
    clock: Callable[[], float] = time.perf_counter,
    *,
    should_stop: Callable[[], bool] | None = None,
) -> SolveResult:
    """A plan for ``problem``'s goal.

    Raises UnsolvableError when no plan exists (the goal is unreachable even
    ignoring delete effects, or the search exhausted the reachable states), and
    LimitReachedError when ``options.time_limit`` or ``options.node_limit``
    stopped the search, or ``should_stop`` returned true (it is called every few
    dozen expansions, see :class:`Limits`).
    """
    options = options or PlanOptions()
    where = Location(file=problem.source) if problem.source else None
    if options.search not in SEARCHES:
        raise ProblemError(
            f"unknown search {options.search!r}",
            location=where,
            hint=f"use one of: {', '.join(SEARCHES)}",
        )
    if options.heuristic not in HEURISTICS:
        raise ProblemError(
            f"unknown heuristic {options.heuristic!r}",
            location=where,
            hint=f"use one of: {', '.join(HEURISTICS)}",
        )
    limits = Limits(
        time_limit=options.time_limit,
        node_limit=options.node_limit,
        clock=clock if options.time_limit is not None else None,
        should_stop=should_stop,
    )
    task = ground(problem)
    if task.unreachable_goal:
        names = ", ".join(str(c) for c in task.unreachable_goal)
        raise UnsolvableError(
            f"no plan exists: no action sequence can make the goal {names} hold "
            "(it is unreachable even when delete effects are ignored)",
            location=where,
            hint="check that some action adds each goal atom, and that its "
            "preconditions can be reached from the initial state",
        )
    for op in task.operators:
        if op.cost < 0:
            raise ProblemError(
                f"action {op.name} has a negative cost ({op.cost})",
                location=where,
                hint="give every action a cost of 0 or more",
            )
    try:
        limits.check_time("after grounding")
        limits.check_stop("after grounding")
        evaluate = HEURISTICS[options.heuristic](task)
        found = SEARCHES[options.search](TaskSpace(task), evaluate, limits, options)
    except PlanningError as err:
        if where is not None and err.location is None:
            err.location = where
        raise
    ops = task.operators
    return SolveResult(
        actions=_plan_actions(problem, [ops[o] for o in found.operators]),
        cost=found.cost,
        expanded=found.expanded,
        generated=found.generated,
        evaluated=found.evaluated,
        grounding_facts=len(task.facts),
        grounding_operators=len(ops),
    )


def _plan_actions(problem: Problem, chosen: list[Operator]) -> tuple[GroundAction, ...]:
    """The plan's steps as ground actions. With ADL, each is the STRIPS action of
    its original schema in the state where it runs (:func:`apply_step`), and the
    synthetic goal action is left out."""
    if not needs_compiling(problem):
        return tuple(op.action for op in chosen)
    objects = objects_of(problem)
    rules = derived_rules(problem)
    state = set(problem.init)
    out: list[GroundAction] = []
    for op in chosen:
        if op.schema.name == GOAL_ACTION:
            continue
        schema = problem.domain.action(op.schema.name)
        args = op.args[: len(op.args) - op.schema.hidden]
        if schema is None:  # pragma: no cover - operators come from the domain's schemas
            action = None
        elif rules is None:
            action = apply_step(schema, args, op.cost, state, objects)
        else:
            derivation = rules.derive(state)
            action = apply_step(
                schema, args, op.cost, derivation.atoms, objects, expand=derivation.expand
            )
        if action is None:  # pragma: no cover - the search only applies applicable operators
            raise AssertionError(f"{op.name} is not applicable where the plan applies it")
        state.difference_update(action.delete)
        state.update(action.add)
        out.append(action)
    return tuple(out)
