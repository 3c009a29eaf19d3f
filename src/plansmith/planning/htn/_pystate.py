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

__all__ = ["IMMUTABLE_TYPES", "fast_copy", "holds_sets", "StateOps", "Applied", "MalformedReturn"]

IMMUTABLE_TYPES: frozenset[type] = frozenset(
    {str, int, float, bool, complex, bytes, range, type(None), type(Ellipsis)}
)

#: What an action gives back: the new state and the names of its variables that
#: are still shared with an older state, or None when the action did not apply.
Applied = tuple[Any, frozenset[str]] | None

_NO_NAMES: frozenset[str] = frozenset()


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

    One instance serves one search (it is not thread-safe): while an action
    runs, the variables it may not change in place are kept aside and the
    state's class is swapped for a subclass whose ``__getattr__`` copies them
    back on first access.
    """

    __slots__ = ("_builders", "_known", "_lazy", "_pending", "base", "set_vars")

    def __init__(self, initial: Any) -> None:
        self.base = type(initial)
        self._pending: dict[str, Any] = {}
        self._lazy: dict[type, type] = {}
        self._builders: dict[tuple[type, tuple[str, ...]], Callable[[dict[str, Any]], Any] | None]
        self._builders = {}
        self._known = set(initial.__dict__)
        self.set_vars = {k for k, v in initial.__dict__.items() if holds_sets(v)}

    def _lazy_class(self, cls: type) -> type:
        lazy = self._lazy.get(cls)
        if lazy is None:
            lazy = _make_lazy(cls, self._pending)
            self._lazy[cls] = lazy
        return lazy

    def apply(
        self,
        state: Any,
        shared: frozenset[str],
        pinned: bool,
        action: Callable[..., Any],
        args: tuple[Any, ...],
    ) -> Applied:
        """Run ``action(state, *args)``; a pinned state is left unchanged.

        Returns the new state and its still-shared variable names, None if the
        action returned False or None, and raises MalformedReturn if it returned
        anything else that is not a state.
        """
        cls = type(state)
        set_vars = self.set_vars
        hide: list[str] = []
        if pinned:
            target = object.__new__(cls)
            values = target.__dict__
            for key, value in state.__dict__.items():
                if key in set_vars:
                    values[key] = fast_copy(value)
                else:
                    values[key] = value
                    if type(value) not in IMMUTABLE_TYPES:
                        hide.append(key)
        else:
            target = state
            values = state.__dict__
            for key in set_vars.union(shared) if shared else set_vars:
                if key in values:  # still shared with an older state, or holds sets
                    values[key] = fast_copy(values[key])
        if not hide:
            result = action(target, *args)
            remaining = _NO_NAMES
        else:
            pending = self._pending
            order = list(values)
            for key in hide:
                pending[key] = values.pop(key)
            target.__class__ = self._lazy_class(cls)
            try:
                result = action(target, *args)
            finally:
                target.__class__ = cls
                remaining = _restore(values, pending, order)
        if result is target:
            if len(values) != len(self._known) or not self._known.issuperset(values):
                self._learn(values)
            return target, remaining
        if result is None or result is False:
            return None
        if isinstance(result, self.base):
            self._learn(result.__dict__)
            return result, _NO_NAMES
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


def _restore(values: dict[str, Any], pending: dict[str, Any], order: list[str]) -> frozenset[str]:
    """Put the untouched variables back, in their old order; return their names."""
    kept = frozenset(key for key in pending if key not in values)
    merged: dict[str, Any] = {}
    for key in order:
        if key in values:
            merged[key] = values[key]
        elif key in kept:
            merged[key] = pending[key]
    merged.update(values)  # variables the action added go last
    values.clear()
    values.update(merged)
    pending.clear()
    return kept


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


def _make_lazy(cls: type, pending: dict[str, Any]) -> type:
    """A subclass of ``cls`` whose missing attributes are copied from ``pending``."""
    inherited = getattr(cls, "__getattr__", None)

    def __getattr__(self: Any, name: str) -> Any:  # noqa: N807 - the protocol's name
        if name in pending:
            value = fast_copy(pending.pop(name))
            self.__dict__[name] = value
            return value
        if inherited is not None:
            return inherited(self, name)
        raise AttributeError(f"{cls.__name__!r} object has no attribute {name!r}")

    namespace = {
        "__getattr__": __getattr__,
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__slots__": (),
    }
    return type(cls.__name__, (cls,), namespace)
