"""GTPyhop's declarations and settings: actions, methods, the current domain, verbosity."""

from __future__ import annotations

from typing import Any

from plansmith.compat._gtpyhop_objects import RUNTIME, Domain, print_actions
from plansmith.planning.htn import GTPYHOP_STRATEGIES

__all__ = [
    "declare_actions",
    "declare_operators",
    "declare_commands",
    "declare_task_methods",
    "declare_methods",
    "declare_unigoal_methods",
    "declare_multigoal_methods",
    "print_operators",
    "set_current_domain",
    "get_current_domain",
    "find_domain_by_name",
    "is_domain_created",
    "set_verbose_level",
    "get_verbose_level",
    "set_verify_goals",
    "get_verify_goals",
    "set_recursive_planning",
    "get_recursive_planning",
    "reset_planning_strategy",
    "set_exact_gtpyhop",
    "get_exact_gtpyhop",
    "STRATEGIES",
]

#: GTPyhop's strategy names; once chosen, each runs as GTPyhop runs it.
STRATEGIES = GTPYHOP_STRATEGIES


def _current(what: str) -> Domain:
    if RUNTIME.current_domain is None:
        raise Exception(f"cannot declare {what} until a domain has been created.")
    return RUNTIME.current_domain


def declare_actions(*actions: Any) -> dict[str, Any]:
    """Add actions (functions ``f(state, *args) -> state | False``) to the current domain."""
    domain = _current("actions")
    domain._action_dict.update({a.__name__: a for a in actions})
    return domain._action_dict


def declare_operators(*actions: Any) -> dict[str, Any]:
    """Pyhop's name for :func:`declare_actions`."""
    return declare_actions(*actions)


def declare_commands(*commands: Any) -> dict[str, Any]:
    """Add commands (``c_<action>``), used by ``run_lazy_lookahead`` to act."""
    domain = _current("commands")
    domain._command_dict.update({c.__name__: c for c in commands})
    return domain._command_dict


def declare_task_methods(task_name: str, *methods: Any) -> dict[str, list[Any]]:
    """Add methods for tasks ``(task_name, *args)``, tried in the order declared."""
    domain = _current("methods")
    known = domain._task_method_dict.setdefault(task_name, [])
    known.extend(m for m in methods if m not in known)
    return domain._task_method_dict


def declare_methods(task: str, *methods: Any) -> dict[str, list[Any]]:
    """Pyhop's name for :func:`declare_task_methods`."""
    return declare_task_methods(task, *methods)


def declare_unigoal_methods(state_var_name: str, *methods: Any) -> dict[str, list[Any]]:
    """Add methods for goals ``(state_var_name, arg, value)``."""
    domain = _current("methods")
    known = domain._unigoal_method_dict.setdefault(state_var_name, [])
    known.extend(m for m in methods if m not in known)
    return domain._unigoal_method_dict


def declare_multigoal_methods(*methods: Any) -> list[Any]:
    """Add methods for multigoals."""
    domain = _current("methods")
    known = domain._multigoal_method_list
    known.extend(m for m in methods if m not in known)
    return known


def print_operators() -> None:
    print_actions()


def set_current_domain(domain: Domain) -> None:
    if not isinstance(domain, Domain):
        raise TypeError("The provided argument is not a Domain instance.")
    RUNTIME.current_domain = domain


def get_current_domain() -> Domain | None:
    return RUNTIME.current_domain


def find_domain_by_name(domain_name: str) -> Domain | None:
    return next((d for d in RUNTIME.domains if d.__name__ == domain_name), None)


def is_domain_created(domain_name: str) -> bool:
    return find_domain_by_name(domain_name) is not None


def set_verbose_level(level: int) -> None:
    """0: print nothing; 1 (default): find_plan prints its call and its result."""
    if level < 0 or level > 3:
        raise ValueError("Verbose level must be between 0 and 3.")
    RUNTIME.verbose = level
    print(f"Verbose level set to {level}.")


def get_verbose_level() -> int:
    return RUNTIME.verbose


def set_verify_goals(value: bool) -> bool:
    """Whether goal methods are checked to achieve their goals; returns the old setting."""
    previous = RUNTIME.verify_goals
    RUNTIME.verify_goals = bool(value)
    return previous


def get_verify_goals() -> bool:
    return RUNTIME.verify_goals


def set_recursive_planning(strategy: bool | str, verbose_output: bool = False) -> None:
    """Choose GTPyhop's strategy by name (True: recursive, False: iterative greedy).

    Once chosen, ``find_plan`` runs that strategy as GTPyhop does: the greedy one
    commits to the first applicable method and returns False where GTPyhop does.
    Until then (and after :func:`reset_planning_strategy`, which makes
    ``find_plan`` raise as in GTPyhop, then this), plansmith backtracks, unless
    :func:`set_exact_gtpyhop` asks for GTPyhop's default (see docs/htn.md).
    """
    if isinstance(strategy, bool):
        name = "recursive_dfs" if strategy else "iterative_greedy"
    elif isinstance(strategy, str):
        if strategy not in STRATEGIES:
            raise ValueError(
                f"Unknown strategy '{strategy}'. Valid strategies: "
                + ", ".join(f"'{s}'" for s in STRATEGIES)
            )
        name = "iterative_greedy" if strategy == STRATEGIES[2] else strategy
    else:
        raise TypeError(f"strategy must be bool or str, got {type(strategy).__name__}")
    RUNTIME.strategy = name
    RUNTIME.strategy_chosen = True
    if verbose_output:
        print(f"Using {name} seek_plan.")


def get_recursive_planning() -> bool:
    if RUNTIME.strategy is None:
        raise Exception(
            "No planning strategy has been set. Use set_recursive_planning(True|False|"
            "<strategy_name>) to set it."
        )
    return RUNTIME.strategy == "recursive_dfs"


def reset_planning_strategy() -> None:
    RUNTIME.strategy = None
    RUNTIME.strategy_chosen = False


def set_exact_gtpyhop(value: bool = True) -> bool:
    """plansmith only: GTPyhop's answers (True) or plansmith's (False); the old setting.

    Exact, ``find_plan`` and sessions that choose no strategy use GTPyhop's
    default (iterative greedy: "no plan" where it gives up), and actions that
    leave the state unchanged are left out of plans, as GTPyhop leaves them out.
    The environment variable ``PLANSMITH_GTPYHOP_EXACT=1`` sets it at import.
    """
    previous = RUNTIME.exact
    RUNTIME.exact = bool(value)
    return previous


def get_exact_gtpyhop() -> bool:
    return RUNTIME.exact
