"""Planning for runs: the planner's entry point, in a worker thread, and the replanner a
run uses when a step fails (pure helpers; the engine passes the planner in)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import anyio

from plansmith.binding import Bindings, BoundPlan, ToolCatalog, bind
from plansmith.engine._inputs import RunInputs
from plansmith.engine._tools import load_run_files
from plansmith.errors import PlansmithError
from plansmith.execution import (
    Event,
    ReplanFn,
    Replanned,
    Replanner,
    ReplanRequest,
    RunState,
    StepKey,
    apply_event,
    make_replan,
    with_action_costs,
)
from plansmith.formats import load_domain, load_problem
from plansmith.model import (
    Atom,
    DecompositionNode,
    Literal,
    Plan,
    Predicate,
    Problem,
    State,
    TaskCall,
    TypedName,
)
from plansmith.planning import PlanOptions
from plansmith.planning import plan as plan_problem
from plansmith.servers import ServersConfig

__all__ = [
    "Planner",
    "load_problem_files",
    "make_plan",
    "make_costed_plan",
    "plan_in_thread",
    "ban_failed",
    "remaining_tasks",
    "make_replanner",
    "RunContext",
    "as_recorded",
]

#: a planner: ``planner(problem, should_stop=...)`` (``make_plan`` by default)
Planner = Callable[..., Plan]


def load_problem_files(domain: Path, problem: Path) -> Problem:
    return load_problem(problem, load_domain(domain))


def make_plan(problem: Problem, *, should_stop: Callable[[], bool] | None = None) -> Plan:
    """The planner's one entry point (classical or HTN); the search stops (with
    ``LimitReachedError``) once ``should_stop`` returns true."""
    return plan_problem(problem, should_stop=should_stop)


#: how a run planned with learned action costs is planned (and replanned): A* with
#: LM-cut, so that the costs decide between two ways to the goal (the default greedy
#: search heeds them little)
COSTED_OPTIONS = PlanOptions(search="astar", heuristic="lmcut")


def make_costed_plan(problem: Problem, *, should_stop: Callable[[], bool] | None = None) -> Plan:
    """``make_plan`` by ``COSTED_OPTIONS``: a cheapest plan under the problem's costs."""
    return plan_problem(problem, COSTED_OPTIONS, should_stop=should_stop)


async def plan_in_thread(problem: Problem, planner: Planner | None = None) -> Plan:
    """``make_plan(problem)`` in a worker thread, so that the event loop (its signal
    handlers, the other runs of a service) goes on while the planner searches. A cancel
    returns at once and stops the abandoned search at its next check point: no search
    outlives it, burning a CPU and holding up the process's exit."""
    stop = threading.Event()
    try:
        return await anyio.to_thread.run_sync(
            lambda: (planner or make_plan)(problem, should_stop=stop.is_set),
            abandon_on_cancel=True,
        )
    finally:
        stop.set()


def ban_failed(problem: Problem, state: State, failed: frozenset[StepKey]) -> Problem:
    """``problem`` from ``state``, where no ground action in ``failed`` is applicable.

    Each failed ground action gets a fresh predicate that its schema must not
    have true for those arguments; the planner itself is unchanged.
    """
    domain = problem.domain
    banned_init: set[Atom] = set()
    actions = []
    predicates = list(domain.predicates)
    for schema in domain.actions:
        bans = [args for name, args in failed if name == schema.name]
        if bans:
            pred = f"plansmith-banned-{schema.name}"
            params = tuple(p.name for p in schema.parameters)
            typed = tuple(TypedName(p.name, p.type) for p in schema.parameters)
            predicates.append(Predicate(pred, typed))
            guard = Literal(Atom(pred, params), positive=False)
            schema = replace(schema, precondition=(*schema.precondition, guard))
            banned_init.update(Atom(pred, args) for args in bans)
        actions.append(schema)
    new_domain = replace(domain, predicates=tuple(predicates), actions=tuple(actions))
    return replace(problem, domain=new_domain, init=frozenset(state) | banned_init)


