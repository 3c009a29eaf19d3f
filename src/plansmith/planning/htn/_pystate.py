"""Copy-on-write for GTPyhop-style states: copy a state variable only when needed.

A state is any object whose state variables are its attributes (its
``__dict__``); an action mutates the object it is given and returns it. GTPyhop
deep-copies the whole state before every action. Here, a state is copied only
when the search still needs the old one (a choice point refers to it, or it is
the caller's initial state), and then only lazily: the new state starts with
the immutable values (shared) and gets each mutable variable (a dict, list or
set) copied on its first access during the action. Variables the action never
touches stay shared with the old state; ``shared`` names them, and the next
action on the new state copies them first (unless a choice point has pinned the
new state in between, in which case its own successor shares them in turn).

Before the domain's methods read a state that an action changed, the search
swaps it for a shell (:meth:`StateOps.shell`): a new object of its class
holding the same variables, nothing copied, built by plain attribute
assignment. CPython then keeps the variables in the object's inline values
rather than in a ``__dict__`` (which reading ``__dict__``, as ``apply`` must,
creates for good), and so the domain's own ``state.var`` reads take the
interpreter's fastest path: on blocks_htn, nearly all the planning time is such
reads. Classes with their own ``__setattr__``, and variables named like a
descriptor of the class, keep the object as it is.

Copies are made by :func:`fast_copy`, which copies containers of immutable
values with ``dict.copy`` and friends (C speed) and recurses only into nested
containers. Unknown objects fall back to ``copy.deepcopy``.

Sets are the one place where a copy is visible: the order in which a set
iterates depends on its history, and ``deepcopy`` rebuilds a set from its
items. A domain that iterates over a set in its state (GTPyhop's Childsnack
does) would plan differently if sets were not rebuilt the same way before every
action, so variables holding sets (found when the search starts, or when an
action adds them) are rebuilt before each action, as GTPyhop's deep copy does.
"""

from __future__ import annotations

import copy
import functools
import keyword
from collections.abc import Callable
from typing import Any

__all__ = ["IMMUTABLE_TYPES", "fast_copy", "holds_sets", "StateOps", "MalformedReturn"]

IMMUTABLE_TYPES: frozenset[type] = frozenset(
    {str, int, float, bool, complex, bytes, range, type(None), type(Ellipsis)}
)


class MalformedReturn(Exception):  # noqa: N818 - a signal to the search, not a user error
    """An action returned something that is neither a state nor False/None."""


def fast_copy(value: Any) -> Any:
    """A copy of ``value`` that shares nothing mutable with it, as ``deepcopy`` makes
    it (sets rebuilt from their items), without its memo: two references to one
    container become two copies."""
    kind = type(value)
    if kind in IMMUTABLE_TYPES:
        return value
    if kind is dict:
        out = value.copy()
        if not IMMUTABLE_TYPES.issuperset(map(type, out.values())):
            for key, item in out.items():
                if type(item) not in IMMUTABLE_TYPES:
                    out[key] = fast_copy(item)
        return out
    if kind is list:
        if IMMUTABLE_TYPES.issuperset(map(type, value)):
            return value.copy()
        return [fast_copy(item) for item in value]
    if kind is set:
        return set(list(value))  # noqa: C414 - deepcopy's rebuild, and so its order
    if kind is frozenset:
        return frozenset(list(value))
    if kind is tuple:
        if IMMUTABLE_TYPES.issuperset(map(type, value)):
            return value
        return tuple(fast_copy(item) for item in value)
    return copy.deepcopy(value)


def holds_sets(value: Any) -> bool:
    """Whether ``value`` is or contains (in dicts, lists, tuples) a set or frozenset."""
    kind = type(value)
    if kind in IMMUTABLE_TYPES:
        return False
    if kind is set or kind is frozenset:
        return True
    if kind is dict:
        value = value.values()
    elif kind is not list and kind is not tuple:
        return False
    return not IMMUTABLE_TYPES.issuperset(map(type, value)) and any(holds_sets(v) for v in value)


