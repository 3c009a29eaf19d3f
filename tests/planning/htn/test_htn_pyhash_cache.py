"""The domain and problem digests of ``plan_python`` are computed once per object,
and computed again when what they cover has changed (a GTPyhop state is mutable)."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest

from plansmith.compat.gtpyhop import Multigoal, State
from plansmith.model import PyDomain, PyProblem
from plansmith.planning.htn import _pyhash, plan_python
from plansmith.planning.htn._pyhash import (
    domain_digest,
    problem_digest,
    py_domain_hash,
    py_problem_hash,
)


def move(s: Any, a: str, b: str) -> Any:
    if s.at["robot"] == a:
        s.at["robot"] = b
        return s
    return False


def m_go(s: Any, room: str) -> list[Any]:
    return [("move", s.at["robot"], room)]


def m_at(s: Any, who: str, room: str) -> list[Any] | bool:
    return [("go", room)] if who == "robot" else False


def _domain() -> PyDomain:
    return PyDomain(
        "rooms",
        actions=(("move", move),),
        task_methods=(("go", (m_go,)),),
        unigoal_methods=(("at", (m_at,)),),
    )


def _problem(*todo: Any) -> PyProblem:
    state = State("s0", at={"robot": "hall"}, count=1, tags={"x", "y"})
    return PyProblem("p", state, todo or (("go", "attic"),))


@pytest.fixture
def computed(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many times each digest is computed (not taken from the cache)."""
    calls = {"domain": 0, "problem": 0}

    def counted_domain(domain: PyDomain) -> str:
        calls["domain"] += 1
        return domain_digest(domain)

    def counted_problem(problem: PyProblem) -> str:
        calls["problem"] += 1
        return problem_digest(problem)

    monkeypatch.setattr(_pyhash, "domain_digest", counted_domain)
    monkeypatch.setattr(_pyhash, "problem_digest", counted_problem)
    return calls


def test_two_plans_of_the_same_objects_compute_each_digest_once(
    computed: dict[str, int],
) -> None:
    domain, problem = _domain(), _problem()
    first = plan_python(domain, problem)
    second = plan_python(domain, problem)
    assert computed == {"domain": 1, "problem": 1}
    assert first.to_dict() == second.to_dict()
    assert first.domain_hash == domain_digest(domain)
    assert first.problem_hash == problem_digest(problem)


def test_an_equal_domain_object_shares_the_digest(computed: dict[str, int]) -> None:
    problem, first, second = _problem(), _domain(), _domain()
    assert first is not second
    assert first == second  # the same functions: a PyDomain compares by value
    assert plan_python(first, problem).hash == plan_python(second, problem).hash
    assert computed["domain"] == 1


def test_a_changed_state_gives_a_new_problem_digest_and_plan_hash(
    computed: dict[str, int],
) -> None:
    domain, problem = _domain(), _problem()
    before = plan_python(domain, problem)
    problem.state.at["robot"] = "attic"  # in a nested dict, after the first plan
    after = plan_python(domain, problem)
    assert computed == {"domain": 1, "problem": 2}
    assert after.problem_hash != before.problem_hash
    assert after.problem_hash == problem_digest(problem)
    assert after.hash != before.hash
    problem.state.at["robot"] = "hall"  # back as it was: the first digest again
    assert plan_python(domain, problem).hash == before.hash


@pytest.mark.parametrize(
    "change",
    [
        lambda s: setattr(s, "count", True),  # 1 and True: equal in Python, not in JSON
        lambda s: setattr(s, "count", 2),
        lambda s: setattr(s, "extra", None),  # a new variable
        lambda s: delattr(s, "tags"),
        lambda s: s.tags.add("z"),  # in a set
        lambda s: s.at.update({("a", 1): 2}),  # a key that is not text
        lambda s: setattr(s, "count", _Thing(1)),  # an object with attributes...
    ],
)
def test_any_change_the_digest_covers_is_seen(change: Any) -> None:
    problem = _problem()
    digest = py_problem_hash(problem)
    change(problem.state)
    assert py_problem_hash(problem) == problem_digest(problem) != digest


class _Thing:
    def __init__(self, n: int) -> None:
        self.n = n

    def __eq__(self, other: object) -> bool:  # lax: equal to any _Thing
        return isinstance(other, _Thing)

    __hash__ = object.__hash__

    def __repr__(self) -> str:  # says nothing of n
        return "_Thing()"


def test_a_changed_object_inside_the_state_or_the_goal_is_seen() -> None:
    thing = _Thing(1)
    goal = Multigoal("g", at={"robot": "attic"})
    problem = PyProblem("p", State("s0", at={"robot": "hall"}, thing=thing), (goal,))
    first = py_problem_hash(problem)
    thing.n = 2  # its repr and its == do not change; its __dict__ does
    second = py_problem_hash(problem)
    assert second == problem_digest(problem) != first
    vars(goal)["at"]["robot"] = "cellar"
    assert py_problem_hash(problem) == problem_digest(problem) != second


def test_a_subclass_value_is_seen_as_its_json() -> None:
    class Text(str):
        pass

    problem = PyProblem("p", State("s0", name=Text("a")), ())
    first = py_problem_hash(problem)
    problem.state.name = Text("b")
    assert py_problem_hash(problem) == problem_digest(problem) != first


def test_a_replaced_function_code_gives_a_new_domain_digest(computed: dict[str, int]) -> None:
    def act(s: Any) -> Any:
        return s

    def other(s: Any) -> Any:
        s.x = 1
        return s

    domain = PyDomain("d", actions=(("act", act),))
    first = py_domain_hash(domain)
    assert py_domain_hash(domain) == first
    act.__code__ = other.__code__
    assert py_domain_hash(domain) == domain_digest(domain) != first
    assert computed["domain"] == 2


def test_the_cache_keeps_no_object_alive() -> None:
    domain, problem = _domain(), _problem()
    plan_python(domain, problem)
    assert domain in _pyhash._DOMAIN_DIGESTS
    assert problem in _pyhash._PROBLEM_DIGESTS
    domain_ref, problem_ref = weakref.ref(domain), weakref.ref(problem)
    del domain, problem
    gc.collect()
    assert domain_ref() is None
    assert problem_ref() is None


def test_a_problem_without_a_witness_is_hashed_every_time(
    computed: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_pyhash, "_problem_witness", lambda problem: None)
    problem = _problem()
    assert py_problem_hash(problem) == py_problem_hash(problem)
    assert computed["problem"] == 2


def test_a_value_the_pickler_refuses_leaves_no_witness() -> None:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    assert _pyhash._problem_witness(PyProblem("p", State("s0", deep=deep), ())) is None
