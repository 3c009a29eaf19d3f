"""Depth-first decomposition of a Python-function domain, with backtracking.

The to-do list holds tasks ``(name, *args)``, unigoals ``(var, arg, value)``,
multigoals and actions, classified as GTPyhop 2.0.2 does (action, then task,
then unigoal). Methods are tried in declaration order; the first that applies
is followed, and a choice point remembers the next one. When an action fails,
the search returns to the latest choice point: this is GTPyhop's recursive
strategy, run on an explicit stack (no recursion limit). Where GTPyhop's
default iterative-greedy strategy finds a plan, this finds the same one (run
that strategy itself, "no plan" included, with ``_pyexact``).

An action that returns anything but a state, False or None (a dict, True) does
not apply, as in GTPyhop; if no plan is found, the error's hint names the first.
Unlike GTPyhop, an action that leaves the state unchanged stays in the plan
(a read-only tool call is a real step), and states are copied on write (see
``_pystate``): a state is changed in place unless a choice point or the caller
still needs it.

The agenda and the partial plan are linked lists of pairs ``(head, tail)``, so
that a choice point keeps them in O(1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from plansmith.errors import UnsolvableError
from plansmith.model import PyCallable, PyDomain
from plansmith.planning.htn._limits import Budget
from plansmith.planning.htn._pyerrors import code_error, domain_error, function_name
from plansmith.planning.htn._pygoals import (
    goals_not_achieved,
    is_multigoal,
    state_var,
    unigoal_satisfied,
)
from plansmith.planning.htn._pystate import MalformedReturn, StateOps

__all__ = ["PySearchResult", "seek_plan"]

_TASK, _UNIGOAL, _MULTIGOAL = 0, 1, 2
_ROLE = ("task method", "unigoal method", "multigoal method")

Linked = tuple[Any, "Linked"] | None


@dataclass(frozen=True, slots=True)
class PySearchResult:
    """The plan (the action items as the methods wrote them), the final state
    and the number of decomposition steps taken."""

    actions: tuple[Any, ...]
    state: Any
    nodes: int


class _Verify:
    """An agenda entry that checks a goal method achieved its goal (GTPyhop's
    ``_verify_g`` and ``_verify_mg``)."""

    __slots__ = ("goal", "method")

    def __init__(self, method: PyCallable, goal: Any) -> None:
        self.method = method
        self.goal = goal


@dataclass(slots=True)
class _Choice:
    state: Any
    rest: Linked
    plan: Linked
    item: Any
    kind: int
    methods: tuple[PyCallable, ...]
    next: int


def seek_plan(
    domain: PyDomain,
    state: Any,
    todo: Sequence[Any],
    budget: Budget,
    *,
    verify_goals: bool = True,
) -> PySearchResult:
    """Plan ``todo`` from ``state`` (never changed). UnsolvableError when the
    search space is exhausted; DomainError for a fault in the domain's code."""
    actions = dict(domain.actions)
    tasks = dict(domain.task_methods)
    unigoals = dict(domain.unigoal_methods)
    ops = StateOps(state)
    initial = state
    agenda = _push(todo, None)
    plan: Linked = None
    stack: list[_Choice] = []
    tick = budget.tick
    changed = False  # an action changed ``state`` since the methods last read it
    malformed = ""  # the first action that returned neither a state nor False/None
    while True:
        if agenda is None:
            return PySearchResult(_unlink(plan), state, budget.nodes)
        tick()
        item, rest = agenda
        kind = type(item)
        if (kind is tuple or kind is list) and item:
            name = item[0]
            action = actions.get(name)
            if action is not None:
                pinned = state is initial or (bool(stack) and stack[-1].state is state)
                try:
                    out = ops.apply(state, pinned, action, item[1:])
                except MalformedReturn as error:  # as GTPyhop: the action does not apply
                    malformed = malformed or f"action {function_name(action)} {error}"
                    out = None
                except Exception as error:
                    raise code_error(action, "action", error) from error
                if out is not None:
                    state = out
                    plan = (item, plan)
                    agenda = rest
                    # (an action may return another state it was not given)
                    changed = state is not initial and not (stack and stack[-1].state is state)
                    continue
            else:
                if changed:  # for the methods' reads (see _pystate)
                    state = ops.shell(state)
                    changed = False
                methods = tasks.get(name)
                goal_kind = _TASK
                if methods is None:
                    methods = unigoals.get(name)
                    goal_kind = _UNIGOAL
                    if methods is None:
                        raise _unknown(item, domain)
                    if _unigoal_done(state, item):
                        agenda = rest
                        continue
                found = _expand(methods, 0, goal_kind, state, item, rest, verify_goals)
                if found is not None:
                    index, agenda = found
                    if index + 1 < len(methods):
                        stack.append(
                            _Choice(state, rest, plan, item, goal_kind, methods, index + 1)
                        )
                    continue
        elif kind is _Verify:
            _verify(item, state)
            agenda = rest
            continue
        elif is_multigoal(item):
            if changed:
                state = ops.shell(state)
                changed = False
            multi = domain.multigoal_methods
            found = _expand(multi, 0, _MULTIGOAL, state, item, rest, verify_goals)
            if found is not None:
                index, agenda = found
                if index + 1 < len(multi):
                    stack.append(_Choice(state, rest, plan, item, _MULTIGOAL, multi, index + 1))
                continue
        else:
            raise _unknown(item, domain)
        # backtrack: the latest choice point with a method left that applies
        while True:
            if not stack:
                raise UnsolvableError(
                    f"no decomposition of the to-do list works (after {budget.nodes} steps)",
                    hint="every method was tried; check the methods' conditions and the "
                    "initial state"
                    + (
                        f" (the {malformed}: as in GTPyhop, it did not apply; an action "
                        "returns the state it was given, changed, or False)"
                        if malformed
                        else ""
                    ),
                )
            choice = stack.pop()
            tick()
            found = _expand(
                choice.methods,
                choice.next,
                choice.kind,
                choice.state,
                choice.item,
                choice.rest,
                verify_goals,
            )
            if found is not None:
                index, agenda = found
                if index + 1 < len(choice.methods):
                    choice.next = index + 1
                    stack.append(choice)
                state, plan = choice.state, choice.plan
                changed = False
                break