def _leaf_steps(node: DecompositionNode) -> list[str]:
    if node.step is not None:
        return [node.step]
    return [leaf for child in node.children for leaf in _leaf_steps(child)]


def remaining_tasks(plan: Plan, done: frozenset[StepKey]) -> tuple[TaskCall, ...]:
    """The top-level tasks of an HTN plan with a primitive step not yet done, in order."""
    keys = {s.id: (s.action, s.args) for s in plan.steps}
    return tuple(
        TaskCall(node.task, node.args)
        for node in plan.decomposition
        if not all(keys[leaf] in done for leaf in _leaf_steps(node) if leaf in keys)
    )


def make_replanner(problem: Problem, first: Plan, planner: Planner | None = None) -> Replanner:
    """Plan again from a state, never using a failed ground action.

    Classical problems search again for their goal. HTN problems decompose again
    the tasks of the plan in force that are not done yet: a method whose
    subtasks need a failed action fails, so the next method is tried.
    """
    in_force = [first]

    def replanner(
        state: State,
        failed: frozenset[StepKey],
        done: frozenset[StepKey],
        /,
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> Plan | None:
        banned = ban_failed(problem, state, failed)
        if problem.tasks:
            tasks = remaining_tasks(in_force[0], done)
            if not tasks:
                return None
            banned = replace(banned, tasks=tasks)
        elif not problem.goal:
            return None
        try:
            new_plan = (planner or make_plan)(banned, should_stop=should_stop)
        except PlansmithError:  # none found, or stopped: the run was cancelled meanwhile
            return None
        in_force[0] = new_plan
        return new_plan

    return replanner


@dataclass(frozen=True, slots=True)
class RunContext:
    """What a run made from files needs besides its log: the problem, bindings, servers;
    ``available``: the producers of earlier runs its plan may read (a follow-up run's,
    ``step_key -> RUN/STEP``; see ``_follow_up``), which its replans are bound with too."""

    problem: Problem
    bindings: Bindings
    config: ServersConfig
    available: Mapping[StepKey, str] = field(default_factory=dict)

    @staticmethod
    def load(inputs: RunInputs, costs: Mapping[str, float] | None = None) -> RunContext:
        """The run's files loaded; ``costs``: the action costs it was planned with (the
        declared ones when None)."""
        problem = load_problem_files(inputs.domain, inputs.problem)
        if costs:
            problem = with_action_costs(problem, costs)
        return RunContext(problem, *load_run_files(inputs.bindings, inputs.servers))

    def replan_fn(
        self, catalog: ToolCatalog, first: Plan, planner: Planner | None = None
    ) -> ReplanFn:
        domain, bindings = self.problem.domain, self.bindings

        earlier = self.available

        def rebind(new: Plan, available: Mapping[StepKey, str]) -> BoundPlan:
            return bind(
                new,
                domain,
                bindings,
                catalog,
                env=os.environ,
                available={**earlier, **available},
                configured=self.config.names,
            )

        return make_replan(self.problem, make_replanner(self.problem, first, planner), rebind)


def as_recorded(replan: ReplanFn, events: list[Event], problem: Problem) -> ReplanFn:
    """``replan``, brought to where the run's recorded replans left it.

    An HTN replanner decomposes the tasks that remain of the plan in force, which it
    keeps between calls; a resumed run's replanner starts from the first plan. The
    planner is deterministic, so each recorded replan is made again, from the state the
    run had then (its requests are folded from the log as the runner made them), and the
    replanner's plan in force is the run's again. A classical replanner keeps nothing.
    """
    if not problem.tasks:
        return replan
    state = RunState(events[0].run_id if events else "")
    for event in events:
        if isinstance(event, Replanned) and state.bound is not None:
            by_id = {s.id: s.step for s in state.bound.steps}
            failed = [*state.failed_all, *state.failed_pending]
            replan(
                ReplanRequest(
                    succeeded=tuple(by_id[i] for i in state.order if i in by_id),
                    failed=tuple(by_id[i] for i in failed if i in by_id),
                    replans=state.replans,
                )
            )
        apply_event(state, event)
    return replan
