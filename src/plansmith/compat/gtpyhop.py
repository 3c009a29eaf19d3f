"""A stand-in for the ``gtpyhop`` module (GTPyhop 2.0.2's API), planned by plansmith.

Domain code written for GTPyhop imports this module in place of ``gtpyhop``
(``plansmith.formats.load_gtpyhop_package`` installs it as ``gtpyhop`` in
``sys.modules`` while it imports a domain package), and runs unchanged::

    from gtpyhop import Domain, State, declare_actions, declare_task_methods

``current_domain`` and ``verbose`` read the live settings, as attributes of
the module. Like GTPyhop, the stand-in is a package: under the alias,
``gtpyhop.test_harness``, ``gtpyhop.memory_tracking``, ``gtpyhop.logging_system``,
``gtpyhop.main`` and the installed GTPyhop's ``gtpyhop.examples`` import (see
:mod:`plansmith.compat._gtpyhop_import`). What differs from GTPyhop is listed in
docs/htn.md: until a strategy is chosen (``set_recursive_planning``, a session's
``strategy``), plansmith backtracks, actions that leave the state unchanged stay
in plans, and states are copied on write; ``set_exact_gtpyhop(True)`` (or
``PLANSMITH_GTPYHOP_EXACT=1``) gives GTPyhop's answers, its default strategy
included.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from plansmith.compat._gtpyhop_declare import (
    declare_actions,
    declare_commands,
    declare_methods,
    declare_multigoal_methods,
    declare_operators,
    declare_task_methods,
    declare_unigoal_methods,
    find_domain_by_name,
    get_current_domain,
    get_exact_gtpyhop,
    get_recursive_planning,
    get_verbose_level,
    get_verify_goals,
    is_domain_created,
    print_operators,
    reset_planning_strategy,
    set_current_domain,
    set_exact_gtpyhop,
    set_recursive_planning,
    set_verbose_level,
    set_verify_goals,
)
from plansmith.compat._gtpyhop_import import install_finder
from plansmith.compat._gtpyhop_logging import (
    LogEntry,
    LoggingStats,
    LogLevel,
    StdoutLogHandler,
    StructuredLogger,
    StructuredLogHandler,
    destroy_logger,
    get_logger,
    get_logging_stats,
)
from plansmith.compat._gtpyhop_objects import (
    RUNTIME,
    Domain,
    Multigoal,
    State,
    get_type,
    print_actions,
    print_commands,
    print_domain,
    print_domain_names,
    print_methods,
    print_object,
)
from plansmith.compat._gtpyhop_persist import (
    SESSION_SCHEMA_VERSION,
    SessionPersistenceError,
    SessionSerializer,
)
from plansmith.compat._gtpyhop_plan import (
    find_plan,
    m_split_multigoal,
    pyhop,
    run_lazy_lookahead,
    validate_plan_from_goal,
)
from plansmith.compat._gtpyhop_resources import ResourceManager
from plansmith.compat._gtpyhop_session import (
    ExecutionResult,
    PlannerSession,
    PlanningTimeoutError,
    PlanResult,
    create_session,
    destroy_session,
    get_persistence_directory,
    get_session,
    list_sessions,
    restore_all_sessions,
    restore_session,
    set_persistence_directory,
)
from plansmith.compat._gtpyhop_trace import PlanTrace, TraceEvent

__all__ = [
    "__version__",
    "Domain",
    "State",
    "Multigoal",
    "find_plan",
    "pyhop",
    "run_lazy_lookahead",
    "validate_plan_from_goal",
    "set_current_domain",
    "get_current_domain",
    "print_domain",
    "print_domain_names",
    "find_domain_by_name",
    "is_domain_created",
    "declare_actions",
    "declare_operators",
    "declare_commands",
    "declare_task_methods",
    "declare_methods",
    "declare_unigoal_methods",
    "declare_multigoal_methods",
    "print_actions",
    "print_operators",
    "print_commands",
    "print_methods",
    "print_state",
    "print_multigoal",
    "get_type",
    "m_split_multigoal",
    "set_verbose_level",
    "get_verbose_level",
    "set_verify_goals",
    "get_verify_goals",
    "set_recursive_planning",
    "get_recursive_planning",
    "reset_planning_strategy",
    "set_exact_gtpyhop",
    "get_exact_gtpyhop",
    "PlannerSession",
    "PlanResult",
    "ExecutionResult",
    "PlanningTimeoutError",
    "create_session",
    "get_session",
    "destroy_session",
    "list_sessions",
    "PlanTrace",
    "TraceEvent",
    "ResourceManager",
    "SESSION_SCHEMA_VERSION",
    "SessionPersistenceError",
    "SessionSerializer",
    "restore_session",
    "restore_all_sessions",
    "set_persistence_directory",
    "get_persistence_directory",
    "LogLevel",
    "LogEntry",
    "StructuredLogger",
    "StdoutLogHandler",
    "StructuredLogHandler",
    "get_logger",
    "destroy_logger",
    "get_logging_stats",
    "LoggingStats",
]

#: The GTPyhop release whose API this module provides.
__version__ = "2.0.2"

#: A package, so that ``gtpyhop.test_harness`` and the like import under the alias;
#: :class:`~plansmith.compat._gtpyhop_import.StandInFinder` finds them.
__path__: list[str] = []
install_finder()

print_state = print_object
print_multigoal = print_object


#: The submodules that ``from gtpyhop import <name>`` finds under the alias.
_SUBMODULES = frozenset({"main", "logging_system", "test_harness", "memory_tracking", "examples"})


def __getattr__(name: str) -> Any:
    """``gtpyhop.current_domain`` and ``gtpyhop.verbose``: the live settings. Under the
    ``gtpyhop`` alias, also the submodules (``from gtpyhop import test_harness``)."""
    if name == "current_domain":
        return RUNTIME.current_domain
    if name == "verbose":
        return RUNTIME.verbose
    if name in _SUBMODULES and sys.modules.get("gtpyhop") is sys.modules[__name__]:
        try:
            return importlib.import_module(f"gtpyhop.{name}")
        except ModuleNotFoundError as error:  # gtpyhop.examples, without GTPyhop installed
            raise AttributeError(f"plansmith's gtpyhop stand-in has no {name!r}: {error}") from None
    raise AttributeError(f"plansmith's gtpyhop stand-in has no attribute {name!r}")
