"""GTPyhop's planning functions, run by plansmith's planner.

``find_plan`` returns GTPyhop's result types: the list of action tuples, or
False when there is no plan. An exception raised by the domain's own code
reaches the caller unchanged, as with GTPyhop. Until a caller chooses a
strategy, plansmith's own search runs (it backtracks, keeps actions that leave
the state unchanged, and copies states on write); a chosen greedy strategy, the
exact mode (``set_exact_gtpyhop``) and verbose levels 2 and 3 run GTPyhop's own
search (``seek_plan_gtpyhop``). See docs/htn.md.
"""

from __future__ import annotations

import time
from typing import Any

from plansmith.compat._gtpyhop_objects import RUNTIME, Domain, State
from plansmith.errors import DomainError, UnsolvableError
from plansmith.formats import py_domain_of
from plansmith.planning.htn import (
    GREEDY_STRATEGIES,
    Budget,
    PySearchResult,
    goals_not_achieved,
    seek_plan,
    seek_plan_gtpyhop,
)

__all__ = [
    "find_plan",
    "pyhop",
    "plan_items",
    "search_strategy",
    "planner_strategy",
    "run_lazy_lookahead",
    "validate_plan_from_goal",
    "m_split_multigoal",
]


def plan_items(
    domain: Domain,
    state: Any,
    todo_list: Any,
    *,
    node_limit: int | None = None,
    time_limit: float | None = None,
) -> list[Any] | bool:
    """The plan for ``todo_list`` in ``domain``, or False; LimitReachedError past a limit.

    The search is the one :func:`search_strategy` names, with the live settings."""
    try:
        result = _search(
            py_domain_of(domain),
            state,
            list(todo_list),
            Budget(node_limit, time_limit, time.perf_counter),
        )
    except UnsolvableError:
        return False
    except DomainError as error:
        cause = error.__cause__
        if cause is not None and isinstance(cause, Exception):
            raise cause from None  # the domain's own exception, as GTPyhop lets it through
        raise
    return list(result.actions)


def planner_strategy() -> str:
    """``plan_python``'s strategy for what the domain's code chose: ``greedy`` for
    GTPyhop's greedy strategies (or its default in exact mode), else ``dfs``."""
    return "greedy" if search_strategy() in GREEDY_STRATEGIES else "dfs"


def search_strategy() -> str | None:
    """The GTPyhop strategy whose own search ``find_plan`` runs now, or None for
    plansmith's search: the chosen strategy (GTPyhop's default in exact mode) if
    it is greedy or the mode is exact; with verbose 2 or 3, plansmith's search
    printed as GTPyhop's ``recursive_dfs`` prints (the same plans)."""
    chosen = RUNTIME.strategy if RUNTIME.strategy_chosen or RUNTIME.exact else None
    if RUNTIME.exact or chosen in GREEDY_STRATEGIES:
        return chosen or "iterative_greedy"
    if RUNTIME.verbose >= 2:
        return chosen or "recursive_dfs"
    return None


def _search(domain: Any, state: Any, todo: list[Any], budget: Budget) -> PySearchResult:
    strategy = search_strategy()
    if strategy is None:
        return seek_plan(domain, state, todo, budget, verify_goals=RUNTIME.verify_goals)
    # GTPyhop's search: its answers, and its lines at verbose 2 and 3; plansmith's
    # plans unless GTPyhop's own answers are asked for (a greedy strategy, exact mode).
    return seek_plan_gtpyhop(
        domain,
        state,
        todo,
        budget,
        strategy=strategy,
        verify_goals=RUNTIME.verify_goals,
        plansmith_plans=not (RUNTIME.exact or strategy in GREEDY_STRATEGIES),
        verbose=RUNTIME.verbose,
    )


def _items_text(todo_list: Any) -> str:
    parts = []
    for item in todo_list:
        if isinstance(item, list):
            parts.append(str([str(x) for x in item]))
        elif isinstance(item, tuple):
            parts.append(str(tuple(str(x) for x in item)))
        else:
            parts.append(str(item))
    return "[" + ", ".join(parts) + "]"


