"""Copy-on-write states: what a pinned state keeps, what a copy shares, sets' order."""

from __future__ import annotations

import copy
import gc
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plansmith.compat.gtpyhop import State
from plansmith.planning.htn import fast_copy
from plansmith.planning.htn._pystate import StateOps


def _vars(state: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(state).items() if k != "__name__"}


def _state() -> Any:
    return State(
        "s",
        flat={"a": 1, "b": 2},
        nested={"x": {"y": 1}, "z": {"y": 2}},
        items=[1, 2, 3],
        tags={1, 2},
        pair=("p", [1]),
        count=0,
    )


def _mutate(s: Any, var: str, key: str, value: int) -> Any:
    if var == "flat":
        s.flat[key] = value
    elif var == "nested":
        s.nested.setdefault(key, {})["y"] = value
    elif var == "items":
        s.items.append(value)
    elif var == "tags":
        s.tags.add(value)
    elif var == "pair":
        s.pair[1].append(value)
    else:
        s.count = value
    return s


def test_a_pinned_state_is_copied_and_keeps_its_values() -> None:
    ops = StateOps(_state())
    old = _state()
    new = ops.apply(old, True, _mutate, ("nested", "x", 9))
    assert new is not old
    assert type(new) is type(old)  # the domain's own class, as GTPyhop's copy gives
    assert old.nested == {"x": {"y": 1}, "z": {"y": 2}}
    assert new.nested == {"x": {"y": 9}, "z": {"y": 2}}
    assert new.flat == old.flat
    assert new.flat is not old.flat  # every mutable variable is the copy's own
    assert list(vars(new)) == list(vars(old))  # variables keep their order


def test_an_unpinned_state_is_changed_in_place_and_the_pinned_one_kept() -> None:
    ops = StateOps(_state())
    old = _state()
    new = ops.apply(old, True, _mutate, ("count", "", 1))
    again = ops.apply(new, False, _mutate, ("flat", "a", 7))
    assert again is new
    assert old.flat == {"a": 1, "b": 2}
    assert again.flat == {"a": 7, "b": 2}


def test_a_shell_holds_the_same_variables_in_the_same_order_none_copied() -> None:
    state = _state()
    shell = StateOps(state).shell(state)
    assert type(shell) is State
    assert shell is not state
    assert list(vars(shell)) == list(vars(state))
    assert all(vars(shell)[k] is v for k, v in vars(state).items())


@pytest.mark.skipif(
    sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11),
    reason="how CPython 3.11 lays out an object's attributes",
)
def test_a_shell_keeps_its_variables_inline_for_the_fast_read_path() -> None:
    # CPython keeps attributes in the object's inline values (read by the
    # interpreter's fastest path) until something asks for its __dict__; gc then
    # sees one dict instead of the values themselves. A class holds at most 30
    # attribute names inline over all its objects: a new class, as other tests
    # have used State's.
    fresh = type("State", (State,), {})
    state = fresh("s", **_vars(_state()))
    vars(state)
    assert len(gc.get_referents(state)) == 2  # the class and the __dict__
    assert len(gc.get_referents(StateOps(state).shell(state))) == 1 + 7  # and 7 variables


class _Guarded(State):
    """A state class that watches its attribute assignments."""

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)


class _WithProperty(State):
    @property
    def flat(self) -> Any:
        return vars(self)["flat"]


@pytest.mark.parametrize("cls", [_Guarded, _WithProperty])
def test_a_class_that_assignment_would_not_reach_gets_no_shell(cls: type) -> None:
    state: Any = object.__new__(cls)
    vars(state).update(vars(_state()))
    assert StateOps(state).shell(state) is state


@pytest.mark.parametrize("name", ["not a name", "class", "\ufb01"])  # "ﬁ" compiles as "fi"
def test_a_variable_that_is_not_a_plain_identifier_gets_no_shell(name: str) -> None:
    state = _state()
    vars(state)[name] = {"k": 1}
    assert StateOps(state).shell(state) is state


def test_fast_copy_matches_deepcopy_on_nested_values() -> None:
    value = {"a": [1, {"b": {2, 3}}], "c": ("d", [4]), "e": frozenset({5})}
    copied = fast_copy(value)
    assert copied == copy.deepcopy(value)
    copied["a"][1]["b"].add(9)
    copied["c"][1].append(9)
    assert value == {"a": [1, {"b": {2, 3}}], "c": ("d", [4]), "e": frozenset({5})}


def test_sets_are_rebuilt_before_every_action_like_deepcopy_does() -> None:
    # A set's iteration order depends on its history; GTPyhop deep-copies (and so
    # rebuilds) it before each action, and a domain that iterates over it plans by
    # that order. StateOps rebuilds sets the same way even when it changes in place.
    def churn(s: Any, n: str) -> Any:
        s.tags.discard(n)
        s.tags.add(n + "x")
        return s

    reference = State("r", tags={f"t{i}" for i in range(40)})
    ours = State("o", tags={f"t{i}" for i in range(40)})
    ops = StateOps(ours)
    for n in range(60):
        reference = churn(copy.deepcopy(reference), f"t{n}")
        ours = ops.apply(ours, n == 0, churn, (f"t{n}",))
        assert list(ours.tags) == list(reference.tags)


_MUTATION = st.tuples(
    st.sampled_from(["flat", "nested", "items", "tags", "pair", "count"]),
    st.sampled_from(["a", "b", "x", "z"]),
    st.integers(0, 5),
)
_STEP = st.tuples(st.sampled_from(["act", "pin", "back"]), _MUTATION)


@settings(max_examples=150, deadline=None)
@given(st.lists(_STEP, max_size=30))
def test_search_like_use_never_corrupts_a_kept_state(steps: list[tuple[str, Any]]) -> None:
    """Act, pin (a choice point keeps the state) and backtrack at random: every kept
    state keeps its values, and the current state matches a deep-copying reference."""
    current = _state()
    reference = copy.deepcopy(_vars(current))
    ops = StateOps(current)
    kept: list[tuple[Any, dict[str, Any]]] = [(current, copy.deepcopy(reference))]
    for kind, mutation in steps:
        if kind == "pin":
            kept.append((current, copy.deepcopy(_vars(current))))
        elif kind == "back" and len(kept) > 1:
            current, snapshot = kept.pop()
            reference = copy.deepcopy(snapshot)
        else:
            pinned = any(current is k for k, _ in kept)
            out = ops.apply(current, pinned, _mutate, mutation)
            assert out is not None
            current = out
            _mutate_dict(reference, *mutation)
        assert _vars(current) == reference
        for state, snapshot in kept:
            assert _vars(state) == snapshot


def _mutate_dict(values: dict[str, Any], var: str, key: str, value: int) -> None:
    holder = State("h", **values)
    _mutate(holder, var, key, value)
    values.update(_vars(holder))
