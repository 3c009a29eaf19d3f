"""Python-function HTN domains (GTPyhop style): callables in place of schemas.

A GTPyhop domain is code, not data: actions are functions ``f(state, *args)``
that return the new state (or False), and methods are functions that return a
list of subtasks, subgoals and actions (or False). ``PyDomain`` holds those
callables by name; ``PyProblem`` holds an initial state object (any object whose
state variables are its attributes) and a to-do list. Neither is interpreted
here: the planner in ``plansmith.planning.htn`` calls the functions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PyCallable", "PyDomain", "PyProblem"]

PyCallable = Callable[..., Any]


@dataclass(frozen=True, slots=True, weakref_slot=True)
class PyDomain:
    """Actions and methods of a Python-function domain, in declaration order.

    ``task_methods`` maps a task name to its methods, ``unigoal_methods`` a state
    variable name to the methods for goals ``(var, arg, value)``, and
    ``multigoal_methods`` lists the methods for multigoals.
    """

    name: str
    actions: tuple[tuple[str, PyCallable], ...] = ()
    task_methods: tuple[tuple[str, tuple[PyCallable, ...]], ...] = ()
    unigoal_methods: tuple[tuple[str, tuple[PyCallable, ...]], ...] = ()
    multigoal_methods: tuple[PyCallable, ...] = ()
    source: str | None = field(default=None, compare=False, hash=False, repr=False)


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)
class PyProblem:
    """A state object and a to-do list of tasks, goals, multigoals and actions.

    Compared by identity: the state is a mutable object that plansmith never
    changes (the planner copies it before any action runs).
    """

    name: str
    state: Any
    todo: tuple[Any, ...]
    description: str = ""
    source: str | None = field(default=None, repr=False)
