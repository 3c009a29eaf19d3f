"""GTPyhop 2.0.2's own searches, step for step, over a Python-function domain.

plansmith's default search (``_pysearch``) backtracks over methods whatever the
domain asks for. This module runs the search a GTPyhop caller chose, exactly
as GTPyhop runs it, so that it gives GTPyhop's answers, "no plan" included:

- ``iterative_greedy`` (also ``iterative_irrevocable_commitment``; GTPyhop's
  default): commits to the first applicable method of each task or goal and
  never comes back to it; when an action does not apply, or no method of a task
  does, there is no plan;
- ``recursive_dfs``: tries the methods one by one, going back to the latest
  task or goal with a method left when a branch fails. GTPyhop's recursive
  unigoal and multigoal refinement keeps the subgoals of a failed method on the
  to-do list given to the next method (``todo_list = subgoals + ... + todo_list``
  in its loop), so that the next method must achieve them too; so does this.
  Run on an explicit stack (no recursion limit);
- ``iterative_dfs_backtracking``: the same order of exploration, every method
  of a task or goal called up front.

As in GTPyhop, the state is copied (``state.copy()``) before every action, an
action returning anything that is not a state of the initial state's class
does not apply, and an action that leaves the state equal to what it was is
applied but left out of the plan. With ``plansmith_plans``, the plans are those
of plansmith's own search (``_pysearch``), printed as GTPyhop prints its search:
such actions stay in the plan, and a failed goal method's subgoals are dropped
before the next method is tried. With ``verbose`` 2 or 3, ``say`` (``print``) gets the lines
GTPyhop prints at that level, and a level-3 state is shown with its ``display``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
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
from plansmith.planning.htn._pysearch import PySearchResult, _push

__all__ = ["GREEDY_STRATEGIES", "GTPYHOP_STRATEGIES", "seek_plan_gtpyhop"]

#: GTPyhop 2.0.2's strategy names.
GTPYHOP_STRATEGIES = (
    "recursive_dfs",
    "iterative_greedy",
    "iterative_irrevocable_commitment",
    "iterative_dfs_backtracking",
)
#: The names of its greedy (non-backtracking) strategy.
GREEDY_STRATEGIES = frozenset({"iterative_greedy", "iterative_irrevocable_commitment"})

_ACTION, _TASK, _UNIGOAL, _MULTIGOAL, _CHECK = range(5)
_ROLE = {_TASK: "task method", _UNIGOAL: "unigoal method", _MULTIGOAL: "multigoal method"}
_CHECKS = ("_verify_g", "_verify_mg")

Linked = tuple[Any, "Linked"] | None
_Node = tuple[Any, Linked, Linked, int]  # state, to-do list, plan (reversed), depth


def seek_plan_gtpyhop(
    domain: PyDomain,
    state: Any,
    todo: Sequence[Any],
    budget: Budget,
    *,
    strategy: str = "iterative_greedy",
    verify_goals: bool = True,
    plansmith_plans: bool = False,
    verbose: int = 0,
    say: Callable[..., None] = print,
) -> PySearchResult:
    """Plan ``todo`` from ``state`` (never changed) with GTPyhop's ``strategy``.

    UnsolvableError where GTPyhop's ``find_plan`` returns False; DomainError for
    a fault in the domain's code (the domain's exception as its ``__cause__``).
    """
    if strategy not in GTPYHOP_STRATEGIES:
        raise ValueError(
            f"Unknown strategy {strategy!r}. Valid strategies: "
            + ", ".join(repr(s) for s in GTPYHOP_STRATEGIES)
        )
    search = _Search(domain, state, budget, verify_goals, plansmith_plans, verbose, say)
    start: _Node = (state, _push(todo, None), None, 0)
    if strategy in GREEDY_STRATEGIES:
        found = search.greedy(start)
    elif strategy == "recursive_dfs":
        found = search.recursive(start)
    else:
        found = search.backtracking(start)
    if found is None:
        raise UnsolvableError(
            f"GTPyhop's {strategy} strategy finds no plan (after {budget.nodes} steps)",
            hint="the greedy strategy never reconsiders a method; a backtracking strategy "
            "(recursive_dfs, iterative_dfs_backtracking) may find a plan"
            if strategy in GREEDY_STRATEGIES
            else "every method was tried; check the methods' conditions and the initial state",
        )
    final, plan = found
    return PySearchResult(_unlink(plan)[::-1], final, budget.nodes)


class _Frame:
    """A task or goal being refined by GTPyhop's recursive search: its method loop."""

    __slots__ = ("depth", "item", "kind", "methods", "next", "plan", "rest", "state")

    def __init__(  # noqa: PLR0917 - one frame of GTPyhop's recursion
        self,
        kind: int,
        item: Any,
        methods: Sequence[PyCallable],
        state: Any,
        rest: Linked,
        plan: Linked,
        depth: int,
    ) -> None:
        self.kind = kind
        self.item = item
        self.methods = methods
        self.next = 0
        self.state = state
        self.rest = rest
        self.plan = plan
        self.depth = depth


