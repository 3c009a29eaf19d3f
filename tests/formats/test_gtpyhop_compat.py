"""plansmith's ``gtpyhop`` stand-in: GTPyhop 2.0.2's API, and where it differs on purpose."""

from __future__ import annotations

import contextlib
import io
import os
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from plansmith.compat import gtpyhop as g
from plansmith.compat._gtpyhop_objects import RUNTIME


@pytest.fixture(autouse=True)
def _fresh_settings() -> Iterator[None]:
    saved = dict(vars(RUNTIME))
    saved["domains"] = list(RUNTIME.domains)
    RUNTIME.verbose = 0
    try:
        yield
    finally:
        vars(RUNTIME).update(saved)


def _quiet(fn: Any, *args: Any) -> Any:
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args)


def _pantry() -> Any:
    """A domain where the first method of 'serve' works but dooms the next task."""
    domain = g.Domain("pantry")

    def take(s: Any, item: str) -> Any:
        if s.shelf.get(item, 0) > 0:
            s.shelf[item] -= 1
            s.plate.append(item)
            return s
        return False

    def check(s: Any, item: str) -> Any:
        return s if item in s.plate else False

    def m_bread(s: Any) -> list[Any]:
        return [("take", "bread")]

    def m_jam(s: Any) -> list[Any]:
        return [("take", "jam")]

    g.declare_actions(take, check)
    g.declare_task_methods("serve", m_bread, m_jam)
    return domain


def _state() -> Any:
    return g.State("kitchen", shelf={"bread": 1, "jam": 1}, plate=[])


def test_state_equality_ignores_the_name_and_copies_share_nothing() -> None:
    s = g.State("a", pos={"x": [1]})
    t = s.copy()
    assert t == s
    assert t.__name__ == "a_copy_0" or t.__name__.startswith("a_copy_")
    t.pos["x"].append(2)
    assert s.pos == {"x": [1]}
    assert t != s
    assert repr(g.State("b", v=1)) == "State('b', v=1)"
    assert str(g.State("b")) == "<State b>"
    assert g.State("b", v=1).state_vars() == ["v"]


def test_display_prints_like_gtpyhop(capsys: pytest.CaptureFixture[str]) -> None:
    g.State("s1", pos={"a": "table"}).display("Initial state is")
    assert capsys.readouterr().out == (
        "Initial state is s1:\n--------------------\n  - pos = {'a': 'table'}\n\n"
    )


def test_find_plan_returns_the_actions_or_false() -> None:
    _pantry()
    assert g.find_plan(_state(), [("serve",)]) == [("take", "bread")]
    assert g.find_plan(_state(), [("check", "bread")]) is False
    assert g.find_plan(_state(), []) == []


def test_the_default_strategy_backtracks_where_gtpyhops_greedy_one_gives_up() -> None:
    _pantry()
    assert g.get_recursive_planning() is False  # GTPyhop's default: iterative greedy
    plan = g.find_plan(_state(), [("serve",), ("check", "jam")])
    assert plan == [("take", "jam"), ("check", "jam")]


def test_the_real_gtpyhop_greedy_strategy_gives_up_on_the_same_problem() -> None:
    os.environ.setdefault("GTPYHOP_QUIET", "true")
    real = pytest.importorskip("gtpyhop")
    _quiet(real.set_verbose_level, 0)
    real.set_recursive_planning(False)
    original = real.get_current_domain()
    try:
        domain = real.Domain("pantry-real")

        def take(s: Any, item: str) -> Any:
            if s.shelf.get(item, 0) > 0:
                s.shelf[item] -= 1
                s.plate.append(item)
                return s
            return False

        def check(s: Any, item: str) -> Any:
            return s if item in s.plate else False

        real.declare_actions(take, check)
        real.declare_task_methods(
            "serve", lambda s: [("take", "bread")], lambda s: [("take", "jam")]
        )
        state = real.State("kitchen", shelf={"bread": 1, "jam": 1}, plate=[])
        assert real.find_plan(state, [("serve",), ("check", "jam")]) is False
        # ... and a read-only step (check) is dropped from its plans:
        assert real.find_plan(state, [("take", "jam"), ("check", "jam")]) == [("take", "jam")]
        real.set_current_domain(domain)
    finally:
        if original is not None:
            real.set_current_domain(original)


def test_an_action_that_changes_nothing_stays_in_the_plan() -> None:
    _pantry()
    plan = g.find_plan(_state(), [("take", "jam"), ("check", "jam")])
    assert plan == [("take", "jam"), ("check", "jam")]


def test_an_exception_in_domain_code_reaches_the_caller_unchanged() -> None:
    g.Domain("broken")

    def explode(s: Any) -> Any:
        raise KeyError("boom")

    g.declare_actions(explode)
    with pytest.raises(KeyError, match="boom"):
        g.find_plan(_state(), [("explode",)])


def test_verbose_1_prints_the_call_and_the_result(capsys: pytest.CaptureFixture[str]) -> None:
    _pantry()
    RUNTIME.verbose = 1
    g.find_plan(_state(), [("take", "jam")])
    out = capsys.readouterr().out
    assert "FP> find_plan, verbose=1:" in out
    assert "FP> result = [('take', 'jam')]" in out


def test_module_attributes_read_the_live_settings() -> None:
    domain = _pantry()
    assert g.current_domain is domain
    _quiet(g.set_verbose_level, 2)
    assert g.verbose == 2
    assert g.get_current_domain() is domain
    assert g.find_domain_by_name("pantry") is domain


def test_declarations_without_a_domain_and_bad_strategies_raise() -> None:
    RUNTIME.current_domain = None
    with pytest.raises(Exception, match="until a domain has been created"):
        g.declare_actions(print)
    with pytest.raises(ValueError, match="Unknown strategy"):
        g.set_recursive_planning("sideways")


def test_m_split_multigoal_lists_the_goals_not_yet_true() -> None:
    state = g.State("s", loc={"a": "x", "b": "y"})
    goal = g.Multigoal("goal", loc={"a": "x", "b": "z"})
    assert g.m_split_multigoal(state, goal) == [("loc", "b", "z"), goal]
    assert g.m_split_multigoal(state, g.Multigoal("done", loc={"a": "x"})) == []


def test_session_find_plan_reports_success_and_failure() -> None:
    domain = _pantry()
    with g.PlannerSession(domain=domain) as session:
        good = session.find_plan(_state(), [("serve",)])
        bad = session.find_plan(_state(), [("check", "jam")])
    assert good.success
    assert good.plan == [("take", "bread")]
    assert not bad
    assert bad.error == "No plan found"


def test_session_max_expansions_is_enforced() -> None:
    g.Domain("endless")
    g.declare_task_methods("again", lambda s: [("again",)])
    with g.PlannerSession() as session:
        result = session.find_plan(_state(), [("again",)], max_expansions=100)
    assert not result.success
    assert result.error is not None
    assert result.error.startswith("Planning timeout")


def test_session_timeout_works_off_the_main_thread() -> None:
    g.Domain("endless")
    g.declare_task_methods("again", lambda s: [("again",)])
    results: list[Any] = []

    def plan() -> None:
        with g.PlannerSession() as session:
            results.append(session.find_plan(_state(), [("again",)], timeout_ms=20))

    worker = threading.Thread(target=plan)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive()
    assert results[0].error.startswith("Planning timeout")


def test_a_name_the_stand_in_lacks_is_named_in_the_error() -> None:
    with pytest.raises(AttributeError, match="stand-in has no attribute 'NoSuchName'"):
        _ = g.NoSuchName  # type: ignore[attr-defined]
