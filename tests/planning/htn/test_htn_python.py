"""Planning Python-function (GTPyhop-style) domains: search, plan artifact, errors."""

from __future__ import annotations

import gc
import itertools
import sys
from typing import Any

import pytest

from plansmith.compat.gtpyhop import Multigoal, State
from plansmith.errors import DomainError, LimitReachedError, UnsolvableError
from plansmith.model import PyDomain, PyProblem
from plansmith.planning import PlanOptions
from plansmith.planning.htn import (
    Budget,
    plan_python,
    process_hash_seed,
    seek_plan,
    unchanged_steps,
)


def _budget(nodes: int | None = None) -> Budget:
    return Budget(nodes, None, lambda: 0.0)


# A tiny domain: a robot moves between rooms and may look (read-only) around.
def move(s: Any, a: str, b: str) -> Any:
    if s.at["robot"] == a and b in s.doors.get(a, ()):
        s.at["robot"] = b
        return s
    return False


def look(s: Any) -> Any:
    return s  # changes nothing: a read-only step


def visit(s: Any, room: str) -> Any:
    if s.at["robot"] == room:
        s.visited = (*s.visited, room)
        return s
    return None


def m_go_direct(s: Any, room: str) -> list[Any] | bool:
    here = s.at["robot"]
    return [("move", here, room)] if room in s.doors.get(here, ()) else False


def m_go_via(s: Any, room: str) -> list[Any] | bool:
    here = s.at["robot"]
    for middle in s.doors.get(here, ()):
        if room in s.doors.get(middle, ()):
            return [("move", here, middle), ("look",), ("move", middle, room)]
    return False


def m_tour(s: Any, *rooms: str) -> list[Any]:
    return [t for r in rooms for t in (("go", r), ("visit", r))]


def m_achieve_at(s: Any, who: str, room: str) -> list[Any] | bool:
    return [("go", room)] if who == "robot" else False


def _domain(**extra: Any) -> PyDomain:
    tasks = {"go": (m_go_direct, m_go_via), "tour": (m_tour,)}
    tasks.update(extra)
    return PyDomain(
        "rooms",
        actions=(("move", move), ("look", look), ("visit", visit)),
        task_methods=tuple(tasks.items()),
        unigoal_methods=(("at", (m_achieve_at,)),),
    )


def _state() -> Any:
    return State(
        "s0",
        at={"robot": "hall"},
        doors={"hall": ("kitchen",), "kitchen": ("hall", "attic"), "attic": ("kitchen",)},
        visited=(),
    )


def test_plans_tasks_and_keeps_a_step_that_changes_nothing() -> None:
    result = seek_plan(_domain(), _state(), [("go", "attic")], _budget())
    assert result.actions == (("move", "hall", "kitchen"), ("look",), ("move", "kitchen", "attic"))
    assert unchanged_steps(_domain(), _state(), result.actions) == (1,)


def test_the_initial_state_is_never_changed() -> None:
    state = _state()
    result = seek_plan(_domain(), state, [("tour", "kitchen", "attic", "hall")], _budget())
    assert result.state.visited == ("kitchen", "attic", "hall")
    assert state.at == {"robot": "hall"}
    assert state.visited == ()


def test_backtracks_into_an_earlier_task_when_a_later_task_fails() -> None:
    # prep's first method works on its own, but then visit(kitchen) fails; GTPyhop's
    # default iterative-greedy strategy gives up here, plansmith tries prep's next method.
    def m_stay(s: Any) -> list[Any]:
        return [("visit", "hall")]

    def m_walk(s: Any) -> list[Any]:
        return [("move", "hall", "kitchen")]

    domain = _domain(prep=(m_stay, m_walk))
    result = seek_plan(domain, _state(), [("prep",), ("visit", "kitchen")], _budget())
    assert result.actions == (("move", "hall", "kitchen"), ("visit", "kitchen"))


def test_an_exhausted_search_is_unsolvable() -> None:
    with pytest.raises(UnsolvableError) as caught:
        seek_plan(_domain(), _state(), [("go", "kitchen"), ("visit", "attic")], _budget())
    assert caught.value.exit_code == 3


def test_backtracking_restores_the_state_of_the_choice_point() -> None:
    # The first method of "pick" moves to the kitchen and then fails; the second
    # must start again from the hall.
    def m_fail_after_moving(s: Any) -> list[Any]:
        return [("move", "hall", "kitchen"), ("visit", "attic")]

    def m_visit_here(s: Any) -> list[Any]:
        return [("visit", "hall")]

    domain = _domain(pick=(m_fail_after_moving, m_visit_here))
    result = seek_plan(domain, _state(), [("pick",)], _budget())
    assert result.actions == (("visit", "hall"),)
    assert result.state.at == {"robot": "hall"}
    assert result.state.visited == ("hall",)