class _Search:
    def __init__(  # noqa: PLR0917 - the settings of one search
        self,
        domain: PyDomain,
        initial: Any,
        budget: Budget,
        verify_goals: bool,
        plansmith_plans: bool,
        verbose: int,
        say: Callable[..., None],
    ) -> None:
        self.domain = domain
        self.actions = dict(domain.actions)
        self.tasks = dict(domain.task_methods)
        self.unigoals = dict(domain.unigoal_methods)
        self.multigoal_methods = domain.multigoal_methods
        self.base = type(initial)
        self.budget = budget
        self.verify_goals = verify_goals
        self.keep_unchanged = plansmith_plans
        self.carry_subgoals = not plansmith_plans
        self.verbose = verbose
        self.say = say

    # -- GTPyhop's three searches ------------------------------------------------

    def greedy(self, node: _Node) -> tuple[Any, Linked] | None:
        """``seek_plan_iterative``: one continuation at a time."""
        while True:
            state, todo, plan, depth = node
            done = self._visit(node)
            if done:
                return state, plan
            item, rest = todo  # type: ignore[misc]
            kind = self._classify(item, depth)
            if kind == _ACTION:
                found = self._apply(state, item, rest, plan, depth)
            elif kind == _CHECK:
                found = self._check(state, item, rest, plan, depth)
            else:
                made = self._refine(kind, state, item, rest, plan, depth, lazy=True)
                found = made[0] if made else None
            if found is None:
                return None
            node = found

    def backtracking(self, node: _Node) -> tuple[Any, Linked] | None:
        """``seek_plan_iterative_backtracking``: every applicable method of a task
        or goal makes a continuation, the first tried first."""
        stack = [node]
        while stack:
            node = stack.pop()
            state, todo, plan, depth = node
            if self._visit(node):
                return state, plan
            item, rest = todo  # type: ignore[misc]
            kind = self._classify(item, depth)
            if kind == _ACTION:
                found = self._apply(state, item, rest, plan, depth)
                if found is not None:
                    stack.append(found)
            elif kind == _CHECK:
                stack.append(self._check(state, item, rest, plan, depth))
            else:
                stack.extend(reversed(list(self._refine(kind, state, item, rest, plan, depth))))
        return None

    def recursive(self, node: _Node) -> tuple[Any, Linked] | None:
        """``seek_plan_recursive``, with its call stack made explicit: a frame per
        task or goal whose method loop has not ended."""
        frames: list[_Frame] = []
        say, verbose = self.say, self.verbose
        found: _Node | None = node
        while True:
            if found is not None:
                node = found
                state, todo, plan, depth = node
                if self._visit(node):
                    return state, plan
                item, rest = todo  # type: ignore[misc]
                kind = self._classify(item, depth)
                if kind == _ACTION:
                    found = self._apply(state, item, rest, plan, depth)
                    continue
                if kind == _CHECK:
                    found = self._check(state, item, rest, plan, depth)
                    continue
                methods = self._methods(kind, state, item, depth)
                if methods is None:  # a unigoal already achieved
                    found = (state, rest, plan, depth + 1)
                    continue
                frame = _Frame(kind, item, methods, state, rest, plan, depth)
            else:  # the branch failed: back to the latest method loop
                if not frames:
                    return None
                frame = frames.pop()
                self.budget.tick()
            found = self._next_method(frame)
            if found is not None:
                frames.append(frame)
            elif verbose >= 3:
                say(f"depth {frame.depth} could not {_FAILED[frame.kind]} {frame.item}")

    # -- one step ---------------------------------------------------------------

    def _visit(self, node: _Node) -> bool:
        """Count the step and print the to-do list; whether it is empty."""
        self.budget.tick()
        _, todo, _, depth = node
        if self.verbose >= 2:
            text = ", ".join(_item_to_string(x) for x in _unlink(todo))
            self.say(f"depth {depth} todo_list [{text}]")
        if todo is None:
            if self.verbose >= 3:
                self.say(f"depth {depth} no more tasks or goals, return plan")
            return True
        return False

    def _classify(self, item: Any, depth: int) -> int:
        """GTPyhop's ``classify_todo_item``: a multigoal, then by name an action, a
        task, a unigoal; its goal checks where the domain does not declare them."""
        if is_multigoal(item):
            return _MULTIGOAL
        if isinstance(item, list | tuple) and item:
            name = item[0]
            if name in self.actions:
                return _ACTION
            if name in self.tasks:
                return _TASK
            if name in self.unigoals:
                return _UNIGOAL
            if name in _CHECKS:
                return _CHECK
            raise domain_error(
                None,
                f"depth {depth}: {item!r} is not an action, a task, a unigoal or a "
                f"multigoal of domain {self.domain.name!r}",
                f"declare {name!r} with declare_actions, declare_task_methods or "
                "declare_unigoal_methods",
            )
        raise domain_error(
            None,
            f"depth {depth}: {item!r} is not an action, a task, a unigoal or a multigoal",
            "an item is a non-empty tuple whose first element names an action, a task "
            "or a state variable, or a Multigoal",
        )

    def _apply(self, state: Any, item: Any, rest: Linked, plan: Linked, depth: int) -> _Node | None:
        """``_apply_action_and_continue``: the next node, or None if the action does
        not apply."""
        say, verbose = self.say, self.verbose
        if verbose >= 3:
            say(f"depth {depth} action {item}: ", end="")
        action = self.actions[item[0]]
        copier = getattr(state, "copy", None)
        target = copier() if callable(copier) else copy.deepcopy(state)
        try:
            new = action(target, *item[1:])
        except Exception as error:
            raise code_error(action, "action", error) from error
        if not isinstance(new, self.base):
            if verbose >= 3:
                say("not applicable")
            return None
        changed = new != state
        if verbose >= 3:
            say("applied" if changed else "idempotent")
            display = getattr(new, "display", None)
            if callable(display):
                display()
        if changed or self.keep_unchanged:
            plan = (item, plan)
        return new, rest, plan, depth + 1

    def _methods(self, kind: int, state: Any, item: Any, depth: int) -> Sequence[PyCallable] | None:
        """The methods of a task or goal, after GTPyhop's level-3 heading; None for
        a unigoal that already holds."""
        say, verbose = self.say, self.verbose
        if kind == _TASK:
            methods = self.tasks[item[0]]
            if verbose >= 3:
                say(f"depth {depth} task {item} methods {[function_name(m) for m in methods]}")
            return methods
        if kind == _UNIGOAL:
            if verbose >= 3:
                say(f"depth {depth} goal {item}: ", end="")
            if len(item) != 3:
                raise domain_error(
                    None,
                    f"the goal {item!r} is not (state variable, argument, value)",
                    "a unigoal has exactly three parts",
                )
            if unigoal_satisfied(state, item[0], item[1], item[2]):
                if verbose >= 3:
                    say("already achieved")
                return None
            methods = self.unigoals[item[0]]
        else:
            if verbose >= 3:
                say(f"depth {depth} multigoal {item}: ", end="")
            methods = self.multigoal_methods
        if verbose >= 3:
            say(f"methods {[function_name(m) for m in methods]}")
        return methods

    def _refine(  # noqa: PLR0917 - GTPyhop's arguments
        self,
        kind: int,
        state: Any,
        item: Any,
        rest: Linked,
        plan: Linked,
        depth: int,
        *,
        lazy: bool = False,
    ) -> list[_Node]:
        """The continuations of a task or goal: the first only when ``lazy``
        (greedy), every applicable method's otherwise (backtracking)."""
        methods = self._methods(kind, state, item, depth)
        if methods is None:
            return [(state, rest, plan, depth + 1)]
        frame = _Frame(kind, item, methods, state, rest, plan, depth)
        out: list[_Node] = []
        while True:
            found = self._next_method(frame, keep_rest=True)
            if found is None:
                break
            out.append(found)
            if lazy:
                return out
        if not out and self.verbose >= 3:
            self.say(f"depth {depth} could not {_FAILED[kind]} {item}")
        return out

    def _next_method(self, frame: _Frame, *, keep_rest: bool = False) -> _Node | None:
        """Try the frame's methods from ``frame.next``: the node the first applicable
        one makes, or None when none is left. Unless ``keep_rest``, a goal's
        to-do list becomes the one given to its method (GTPyhop's recursion)."""
        say, verbose = self.say, self.verbose
        kind, item, state, methods, depth = (
            frame.kind,
            frame.item,
            frame.state,
            frame.methods,
            frame.depth,
        )
        trying = "trying" if kind == _TASK else "trying method"
        for index in range(frame.next, len(methods)):
            method = methods[index]
            if verbose >= 3:
                say(f"depth {depth} {trying} {function_name(method)}: ", end="")
            try:
                if kind == _TASK:
                    sub = method(state, *item[1:])
                elif kind == _UNIGOAL:
                    sub = method(state, item[1], item[2])
                else:
                    sub = method(state, item)
            except Exception as error:
                raise code_error(method, _ROLE[kind], error) from error
            if sub is False or sub is None:
                if verbose >= 3:
                    say("not applicable")
                continue
            if verbose >= 3:
                say("applicable")
                say(f"depth {depth} {'subtasks' if kind == _TASK else 'subgoals'}: {sub}")
            if type(sub) is not list:
                raise domain_error(
                    method,
                    f"{_ROLE[kind]} {function_name(method)} returned {type(sub).__name__} "
                    f"{sub!r:.80}, not a list",
                    "a method returns a list of tasks, goals and actions, or False",
                )
            todo = frame.rest
            if kind != _TASK and self.verify_goals:
                name = function_name(method)
                check = (
                    ("_verify_g", name, *item, depth)
                    if kind == _UNIGOAL
                    else ("_verify_mg", name, item, depth)
                )
                todo = (check, todo)
            todo = _push(sub, todo)
            if kind != _TASK and not keep_rest and self.carry_subgoals:
                frame.rest = todo
            frame.next = index + 1
            return state, todo, frame.plan, depth + 1
        frame.next = len(methods)
        return None

    def _check(self, state: Any, item: Any, rest: Linked, plan: Linked, depth: int) -> _Node:
        """A goal check the domain does not declare as a task (GTPyhop's
        ``_m_verify_g`` and ``_m_verify_mg``, which raise when the goal is missed)."""
        if item[0] == "_verify_g" and len(item) == 6:
            _, method, var, arg, value, at = item
            bindings = state_var(state, var)
            if (bindings if bindings is not None else {}).get(arg) != value:
                raise domain_error(
                    None,
                    f"depth {at}: method {method} did not achieve goal {var}[{arg!r}] = {value!r}",
                    "a goal method must achieve its goal (GTPyhop's verify_goals)",
                )
        elif item[0] == "_verify_mg" and len(item) == 4:
            _, method, goal, at = item
            missed = goals_not_achieved(state, goal)
            if missed:
                raise domain_error(
                    None,
                    f"depth {at}: method {method} did not achieve multigoal "
                    f"{getattr(goal, '__name__', goal)!r} ({missed} still missing)",
                    "a goal method must achieve its goal (GTPyhop's verify_goals)",
                )
        else:
            raise domain_error(
                None, f"{item!r} is not a goal check", "a goal check has 6 or 4 parts"
            )
        return state, rest, plan, depth + 1


_FAILED = {_TASK: "accomplish task", _UNIGOAL: "achieve goal", _MULTIGOAL: "achieve multigoal"}


def _item_to_string(item: Any) -> str:
    """GTPyhop's ``_item_to_string``."""
    kind = type(item).__name__
    if kind == "list":
        return str([str(x) for x in item])
    if kind == "tuple":
        return str(tuple(str(x) for x in item))
    return str(item)


def _unlink(items: Linked) -> tuple[Any, ...]:
    """The items of a linked list, head first."""
    out: list[Any] = []
    while items is not None:
        out.append(items[0])
        items = items[1]
    return tuple(out)
