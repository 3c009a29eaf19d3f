"""Replanning: the current symbolic state, and a new bound plan without the failed actions."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from plansmith.binding import BoundPlan
from plansmith.errors import PlansmithError
from plansmith.model import JSONValue, Plan, Problem, State, Step, answered_schema
from plansmith.planning import function_table, instantiate, object_args

__all__ = [
    "StepKey",
    "Replanner",
    "Rebinder",
    "ReplanRequest",
    "ReplanFn",
    "current_state",
    "rename_steps",
    "make_replan",
    "replan_failure",
    "REPLAN_PROBLEMS_SHOWN",
]

#: the problems of a failed replan the run's reason names, then how many more there are
REPLAN_PROBLEMS_SHOWN = 10
_PROBLEM_CHARS = 600  # of one problem's text (location, message, hint) in the reason

#: A ground action of a declarative domain: the action and its objects.
StepKey = tuple[str, tuple[str, ...]]


class Replanner(Protocol):
    """``(state, failed, done)`` -> a plan from ``state`` that never uses a ground action
    in ``failed``, or None. ``done`` holds the ground actions that already succeeded in
    the run (an HTN replanner uses it to find the tasks that remain). ``should_stop``
    (when given) is the run's: once it returns true the run no longer waits for the
    plan, and a search should stop at its next check point (``plan(should_stop=...)``)."""

    def __call__(
        self,
        state: State,
        failed: frozenset[StepKey],
        done: frozenset[StepKey],
        /,
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> Plan | None: ...


Rebinder = Callable[[Plan, Mapping[StepKey, str]], BoundPlan]


@dataclass(frozen=True, slots=True)
class ReplanRequest:
    """What the runner knows when retries ran out: succeeded steps (in order), failures.

    The runner asks for the new plan in a worker thread; ``should_stop`` returns true
    once the run no longer waits for it (it was cancelled meanwhile)."""

    succeeded: tuple[Step, ...]
    failed: tuple[Step, ...]
    replans: int = 0
    should_stop: Callable[[], bool] | None = field(default=None, compare=False)
    #: the answers of the run's ask steps so far (step id -> answer): their effects are
    #: those of the answer given, not of the one the plan assumed
    answers: tuple[tuple[str, JSONValue], ...] = ()


ReplanFn = Callable[[ReplanRequest], BoundPlan | None]


def _step_key(step: Step) -> StepKey:
    """``step`` as a ground action of a declarative domain (PlanInvalidError if it is not)."""
    return step.action, object_args(step)


def current_state(
    problem: Problem,
    steps: Sequence[Step],
    answers: Mapping[str, JSONValue] | None = None,
) -> State:
    """The initial state plus the effects of ``steps``, applied in order (an ask step's:
    those of its answer in ``answers``, by step id, when it has one there).

    The steps must name objects (PlanInvalidError with the step id otherwise).
    """
    functions = function_table(problem)
    state: State = problem.init
    for step in steps:
        schema = problem.domain.action(step.action)
        if schema is None:
            continue
        if schema.ask is not None and answers and step.id in answers:
            answer = answers[step.id]
            if isinstance(answer, str | bool | int | float):
                schema = answered_schema(schema, answer)
        ground = instantiate(schema, object_args(step), functions)
        if ground is not None:
            state = ground.apply(state)
    return state


def rename_steps(plan: Plan, prefix: str) -> Plan:
    """``plan`` with every step id (and dependency) prefixed, so ids stay unique in a run."""
    steps = tuple(
        replace(s, id=prefix + s.id, after=tuple(prefix + a for a in s.after)) for s in plan.steps
    )
    return replace(plan, steps=steps)


def make_replan(problem: Problem, replanner: Replanner, rebind: Rebinder) -> ReplanFn:
    """The runner's replan hook: state from the log, plan with ``replanner``, bind again."""

    def replan(request: ReplanRequest) -> BoundPlan | None:
        state = current_state(problem, request.succeeded, dict(request.answers))
        failed = frozenset(_step_key(s) for s in request.failed)
        done = frozenset(_step_key(s) for s in request.succeeded)
        plan = replanner(state, failed, done, should_stop=request.should_stop)
        if plan is None:
            return None
        plan = rename_steps(plan, f"r{request.replans + 1}.")
        available: dict[StepKey, str] = {_step_key(s): s.id for s in request.succeeded}
        return rebind(plan, available)

    return replan


def replan_failure(error: PlansmithError) -> str:
    """Why a replan failed, for the run's reason (``RunFinished``, ``show``, the reports):
    the error's message on the first line, then each of its problems (a binding problem
    of the new plan: its location, step, message and hint) indented on lines of their
    own: the first :data:`REPLAN_PROBLEMS_SHOWN`, then how many more, so the event
    stays small whatever the plan."""
    if not error.problems:
        where = f"{error.location}: " if error.location is not None else ""
        return where + error.message
    lines = [f"{error.message}:"]
    for problem in error.problems[:REPLAN_PROBLEMS_SHOWN]:
        text = str(problem)
        if len(text) > _PROBLEM_CHARS:
            text = text[:_PROBLEM_CHARS] + f"... ({len(text) - _PROBLEM_CHARS} more characters)"
        lines.append("  " + text.replace("\n", "\n  "))
    more = len(error.problems) - REPLAN_PROBLEMS_SHOWN
    if more > 0:
        lines.append(f"  ... and {more} more problem(s)")
    return "\n".join(lines)
