"""The compiled build's C extension (``planning/_native.c``) gives what the Python code
gives: hFF values and preferred operators, and successors.

In a plain install (``.venv``) the extension is absent and these tests skip; `make
test-compiled` runs them against the compiled build, where the extension must be
present (``test_the_compiled_build_has_the_extension``).
"""

from __future__ import annotations

import importlib
import random
from pathlib import Path

import pytest
from _search_fixtures import strips_problems
from hypothesis import HealthCheck, given, settings

import _pddl_suite as suite
from plansmith.planning._compiled import native_available
from plansmith.planning._grounding import ground
from plansmith.planning._task import GroundTask, TaskSpace
from plansmith.planning.heuristics._ff_native import native_ff
from plansmith.planning.heuristics._relaxed import Relaxation
from plansmith.planning.heuristics.ff import ff
from plansmith.planning.search import Evaluator

needs_native = pytest.mark.skipif(
    not native_available(), reason="a plain install has no C extension (make compiled)"
)


def _compiled_build() -> bool:
    return Path(importlib.import_module("plansmith.planning._task").__file__ or "").suffix == ".so"


def test_the_compiled_build_has_the_extension_and_the_plain_one_does_not() -> None:
    assert native_available() == _compiled_build()


def _both(task: GroundTask) -> tuple[Evaluator[int], Evaluator[int]]:
    in_c = native_ff(Relaxation(task))
    assert in_c is not None
    return in_c, ff(task, native=False)


def _walk(task: GroundTask, steps: int, seed: int) -> list[int]:
    """The states of a seeded random walk from the initial state."""
    space = TaskSpace(task)
    rng = random.Random(seed)
    state = space.initial_state()
    seen = [state]
    for _ in range(steps):
        succ = space.successors(state)
        if not succ:
            break
        state = rng.choice(succ)[1]
        seen.append(state)
    return seen


@needs_native
@pytest.mark.parametrize("t", suite.suite()[::3], ids=lambda t: t.name)
def test_value_and_preferred_operators_match_python_along_a_random_walk(t: suite.Task) -> None:
    task = ground(suite.load(t))
    in_c, in_python = _both(task)
    for state in _walk(task, 150, seed=len(t.name)):
        assert in_c(state) == in_python(state), state


@needs_native
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strips_problems(costs=True))
def test_random_tasks_with_costs_and_negative_preconditions_match_python(prob: object) -> None:
    task = ground(prob)  # type: ignore[arg-type]
    if task.axioms or any(op.effects for op in task.operators):
        return
    if not all(isinstance(op.cost, int) for op in task.operators):
        assert native_ff(Relaxation(task)) is None  # the heap exploration stays in Python
        return
    in_c, in_python = _both(task)
    for state in _walk(task, 30, seed=0):
        assert in_c(state) == in_python(state)


@needs_native
@pytest.mark.parametrize("t", suite.suite()[1::3], ids=lambda t: t.name)
def test_successors_in_c_are_the_python_successors_in_the_same_order(t: suite.Task) -> None:
    task = ground(suite.load(t))
    in_c, in_python = TaskSpace(task), TaskSpace(task, native=False)
    for state in _walk(task, 150, seed=len(t.name)):
        assert in_c.successors(state) == in_python.successors(state), state


@needs_native
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strips_problems(costs=True))
def test_successors_of_random_tasks_match_python(prob: object) -> None:
    task = ground(prob)  # type: ignore[arg-type]
    in_c, in_python = TaskSpace(task), TaskSpace(task, native=False)
    for state in _walk(task, 30, seed=1):
        got = in_c.successors(state)
        assert got == in_python.successors(state)
        # the costs are the operators' own objects: an int stays an int, a float a float
        assert [type(c) for _, _, c in got] == [type(task.operators[o].cost) for o, _, _ in got]


@needs_native
def test_an_unreachable_goal_is_infinite_with_no_preferred_operators() -> None:
    task = ground(suite.load(suite.gripper(2)))
    in_c, in_python = _both(task)
    # no fact at all holds: nothing is applicable, the goal is out of reach
    assert in_c(0) == in_python(0)
    assert in_c(0)[0] == float("inf")
    assert not in_c(0)[1]


@needs_native
def test_a_state_that_is_not_a_fact_mask_is_refused_with_a_typed_error() -> None:
    task = ground(suite.load(suite.gripper(2)))
    in_c, _ = _both(task)
    with pytest.raises(OverflowError):
        in_c(-1)
    with pytest.raises(OverflowError):
        in_c(1 << (len(task.facts) + 64))
    with pytest.raises(TypeError):
        in_c("s0")  # type: ignore[arg-type]


@needs_native
def test_arrays_that_do_not_fit_are_refused_at_construction() -> None:
    from plansmith.planning import _native

    good = {
        "n_facts": 2, "goals": [1], "eff_fact": [1], "eff_op": [0],
        "free_cost": [], "free_start": [], "free_end": [],
        "direct_start": [0, 1, 1], "direct_cost": [1], "direct_effect_start": [0],
        "direct_effect_end": [1], "counted_start": [0, 0, 0], "counted": [],
        "group_cost": [], "group_effect_start": [], "group_effect_end": [],
        "group_size": [], "pre_start": [0, 1], "pre": [0], "op_cost": [1],
        "neg_start": [0, 0], "neg": [],
    }  # fmt: skip
    assert _native.Hff(**good).evaluate(0b01) == (1.0, {0})
    for key, bad in [
        ("goals", [2]),  # fact 2 of 2
        ("eff_op", [1]),  # operator 1 of 1
        ("direct_start", [0, 2, 1]),  # not ascending
        ("pre_start", [0]),  # one offset short
        ("op_cost", [-1]),
    ]:
        with pytest.raises(ValueError, match=key.split("_")[0]):
            _native.Hff(**{**good, key: bad})
    with pytest.raises(TypeError):
        _native.Hff(**{**good, "goals": ["g"]})


@needs_native
def test_a_successor_generator_that_does_not_fit_is_refused_at_construction() -> None:
    from plansmith.planning import _native

    # op 0: a -> b (deletes a); op 1: b -> c, filed under key fact b
    good = {
        "n_facts": 3, "pre_start": [0, 1, 2], "pre": [0, 1], "neg_start": [0, 0, 0],
        "neg": [], "add_start": [0, 1, 2], "add": [1, 2], "delete_start": [0, 1, 1],
        "delete": [0], "always": [], "key_start": [0, 1, 2, 2], "key_ops": [0, 1],
        "costs": [1, 2.5],
    }  # fmt: skip
    generator = _native.Successors(**good)
    assert generator.successors(0b001) == [(0, 0b010, 1)]
    assert generator.successors(0b011) == [(0, 0b010, 1), (1, 0b111, 2.5)]
    for key, bad in [
        ("pre", [0, 3]),  # fact 3 of 3
        ("key_ops", [0, 2]),  # operator 2 of 2
        ("add_start", [0, 2, 1]),  # not ascending
        ("key_start", [0, 1, 2]),  # one offset short
    ]:
        with pytest.raises(ValueError, match=key.split("_")[0]):
            _native.Successors(**{**good, key: bad})
    with pytest.raises(TypeError, match="costs"):
        _native.Successors(**{**good, "costs": [1, "2"]})