def _expand(  # noqa: PLR0917 - the hot path; keyword arguments would cost time
    methods: tuple[PyCallable, ...],
    start: int,
    kind: int,
    state: Any,
    item: Any,
    rest: Linked,
    verify_goals: bool,
) -> tuple[int, Linked] | None:
    """The first method from ``start`` that applies, and the agenda it makes."""
    for index in range(start, len(methods)):
        method = methods[index]
        try:
            if kind == _TASK:
                sub = method(state, *item[1:])
            elif kind == _UNIGOAL:
                sub = method(state, item[1], item[2])
            else:
                sub = method(state, item)
        except Exception as error:
            raise code_error(method, _ROLE[kind], error) from error
        if sub is None or sub is False:
            continue
        if type(sub) is not list:
            raise domain_error(
                method,
                f"{_ROLE[kind]} {function_name(method)} returned {type(sub).__name__} "
                f"{sub!r:.80}, not a list",
                "a method returns a list of tasks, goals and actions, or False",
            )
        if verify_goals and kind != _TASK:
            rest = (_Verify(method, item), rest)
        return index, _push(sub, rest)
    return None


def _unigoal_done(state: Any, item: Any) -> bool:
    if len(item) != 3:
        raise domain_error(
            None,
            f"the goal {item!r} is not (state variable, argument, value)",
            "a unigoal has exactly three parts",
        )
    return unigoal_satisfied(state, item[0], item[1], item[2])


def _verify(check: _Verify, state: Any) -> None:
    goal = check.goal
    if is_multigoal(goal):
        missed = goals_not_achieved(state, goal)
        if not missed:
            return
        text = f"multigoal {goal.__name__!r} ({missed} still missing)"
    else:
        var, arg, value = goal
        bindings = state_var(state, var)
        if (bindings if bindings is not None else {}).get(arg) == value:
            return
        text = f"goal {var}[{arg!r}] = {value!r}"
    raise domain_error(
        check.method,
        f"method {function_name(check.method)} did not achieve {text}",
        "a goal method must achieve its goal (GTPyhop's verify_goals found it did not)",
    )


def _unknown(item: Any, domain: PyDomain) -> Exception:
    name = item[0] if isinstance(item, tuple | list) and item else None
    return domain_error(
        None,
        f"{item!r} is not an action, a task, a unigoal or a multigoal of domain {domain.name!r}",
        f"declare {name!r} with declare_actions, declare_task_methods or declare_unigoal_methods"
        if name is not None
        else "an item is a non-empty tuple whose first element names an action, a task "
        "or a state variable, or a Multigoal",
    )


def _push(items: Sequence[Any], rest: Linked) -> Linked:
    for item in reversed(items):
        rest = (item, rest)
    return rest


def _unlink(plan: Linked) -> tuple[Any, ...]:
    out: list[Any] = []
    while plan is not None:
        out.append(plan[0])
        plan = plan[1]
    out.reverse()
    return tuple(out)
