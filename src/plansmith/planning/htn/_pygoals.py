"""Goals of Python-function domains: unigoals ``(var, arg, value)`` and multigoals.

A multigoal is an object (GTPyhop's ``Multigoal``) whose attributes, except
``__name__``, map state variable names to ``{arg: desired value}``. These are the
GTPyhop 2.0.2 rules, including its error messages for a goal about a state
variable the state does not have.
"""

from __future__ import annotations

from typing import Any

from plansmith.errors import DomainError

__all__ = ["is_multigoal", "unigoal_satisfied", "goals_not_achieved"]


def is_multigoal(item: Any) -> bool:
    """GTPyhop's test: the item's class is named ``Multigoal``."""
    return type(item).__name__ == "Multigoal"


def unigoal_satisfied(state: Any, var: str, arg: Any, value: Any) -> bool:
    """Whether ``state.var[arg] == value``; DomainError if ``var`` is not a dict of the state."""
    bindings = state.__dict__.get(var)
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