class StateOps:
    """Applies actions to states of one class hierarchy, copying on write.

    One instance serves one search. A state that the search still needs (a
    choice point holds it, or it is the caller's) is copied before the action
    runs: a new object of its class whose mutable variables are copied with
    :func:`fast_copy`, so that the action sees a whole state of the domain's own
    class (``vars``, ``copy``, ``deepcopy``, ``==`` and ``type`` behave as in
    GTPyhop). Any other state is changed in place, its set variables rebuilt.
    """

    __slots__ = ("_builders", "_known", "base", "set_vars")

    def __init__(self, initial: Any) -> None:
        self.base = type(initial)
        self._builders: dict[tuple[type, tuple[str, ...]], Callable[[dict[str, Any]], Any] | None]
        self._builders = {}
        self._known = set(initial.__dict__)
        self.set_vars = {k for k, v in initial.__dict__.items() if holds_sets(v)}

    def apply(
        self, state: Any, pinned: bool, action: Callable[..., Any], args: tuple[Any, ...]
    ) -> Any:
        """Run ``action(state, *args)``; a pinned state is left unchanged.

        Returns the new state, None if the action returned False or None, and
        raises MalformedReturn if it returned anything else that is not a state.
        """
        if pinned:
            target = object.__new__(type(state))
            values = target.__dict__
            for key, value in state.__dict__.items():
                values[key] = value if type(value) in IMMUTABLE_TYPES else fast_copy(value)
        else:
            target = state
            values = state.__dict__
            for key in self.set_vars:
                if key in values:  # rebuilt, as GTPyhop's deep copy rebuilds it
                    values[key] = fast_copy(values[key])
        result = action(target, *args)
        if result is target:
            if len(values) != len(self._known) or not self._known.issuperset(values):
                self._learn(values)
            return target
        if result is None or result is False:
            return None
        if isinstance(result, self.base):
            self._learn(result.__dict__)
            return result
        raise MalformedReturn(
            f"returned {type(result).__name__} {result!r:.80}, not a state, False or None"
        )

    def shell(self, state: Any) -> Any:
        """A new object of ``state``'s class holding the same variables (none
        copied), in the same order, in its inline values; ``state`` itself where
        the class does not allow that (see ``_builder``). The search calls this
        before the domain's methods read a state an action changed, and only when
        nothing else refers to that state (it is then garbage)."""
        values = state.__dict__
        cls: Any = type(state)  # (typeshed does not count classes as Hashable)
        key = (cls, tuple(values))
        try:
            build = self._builders[key]
        except KeyError:
            build = self._builders[key] = _builder(cls, key[1])
        return state if build is None else build(values)

    def _learn(self, values: dict[str, Any]) -> None:
        """Note the variables an action added, and which of them hold sets."""
        for key in values.keys() - self._known:
            self._known.add(key)
            if holds_sets(values[key]):
                self.set_vars.add(key)


@functools.lru_cache(maxsize=512)  # compiling one costs more than a small search
def _builder(cls: type, names: tuple[str, ...]) -> Callable[[dict[str, Any]], Any] | None:
    """A function that makes an object of ``cls`` from its variables by assigning
    them in order, or None if assignment would not simply store them: the class
    has its own ``__setattr__``, or a name is not an ASCII identifier or is a data
    descriptor of the class (a slot, a property)."""
    if getattr(cls, "__setattr__", None) is not object.__setattr__:
        return None
    for name in names:
        # (ASCII: the compiler would NFKC-normalise other names, "ﬁ" to "fi")
        if type(name) is not str or not name.isascii() or not name.isidentifier():
            return None
        if keyword.iskeyword(name):
            return None
        for klass in cls.__mro__:
            if name in vars(klass):
                kind = type(vars(klass)[name])
                if hasattr(kind, "__set__") or hasattr(kind, "__delete__"):
                    return None
                break
    # Assignments compiled for these names (checked above to be identifiers) are
    # specialised by the interpreter; a loop over setattr costs 5-10 times more.
    lines = ["def build(values):", "    state = new(cls)"]
    lines += [f"    state.{name} = values[{name!r}]" for name in names]
    lines.append("    return state")
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls}
    exec("\n".join(lines), namespace)  # the source holds identifiers only (checked above)
    return namespace["build"]  # type: ignore[no-any-return]
