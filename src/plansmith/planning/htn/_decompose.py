"""Depth-first decomposition of a task network over plansmith's own model.

The agenda holds ground calls in execution order; a parallel block is
linearised branch after branch for the search (the partial order is recovered
from the networks afterwards, in ``_order``). A compound task is decomposed by
its methods in the order written, each with every binding of its extra
parameters (``_match``); the alternatives not yet tried wait on a choice point,
to which the search returns when an action's precondition fails, a task has no
applicable method, or the goal (if the problem has one) does not hold at the end.

Recursive methods must make progress: a method that calls its own task
before any action changes the state (left recursion) decomposes forever, and
only the budget (node or time limit) stops it, as in SHOP-style planners.

What the search returns is its trace: the methods chosen and the actions
applied, in order, each tagged with its node id.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from plansmith.errors import Location, UnsolvableError
from plansmith.model import Atom, GroundAction, Method, Number, Ordered, Parallel, Problem, TaskCall
from plansmith.planning._instantiate import function_table, instantiate
from plansmith.planning.htn._limits import Budget
from plansmith.planning.htn._match import Matcher, holds

__all__ = ["Shape", "MethodEvent", "ActionEvent", "Decomposition", "decompose"]

#: The structure of a network with node ids: ("node", id), ("ordered", [...]) or
#: ("parallel", [branch, ...]).
Shape = tuple[str, Any]


@dataclass(frozen=True, slots=True)
class MethodEvent:
    node: int
    call: TaskCall
    method: str
    shape: Shape


@dataclass(frozen=True, slots=True)
class ActionEvent:
    node: int
    action: GroundAction


@dataclass(frozen=True, slots=True)
class Decomposition:
    """The roots' shape, the events of the successful branch in order, the final state."""

    roots: Shape
    events: tuple[MethodEvent | ActionEvent, ...]
    state: frozenset[Atom]


@dataclass(frozen=True, slots=True)
class _Entry:
    call: TaskCall
    node: int


Linked = tuple[Any, "Linked"] | None


@dataclass(slots=True)
class _Choice:
    state: frozenset[Atom]
    rest: Linked
    trace: Linked
    entry: _Entry
    options: Iterator[tuple[Method, dict[str, str]]]


def decompose(problem: Problem, budget: Budget) -> Decomposition:
    """Decompose ``problem.tasks``; UnsolvableError when no decomposition works."""
    return _Search(problem, budget).run()


class _Search:
    def __init__(self, problem: Problem, budget: Budget) -> None:
        domain = problem.domain
        self.problem = problem
        self.budget = budget
        self.actions = {a.name: a for a in domain.actions}
        self.tasks = {t.name: t for t in domain.tasks}
        self.functions: Mapping[Atom, Number] = function_table(problem)
        self.matcher = Matcher(problem)
        self.ids = itertools.count()

    def run(self) -> Decomposition:
        roots = [_Entry(c, next(self.ids)) for c in self.problem.tasks]
        shape: Shape = ("ordered", [("node", e.node) for e in roots])
        state = self.problem.init
        agenda: Linked = _push(roots, None)
        trace: Linked = None
        stack: list[_Choice] = []
        while True:
            if agenda is None:
                if all(holds(c, {}, state) for c in self.problem.goal):
                    return Decomposition(shape, _unlink(trace), state)
            else:
                self.budget.tick()
                entry, rest = agenda
                schema = self.actions.get(entry.call.name)
                if schema is not None:
                    ground = instantiate(schema, entry.call.args, self.functions)
                    if ground is not None and ground.applicable(state):
                        if not (ground.add <= state and not (ground.delete & state)):
                            state = ground.apply(state)
                        trace = (ActionEvent(entry.node, ground), trace)
                        agenda = rest
                        continue
                else:
                    options = self._options(entry.call, state)
                    found = self._next(options, entry, rest)
                    if found is not None:
                        agenda, event = found
                        stack.append(_Choice(state, rest, trace, entry, options))
                        trace = (event, trace)
                        continue
            # backtrack to the latest choice point that has an alternative left
            while True:
                if not stack:
                    raise UnsolvableError(
                        f"no decomposition of the tasks of problem {self.problem.name} works "
                        f"(after {self.budget.nodes} steps)",
                        location=Location(self.problem.source) if self.problem.source else None,
                        hint="every method and binding was tried; check the methods' "
                        "preconditions and the initial state",
                    )
                choice = stack[-1]
                self.budget.tick()
                found = self._next(choice.options, choice.entry, choice.rest)
                if found is None:
                    stack.pop()
                    continue
                agenda, event = found
                state = choice.state
                trace = (event, choice.trace)
                break

    def _options(
        self, call: TaskCall, state: frozenset[Atom]
    ) -> Iterator[tuple[Method, dict[str, str]]]:
        schema = self.tasks[call.name]
        sub = {p.name: a for p, a in zip(schema.parameters, call.args, strict=True)}
        for method in schema.methods:
            for binding in self.matcher.bindings(method, sub, state):
                yield method, binding

    def _next(
        self, options: Iterator[tuple[Method, dict[str, str]]], entry: _Entry, rest: Linked
    ) -> tuple[Linked, MethodEvent] | None:
        for method, binding in options:
            entries: list[_Entry] = []
            shape = self._shape(method.network, binding, entries)
            return _push(entries, rest), MethodEvent(entry.node, entry.call, method.name, shape)
        return None

    def _shape(self, network: Ordered, sub: dict[str, str], out: list[_Entry]) -> Shape:
        items: list[Shape] = []
        for item in network.items:
            if isinstance(item, Parallel):
                branches = [self._shape(b, sub, out) for b in item.branches]
                items.append(("parallel", branches))
            else:
                call = TaskCall(item.name, tuple(sub.get(a, a) for a in item.args), item.loc)
                entry = _Entry(call, next(self.ids))
                out.append(entry)
                items.append(("node", entry.node))
        return ("ordered", items)


def _push(items: list[_Entry], rest: Linked) -> Linked:
    for item in reversed(items):
        rest = (item, rest)
    return rest


def _unlink(trace: Linked) -> tuple[MethodEvent | ActionEvent, ...]:
    out: list[MethodEvent | ActionEvent] = []
    while trace is not None:
        out.append(trace[0])
        trace = trace[1]
    out.reverse()
    return tuple(out)
