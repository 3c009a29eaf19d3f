"""GTPyhop's ``State``, ``Multigoal`` and ``Domain`` classes, and the global registry.

Same attributes, names and printed forms as GTPyhop 2.0.2, so that domain code
written for it runs unchanged. ``State.copy`` copies with
:func:`plansmith.planning.htn.fast_copy` instead of ``copy.deepcopy``.
The registry (the domains created so far, the current domain, the verbosity,
the strategy and ``verify_goals``) lives in :data:`RUNTIME`; the ``gtpyhop``
module reads ``current_domain`` and ``verbose`` from it.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Iterable
from typing import Any, ClassVar, Self

from plansmith.planning.htn import fast_copy, goals_not_achieved

__all__ = [
    "RUNTIME",
    "Runtime",
    "State",
    "Multigoal",
    "Domain",
    "get_type",
    "print_object",
    "make_repr",
    "print_domain",
    "print_domain_names",
    "print_actions",
    "print_commands",
    "print_methods",
]


_YES = frozenset({"1", "true", "yes", "on"})


class Runtime:
    """GTPyhop's module-level settings, in one object."""

    def __init__(self) -> None:
        self.domains: list[Domain] = []
        self.current_domain: Domain | None = None
        self.verbose = 1
        #: GTPyhop's strategy name; until a caller chooses one (``strategy_chosen``),
        #: plansmith backtracks, unless ``exact`` asks for GTPyhop's default.
        self.strategy: str | None = "iterative_greedy"
        self.strategy_chosen = False
        #: GTPyhop's answers: its default strategy, unchanged actions left out of plans.
        self.exact = os.environ.get("PLANSMITH_GTPYHOP_EXACT", "").strip().lower() in _YES
        self.verify_goals = True
        self.copies = 0


RUNTIME = Runtime()


def get_type(obj: Any) -> str:
    """The name of ``obj``'s class (GTPyhop classifies multigoals by it)."""
    return type(obj).__name__


def make_repr(obj: Any, class_name: str) -> str:
    fields = ", ".join(f"{k}={v}" for k, v in vars(obj).items() if k != "__name__")
    return f"{class_name}('{obj.__name__}', {fields})"


def _name_for_copy(old_name: str, number: int) -> str:
    if re.findall("_copy_[0-9]*$", old_name):
        return re.sub("_[0-9]*$", f"_{number}", old_name)
    return f"{old_name}_copy_{number}"


def _next_copy_number() -> int:
    RUNTIME.copies += 1
    return RUNTIME.copies - 1


def _assign(obj: Any, values: dict[str, Any]) -> None:
    """Set ``obj``'s variables one by one. Unlike ``vars(obj).update(values)``, this
    does not create the object's ``__dict__``, so CPython keeps the variables in its
    inline values, and the domain's ``state.var`` and ``multigoal.var`` reads take
    the interpreter's fast path (a quarter less planning time on blocks_htn)."""
    for name, value in values.items():
        setattr(obj, name, value)


def print_object(obj: Any, heading: str | None = None) -> None:
    """Print a state's or multigoal's variables (GTPyhop's ``print_state``)."""
    if heading is None:
        heading = get_type(obj)
    if obj is False:
        print(f"{heading} = False", "\n")
        return
    title = f"{heading} {obj.__name__}:"
    print(title)
    print("-" * len(title))
    for name, value in vars(obj).items():
        if name != "__name__":
            print(f"  - {name} = {value}")
    print("")


class _Variables:
    """What a state and a multigoal share: their variables are their attributes."""

    __name__: str
    _kind: ClassVar[str]  # the class name the printed forms give (GTPyhop's)

    def __str__(self) -> str:
        return f"<{self._kind} {self.__name__}>"

    def __repr__(self) -> str:
        return make_repr(self, self._kind)

    def copy(self, new_name: str | None = None) -> Self:
        """A copy that shares nothing mutable; named ``new_name`` or ``<name>_copy_<n>``."""
        cls = type(self)
        the_copy = cls.__new__(cls)
        _assign(the_copy, {k: fast_copy(v) for k, v in vars(self).items()})
        the_copy.__name__ = new_name or _name_for_copy(self.__name__, _next_copy_number())
        return the_copy

    def display(self, heading: str | None = None) -> None:
        print_object(self, heading=heading)

    def state_vars(self) -> list[str]:
        return [v for v in vars(self) if v != "__name__"]


class State(_Variables):
    """``State(name, **variables)``: the state variables are attributes (usually dicts)."""

    _kind = "State"

    def __init__(self, state_name: str, **kwargs: Any) -> None:
        self.__name__ = state_name
        _assign(self, kwargs)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, State):
            return False
        mine = {k: v for k, v in vars(self).items() if k != "__name__"}
        theirs = {k: v for k, v in vars(other).items() if k != "__name__"}
        return mine == theirs

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = None  # type: ignore[assignment]  # as in GTPyhop: equal by value, mutable


