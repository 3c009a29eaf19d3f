"""GTPyhop 2.0's execution diagnostics: ``TraceEvent``, ``PlanTrace`` and the search
that records them for ``PlannerSession.find_plan(..., trace=True)``.

plansmith's planner does not report its steps, so a traced call runs a second,
diagnostic search after the planner: GTPyhop's recursive depth-first search with
backtracking (which plansmith's planner follows: same classification of items,
methods tried in declaration order, the same ``_verify_g``/``_verify_mg`` checks),
recording what GTPyhop 2.0.2 records, with its statuses and depths. The plan
itself still comes from plansmith's planner. The diagnostic search stops at the
call's limits (``timeout_ms``, ``max_expansions``), and at Python's recursion
limit, as GTPyhop's recursive search would; the events recorded up to there are
kept, as they are when the domain's code raises.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any

from plansmith.compat._gtpyhop_objects import Domain, State
from plansmith.planning.htn import is_multigoal

__all__ = ["TraceEvent", "PlanTrace", "trace_search", "TERMINAL_STATUSES"]

#: Statuses recorded when a search path has definitively failed there.
TERMINAL_STATUSES = frozenset(
    {
        "not_applicable",
        "malformed_return",
        "task_exhausted",
        "goal_exhausted",
        "multigoal_exhausted",
        "method_malformed_return",
    }
)


@dataclass
class TraceEvent:
    """One attempt of the search: applying an action, or trying a method on an item.

    ``status`` is GTPyhop's: ``applied``, ``idempotent``, ``not_applicable``,
    ``malformed_return`` (an action), ``method_applicable``,
    ``method_not_applicable``, ``method_malformed_return`` (a method), or
    ``task_exhausted``, ``goal_exhausted``, ``multigoal_exhausted``. ``state`` is
    a deep copy of the state the item was attempted against, with
    ``trace_state=True`` (else None).
    """

    depth: int
    item: Any
    status: str
    detail: str | None = None
    state: Any = None


@dataclass
class PlanTrace:
    """The events of one traced ``find_plan``, in depth-first order."""

    events: list[TraceEvent] = field(default_factory=list)

    def record(
        self,
        depth: int,
        item: Any,
        status: str,
        detail: str | None = None,
        state: Any = None,
    ) -> None:
        self.events.append(TraceEvent(depth, item, status, detail, state))

    @property
    def dead_end(self) -> TraceEvent | None:
        """The first terminal event (see :data:`TERMINAL_STATUSES`), or None."""
        return next((e for e in self.events if e.status in TERMINAL_STATUSES), None)

    @property
    def applied_before_dead_end(self) -> int:
        """The ``applied``/``idempotent`` events before the dead end."""
        count = 0
        for event in self.events:
            if event.status in TERMINAL_STATUSES:
                break
            if event.status in {"applied", "idempotent"}:
                count += 1
        return count

    @property
    def malformed_returns(self) -> list[TraceEvent]:
        """The events where an action or a method broke its return contract."""
        return [
            e for e in self.events if e.status in {"malformed_return", "method_malformed_return"}
        ]

    def __len__(self) -> int:
        return len(self.events)

    def __bool__(self) -> bool:
        return True  # an empty trace is still a trace

    def __repr__(self) -> str:
        return f"PlanTrace({len(self.events)} events, dead_end={self.dead_end!r})"


class _LimitHitError(Exception):
    """The diagnostic search reached a limit."""


class _Tracer:
    def __init__(
        self,
        domain: Domain,
        *,
        verify_goals: bool,
        trace_state: bool,
        node_limit: int | None,
        deadline: float | None,
    ) -> None:
        self.domain = domain
        self.verify_goals = verify_goals
        self.trace_state = trace_state
        self.node_limit = node_limit
        self.deadline = deadline
        self.nodes = 0
        self.trace = PlanTrace()

    def record(self, depth: int, item: Any, status: str, state: Any, returned: Any = None) -> None:
        detail = None
        if status in {"malformed_return", "method_malformed_return"}:
            detail = f"returned {type(returned).__name__}: {returned!r:.200}"
        snapshot = None
        if self.trace_state:
            try:
                snapshot = copy.deepcopy(state)
            except Exception:  # an uncopyable value must not stop the diagnosis
                snapshot = None
        self.trace.record(depth, item, status, detail, snapshot)

    def seek(self, state: Any, todo: list[Any], depth: int) -> bool:
        """Whether ``todo`` can be done from ``state`` (GTPyhop's seek_plan_recursive)."""
        self.nodes += 1
        if self.node_limit is not None and self.nodes > self.node_limit:
            raise _LimitHitError
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise _LimitHitError
        if not todo:
            return True
        item, rest = todo[0], todo[1:]
        if is_multigoal(item):
            methods = self.domain._multigoal_method_list
            return self.refine(state, item, rest, depth, methods, "multigoal_exhausted")
        if not isinstance(item, tuple | list) or not item:
            raise Exception(f"depth {depth}: {item} isn't an action, task, unigoal, or multigoal")
        name = item[0]
        if name in self.domain._action_dict:
            return self.apply(state, item, rest, depth)
        if name in self.domain._task_method_dict:
            methods = self.domain._task_method_dict[name]
            return self.refine(state, item, rest, depth, methods, "task_exhausted")
        if name in self.domain._unigoal_method_dict:
            _, arg, value = item
            if vars(state).get(name, {}).get(arg) == value:
                return self.seek(state, rest, depth + 1)
            methods = self.domain._unigoal_method_dict[name]
            return self.refine(state, item, rest, depth, methods, "goal_exhausted")
        raise Exception(f"depth {depth}: {item} isn't an action, task, unigoal, or multigoal")

    def apply(self, state: Any, item: Any, rest: list[Any], depth: int) -> bool:
        action = self.domain._action_dict[item[0]]
        new_state = action(state.copy(), *item[1:])
        if isinstance(new_state, State):
            status = "applied" if new_state != state else "idempotent"
            self.record(depth, item, status, state)
            return self.seek(new_state, rest, depth + 1)
        failed = "not_applicable" if new_state is None or new_state is False else "malformed_return"
        self.record(depth, item, failed, state, new_state)
        return False

    def refine(  # noqa: PLR0917 - one call site per kind of item
        self,
        state: Any,
        item: Any,
        rest: list[Any],
        depth: int,
        methods: list[Any],
        exhausted: str,
    ) -> bool:
        for method in methods:
            if exhausted == "task_exhausted":
                sub = method(state, *item[1:])
            elif exhausted == "goal_exhausted":
                sub = method(state, item[1], item[2])
            else:
                sub = method(state, item)
            if sub is None or sub is False:
                self.record(depth, item, "method_not_applicable", state)
                continue
            if not isinstance(sub, list):
                self.record(depth, item, "method_malformed_return", state, sub)
                raise TypeError(f"method {method.__name__} returned {type(sub).__name__}")
            self.record(depth, item, "method_applicable", state)
            check: list[Any] = []
            if self.verify_goals and exhausted == "goal_exhausted":
                check = [("_verify_g", method.__name__, item[0], item[1], item[2], depth)]
            elif self.verify_goals and exhausted == "multigoal_exhausted":
                check = [("_verify_mg", method.__name__, item, depth)]
            if self.seek(state, sub + check + rest, depth + 1):
                return True
        self.record(depth, item, exhausted, state)
        return False


def trace_search(
    domain: Domain,
    state: Any,
    todo_list: Any,
    *,
    verify_goals: bool = True,
    trace_state: bool = False,
    node_limit: int | None = None,
    time_limit: float | None = None,
) -> PlanTrace:
    """The trace of GTPyhop's recursive search for ``todo_list`` from ``state``."""
    deadline = time.perf_counter() + time_limit if time_limit else None
    tracer = _Tracer(
        domain,
        verify_goals=verify_goals,
        trace_state=trace_state,
        node_limit=node_limit,
        deadline=deadline,
    )
    try:
        tracer.seek(state, list(todo_list), 0)
    except (_LimitHitError, RecursionError):
        pass
    except Exception:  # the domain's fault, which the planner reported already
        pass
    return tracer.trace