def test_unigoals_are_skipped_when_true_and_checked_after_their_method() -> None:
    result = seek_plan(
        _domain(), _state(), [("at", "robot", "hall"), ("at", "robot", "kitchen")], _budget()
    )
    assert result.actions == (("move", "hall", "kitchen"),)

    def m_lazy(s: Any, who: str, room: str) -> list[Any]:
        return []  # claims success without doing anything

    lazy = PyDomain("lazy", actions=(("move", move),), unigoal_methods=(("at", (m_lazy,)),))
    with pytest.raises(DomainError, match="did not achieve goal at"):
        seek_plan(lazy, _state(), [("at", "robot", "kitchen")], _budget())
    skipped = seek_plan(lazy, _state(), [("at", "robot", "kitchen")], _budget(), verify_goals=False)
    assert skipped.actions == ()


def test_multigoals_use_the_multigoal_methods_in_order() -> None:
    def m_split(s: Any, goal: Any) -> list[Any]:
        return [("at", "robot", goal.at["robot"]), goal] if s.at != goal.at else []

    domain = PyDomain(
        "rooms",
        actions=(("move", move), ("look", look)),
        task_methods=(("go", (m_go_direct, m_go_via)),),
        unigoal_methods=(("at", (m_achieve_at,)),),
        multigoal_methods=(m_split,),
    )
    result = seek_plan(domain, _state(), [Multigoal("g", at={"robot": "attic"})], _budget())
    assert result.actions == (("move", "hall", "kitchen"), ("look",), ("move", "kitchen", "attic"))


def test_a_deep_decomposition_needs_no_recursion_limit() -> None:
    def count(s: Any) -> Any:
        s.n += 1
        return s

    def m_down(s: Any, k: int) -> list[Any]:
        return [("count",), ("down", k - 1)] if k else []

    domain = PyDomain("deep", actions=(("count", count),), task_methods=(("down", (m_down,)),))
    result = seek_plan(domain, State("s", n=0), [("down", 20000)], _budget())
    assert len(result.actions) == 20000
    assert result.state.n == 20000


@pytest.mark.skipif(
    sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11),
    reason="how CPython 3.11 lays out an object's attributes",
)
def test_methods_read_the_states_actions_changed_from_inline_values() -> None:
    # The domain's reads take CPython's fast path only on an object whose
    # __dict__ was never asked for (gc then sees its values, not a dict).
    seen: list[int] = []

    def bump(s: Any) -> Any:
        s.n["k"] += 1
        return s

    def m_times(s: Any, k: int) -> list[Any]:
        seen.append(len(gc.get_referents(s)))
        return [("bump",), ("times", k - 1)] if k else []

    domain = PyDomain("inline", actions=(("bump", bump),), task_methods=(("times", (m_times,)),))
    initial = type("State", (State,), {})("s", n={"k": 0})  # a class of its own: see _pystate
    result = seek_plan(domain, initial, [("times", 3)], _budget())
    assert seen[1:] == [3, 3, 3]  # the class, __name__ and n
    assert result.state.n == {"k": 3}
    assert initial.n == {"k": 0}


def test_an_unknown_item_is_a_domain_error() -> None:
    with pytest.raises(DomainError, match="is not an action, a task"):
        seek_plan(_domain(), _state(), [("fly", "attic")], _budget())


def test_an_exception_in_an_action_is_a_domain_error_at_its_line() -> None:
    def broken(s: Any) -> Any:
        return s.nothing["here"]

    domain = PyDomain("b", actions=(("broken", broken),))
    with pytest.raises(DomainError, match="action broken raised AttributeError") as caught:
        seek_plan(domain, _state(), [("broken",)], _budget())
    location = caught.value.location
    assert location is not None
    assert location.file == __file__
    assert location.line == broken.__code__.co_firstlineno + 1
    assert isinstance(caught.value.__cause__, AttributeError)


def test_a_method_that_returns_a_tuple_is_a_domain_error() -> None:
    def m_tuple(s: Any) -> Any:
        return (("look",),)

    with pytest.raises(DomainError, match="returned tuple"):
        seek_plan(_domain(t=(m_tuple,)), _state(), [("t",)], _budget())