def find_plan(state: Any, todo_list: Any) -> list[Any] | bool:
    """Plan ``todo_list`` (tasks, goals, multigoals, actions) from ``state`` in the
    current domain: the list of actions, or False if there is none."""
    if RUNTIME.strategy is None:
        raise Exception(
            "No planning strategy has been set. Use set_recursive_planning(True|False|"
            "<strategy_name>) to set it."
        )
    if RUNTIME.current_domain is None:
        raise Exception("find_plan: no domain has been created")
    if RUNTIME.verbose >= 1:
        print(f"FP> find_plan, verbose={RUNTIME.verbose}:")
        print(f"    state = {state.__name__}\n    todo_list = {_items_text(todo_list)}")
    result = plan_items(RUNTIME.current_domain, state, todo_list)
    if RUNTIME.verbose >= 1:
        print(f"FP> result = {result}\n")
    return result


def pyhop(state: Any, todo_list: Any) -> list[Any] | bool:
    """Pyhop's name for :func:`find_plan`."""
    return find_plan(state, todo_list)


def m_split_multigoal(state: Any, multigoal: Any) -> list[Any]:
    """GTPyhop's multigoal method: the unachieved goals one by one, then the multigoal
    again (or [] when it already holds)."""
    goals = [
        (var, arg, value)
        for var, wanted in goals_not_achieved(state, multigoal).items()
        for arg, value in wanted.items()
    ]
    return [*goals, multigoal] if goals else goals


def _apply_command(state: Any, command: Any, args: tuple[Any, ...]) -> Any:
    next_state = command(state.copy(), *args)
    return next_state if isinstance(next_state, State) else False


def run_lazy_lookahead(state: Any, todo_list: Any, max_tries: int = 10) -> Any:
    """Plan, then act with each step's command ``c_<action>`` (or the action),
    replanning when a command fails, at most ``max_tries`` times; the final state."""
    verbose = RUNTIME.verbose
    domain = RUNTIME.current_domain
    if domain is None:
        raise Exception("run_lazy_lookahead: no domain has been created")
    if verbose >= 1:
        print(f"RLL> run_lazy_lookahead, verbose = {verbose}, max_tries = {max_tries}")
        print(f"RLL> initial state: {state.__name__}")
        print("RLL> To do:", todo_list)
    for tries in range(1, max_tries + 1):
        if verbose >= 1:
            suffix = {1: "st", 2: "nd", 3: "rd"}.get(tries, "th")
            print(f"RLL> {tries}{suffix} call to find_plan:\n")
        plan = find_plan(state, todo_list)
        if plan is False or plan is None:
            raise Exception("run_lazy_lookahead: find_plan has failed")
        assert isinstance(plan, list)
        if not plan:
            if verbose >= 1:
                print(f"RLL> Empty plan => success after {tries} calls to find_plan.")
            return state
        for action in plan:
            command = domain._command_dict.get("c_" + action[0])
            if command is None:
                command = domain._action_dict.get(action[0])
            if verbose >= 1:
                print("RLL> Command:", ["c_" + action[0], *action[1:]])
            new_state = _apply_command(state, command, tuple(action[1:]))
            if new_state is False:
                if verbose >= 1:
                    print(f"RLL> WARNING: command c_{action[0]} failed; will call find_plan.")
                break
            state = new_state
    if verbose >= 1:
        print("RLL> Too many tries, giving up.")
    return state


def validate_plan_from_goal(
    initial_state: Any, plan: Any, key_string: str = "", goal_dict: Any = None
) -> bool:
    """Replay ``plan`` from ``initial_state`` in the current domain; check
    ``state.<key_string>`` against ``goal_dict[key_string]`` when both are given."""
    domain = RUNTIME.current_domain
    if domain is None:
        return False
    state = initial_state.copy()
    for index, action in enumerate(plan, 1):
        function = domain._action_dict.get(action[0])
        if function is None:
            if RUNTIME.verbose >= 1:
                print(f"Action {action} not found in domain. Plan is invalid.")
            return False
        state = function(state.copy(), *action[1:])
        if state is False or state is None:
            if RUNTIME.verbose >= 1:
                print(f"Action {action} (#{index}) failed. Plan is invalid.")
            return False
    if not key_string or not goal_dict:
        return True
    reached = vars(state).get(key_string, {})
    return all(reached.get(arg) == value for arg, value in goal_dict.get(key_string, {}).items())
