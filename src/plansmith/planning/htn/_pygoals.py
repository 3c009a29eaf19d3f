"""Goals of Python-function domains: unigoals ``(var, arg, value)`` and multigoals.

A multigoal is an object (GTPyhop's ``Multigoal``) whose attributes, except
``__name__``, map state variable names to ``{arg: desired value}``. These are the
GTPyhop 2.0.2 rules, including its error messages for a goal about a state
variable the state does not have.
"""

from __future__ import annotations

import functools
from typing import Any

from plansmith.errors import DomainError

__all__ = ["is_multigoal", "unigoal_satisfied", "goals_not_achieved", "state_var"]


def is_multigoal(item: Any) -> bool:
    """GTPyhop's test: the item's class is named ``Multigoal``."""
    return type(item).__name__ == "Multigoal"


def state_var(state: Any, var: str) -> Any:
    """``vars(state).get(var)``, read as ``state.var`` where that is the same, so as
    not to create the object's ``__dict__`` (which would slow the domain's own
    reads of it: see ``_pystate``)."""
    cls: Any = type(state)  # (typeshed does not count classes as Hashable)
    if _read_as_attribute(cls, var):
        return getattr(state, var, None)
    return state.__dict__.get(var)


@functools.lru_cache(maxsize=1024)
def _read_as_attribute(cls: type, var: Any) -> bool:
    """Whether ``getattr(obj, var, None)`` is ``vars(obj).get(var)`` for objects of
    ``cls``: plain attribute lookup, and no class attribute of that name."""
    return (
        type(var) is str
        and getattr(cls, "__getattribute__", None) is object.__getattribute__
        and not hasattr(cls, "__getattr__")
        and not any(var in vars(klass) for klass in cls.__mro__)
    )


def unigoal_satisfied(state: Any, var: str, arg: Any, value: Any) -> bool:
    """Whether ``state.var[arg] == value``; DomainError if ``var`` is not a dict of the state."""
    bindings = state_var(state, var)
    if bindings is None:
        raise DomainError(
            f"goal ({var!r}, {arg!r}, {value!r}) is about state variable {var!r}, "
            f"which the state does not have",
            hint=f"initialise it before planning: state.{var} = {{}} is enough",
        )
    if not hasattr(bindings, "get"):
        raise DomainError(
            f"goal ({var!r}, {arg!r}, {value!r}) is about state variable {var!r}, "
            f"which is a {type(bindings).__name__}, not a dictionary",
            hint=f"state variables named in goals are dictionaries: state.{var}[{arg!r}]",
        )
    return bool(bindings.get(arg) == value)


def goals_not_achieved(state: Any, multigoal: Any) -> dict[str, dict[Any, Any]]:
    """The goals of ``multigoal`` that do not hold in ``state``, as ``{var: {arg: value}}``."""
    unachieved: dict[str, dict[Any, Any]] = {}
    for name, wanted in vars(multigoal).items():
        if name == "__name__":
            continue
        for arg, value in wanted.items():
            if not unigoal_satisfied(state, name, arg, value):
                unachieved.setdefault(name, {})[arg] = value
    return unachieved