def test_an_action_that_returns_true_does_not_apply_as_in_gtpyhop() -> None:
    # GTPyhop 2.0.2 takes anything but a State for "not applicable" (issue 34);
    # the error's hint names the action, whose effects were lost.
    def yes(s: Any) -> Any:
        return True

    with pytest.raises(UnsolvableError) as caught:
        seek_plan(PyDomain("y", actions=(("yes", yes),)), _state(), [("yes",)], _budget())
    assert "action yes returned bool True" in (caught.value.hint or "")


def test_the_node_limit_stops_an_endless_decomposition() -> None:
    def m_forever(s: Any) -> list[Any]:
        return [("look",), ("forever",)]

    with pytest.raises(LimitReachedError):
        seek_plan(_domain(forever=(m_forever,)), _state(), [("forever",)], _budget(1000))


def test_plan_python_gives_a_totally_ordered_plan_artifact() -> None:
    problem = PyProblem("p", _state(), (("go", "attic"), ("visit", "attic")), source="problems.py")
    plan = plan_python(_domain(), problem)
    assert [str(s) for s in plan.steps] == [
        "move(hall, kitchen)",
        "look()",
        "move(kitchen, attic)",
        "visit(attic)",
    ]
    assert [s.after for s in plan.steps] == [(), ("s1",), ("s2",), ("s3",)]
    # hash_seed: 0 in a process started with PYTHONHASHSEED=0, None (not fixed) otherwise
    assert dict(plan.settings) == {
        "kind": "htn",
        "strategy": "dfs",
        "hash_seed": process_hash_seed(),
    }
    assert plan.domain == "rooms"
    assert plan.to_dict() == plan_python(_domain(), problem).to_dict()


def test_plan_python_keeps_scalar_arguments_and_writes_others_as_json() -> None:
    def take(s: Any, n: int, volume: float, flag: bool, names: list[str]) -> Any:
        return s

    domain = PyDomain("args", actions=(("take", take),))
    problem = PyProblem("p", _state(), (("take", 4, 2.5, True, ["a", "b"]),))
    (step,) = plan_python(domain, problem).steps
    assert step.args == (4, 2.5, True, '["a","b"]')


def test_plan_python_errors_point_at_the_problem_file() -> None:
    problem = PyProblem("p", _state(), (("go", "garden"),), source="problems.py")
    with pytest.raises(UnsolvableError) as caught:
        plan_python(_domain(), problem)
    assert caught.value.location is not None
    assert caught.value.location.file == "problems.py"


def test_plan_python_time_limit_reads_the_injected_clock() -> None:
    def m_forever(s: Any) -> list[Any]:
        return [("look",), ("forever",)]

    ticks = itertools.count()
    problem = PyProblem("p", _state(), (("forever",),))
    with pytest.raises(LimitReachedError, match="time limit"):
        plan_python(
            _domain(forever=(m_forever,)),
            problem,
            PlanOptions(time_limit=5),
            clock=lambda: float(next(ticks)),
        )


def test_the_domain_hash_changes_with_a_methods_code() -> None:
    def m_one(s: Any) -> list[Any]:
        return [("look",)]

    def m_two(s: Any) -> list[Any]:
        return [("look",), ("look",)]

    problem = PyProblem("p", _state(), (("t",),))
    one = plan_python(_domain(t=(m_one,)), problem)
    two = plan_python(_domain(t=(m_two,)), problem)
    assert one.domain_hash != two.domain_hash
    assert one.problem_hash == two.problem_hash


def test_domain_code_sees_whole_states_as_in_gtpyhop() -> None:
    """An action sees every variable of the state (``vars``, ``copy``, ``deepcopy``),
    of the domain's own class, equal to an equal state; and may return a changed copy."""
    import copy

    seen: list[tuple[Any, ...]] = []

    def step(s: Any, n: int) -> Any:
        seen.append((sorted(vars(s)), type(s) is State, s == copy.deepcopy(s)))
        new = s.copy()
        new.n = s.n + n  # a copy, changed and returned (the untouched pos goes with it)
        return new

    def m_steps(s: Any) -> list[Any]:
        return [("step", 1), ("step", 2)]

    domain = PyDomain("counter", actions=(("step", step),), task_methods=(("steps", (m_steps,)),))
    start = State("s0", n=0, flag=True, pos={"a": 1})
    plan = plan_python(domain, PyProblem("p", start, (("steps",),)))
    assert [str(s) for s in plan.steps] == ["step(1)", "step(2)"]
    assert seen == [(["__name__", "flag", "n", "pos"], True, True)] * 2
    assert start.n == 0  # the caller's state is never changed
    assert start.pos == {"a": 1}