class Multigoal(_Variables):
    """``Multigoal(name, **variables)``: desired values, ``{arg: value}`` per state variable."""

    _kind = "Multigoal"

    def __init__(self, multigoal_name: str, **kwargs: Any) -> None:
        self.__name__ = multigoal_name
        _assign(self, kwargs)


def _m_verify_g(  # noqa: PLR0917 - GTPyhop's signature for this task method
    state: Any, method: str, state_var: str, arg: Any, desired_val: Any, depth: int
) -> list[Any]:
    """GTPyhop's built-in check task (plansmith's planner checks goals itself)."""
    if vars(state)[state_var][arg] != desired_val:
        raise Exception(
            f"depth {depth}: method {method} didn't achieve",
            f"goal {state_var}[{arg}] = {desired_val}",
        )
    if RUNTIME.verbose >= 3:
        print(
            f"depth {depth}: method {method} achieved", f"goal {state_var}[{arg}] = {desired_val}"
        )
    return []


def _m_verify_mg(state: Any, method: str, multigoal: Any, depth: int) -> list[Any]:
    if goals_not_achieved(state, multigoal):
        raise Exception(f"depth {depth}: method {method} didn't achieve {multigoal}]")
    if RUNTIME.verbose >= 3:
        print(f"depth {depth}: method {method} achieved {multigoal}")
    return []


class Domain:
    """``Domain(name)``: a new domain, which becomes the current domain."""

    def __init__(self, domain_name: str) -> None:
        self.__name__ = domain_name
        RUNTIME.domains.append(self)
        RUNTIME.current_domain = self
        self._action_dict: dict[str, Any] = {}
        self._command_dict: dict[str, Any] = {}
        self._task_method_dict: dict[str, list[Any]] = {
            "_verify_g": [_m_verify_g],
            "_verify_mg": [_m_verify_mg],
        }
        self._unigoal_method_dict: dict[str, list[Any]] = {}
        self._multigoal_method_list: list[Any] = []

    def __str__(self) -> str:
        return f"<Domain {self.__name__}>"

    def __repr__(self) -> str:
        return make_repr(self, "Domain")

    def copy(self, new_name: str | None = None) -> Domain:
        the_copy = copy.deepcopy(self)
        the_copy.__name__ = new_name or _name_for_copy(self.__name__, _next_copy_number())
        return the_copy

    def display(self) -> None:
        print_domain(self)


def _domain(domain: Domain | None) -> Domain:
    found = domain if domain is not None else RUNTIME.current_domain
    if found is None:
        raise Exception("no domain has been created")
    return found


def print_domain(domain: Domain | None = None) -> None:
    """Print the domain's actions, commands and methods (default: the current domain)."""
    domain = _domain(domain)
    print(f"\nDomain name: {domain.__name__}")
    print_actions(domain)
    print_commands(domain)
    print_methods(domain)


def print_domain_names() -> None:
    if RUNTIME.domains:
        print("-- Domain names:", ", ".join(d.__name__ for d in RUNTIME.domains))
    else:
        print("-- There are no domains --")


def _print_names(label: str, names: Iterable[str]) -> None:
    """GTPyhop's one-line listing: ``-- Label: a, b`` or ``-- There are no label --``."""
    listed = ", ".join(names)
    if listed:
        print(f"-- {label}:", listed)
    else:
        print(f"-- There are no {label.lower()} --")


def print_actions(domain: Domain | None = None) -> None:
    _print_names("Actions", _domain(domain)._action_dict)


def print_commands(domain: Domain | None = None) -> None:
    _print_names("Commands", _domain(domain)._command_dict)


def _print_method_table(label: str, kind: str, methods: dict[str, list[Any]]) -> None:
    """One of GTPyhop's method tables, ``label`` heading its first column, or a line
    saying that there are no ``kind`` methods."""
    if not methods:
        print(f"-- There are no {kind} methods --")
        return
    column = f"Relevant {kind} methods:"
    print(f"{label:<19}{column}")
    print(f"{'-' * 15:<19}{'-' * len(column)}")
    for name, listed in methods.items():
        print(f"{name:<19}" + ", ".join(m.__name__ for m in listed))
    print("")


def print_methods(domain: Domain | None = None) -> None:
    """Tables of the task, unigoal and multigoal methods."""
    domain = _domain(domain)
    if domain._task_method_dict:
        print("")
    _print_method_table("Task name:", "task", domain._task_method_dict)
    _print_method_table("State var name:", "unigoal", domain._unigoal_method_dict)
    if domain._multigoal_method_list:
        names = ", ".join(m.__name__ for m in domain._multigoal_method_list)
        print("-- Multigoal methods:", names)
    else:
        print("-- There are no multigoal methods --")
