"""HTN decomposition over plansmith's own model: plans, partial order, tree, search."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from _htn_helpers import doc_pipeline_htn

from plansmith.errors import LimitReachedError, UnsolvableError
from plansmith.model import (
    ActionSchema,
    Atom,
    Domain,
    Equality,
    Literal,
    Method,
    Ordered,
    Parallel,
    Predicate,
    Problem,
    TaskCall,
    TaskSchema,
    TypedName,
    TypeHierarchy,
)
from plansmith.planning import PlanOptions, validate
from plansmith.planning.htn import plan_htn


def _lit(pred: str, *args: str, positive: bool = True) -> Literal:
    return Literal(Atom(pred, args), positive)


def _call(name: str, *args: str) -> TaskCall:
    return TaskCall(name, args)


def _action(name: str, params: str, pre=(), eff=()) -> ActionSchema:  # type: ignore[no-untyped-def]
    return ActionSchema(
        name, tuple(TypedName(p, "item") for p in params.split()), tuple(pre), tuple(eff)
    )


def _problem(tasks: list[TaskCall], methods: dict[str, list[Method]], **kw) -> Problem:  # type: ignore[no-untyped-def]
    """A toy domain: items a, b, c that can be marked, shipped and counted."""
    actions = (
        _action("mark", "x", [_lit("ready", "x")], [_lit("marked", "x")]),
        _action("ship", "x", [_lit("marked", "x")], [_lit("shipped", "x")]),
        _action("fail", "x", [_lit("never", "x")], []),
        _action("count", "x", [], [_lit("counted", "x")]),
    )
    params = {"deliver": ("x",), "deliver_any": (), "both": ("x", "y"), "loop": ("x",)}
    tasks_ = tuple(
        TaskSchema(n, tuple(TypedName(p, "item") for p in params[n]), tuple(ms))
        for n, ms in methods.items()
    )
    domain = Domain(
        "toy",
        types=TypeHierarchy.of({"item": "object"}),
        predicates=tuple(
            Predicate(p, (TypedName("x", "item"),))
            for p in ("ready", "marked", "shipped", "never", "counted", "wanted")
        ),
        actions=actions,
        tasks=tasks_,
    )
    defaults = {
        "objects": tuple(TypedName(o, "item") for o in "abc"),
        "init": frozenset({Atom("ready", ("a",)), Atom("ready", ("b",))}),
    }
    return Problem("toy-problem", domain, tasks=tuple(tasks), **(defaults | kw))


def _steps(plan) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(s) for s in plan.steps]


def test_doc_pipeline_tasks_plan_in_order_with_the_decomposition_tree() -> None:
    problem = doc_pipeline_htn()
    plan = plan_htn(problem)
    assert _steps(plan) == ["summarise(notes)", "index(notes)", "summarise(q3)", "index(q3)"]
    assert [s.after for s in plan.steps] == [(), ("s1",), ("s2",), ("s3",)]
    assert dict(plan.settings) == {"kind": "htn", "strategy": "dfs"}
    tree = plan.decomposition
    assert [(n.task, n.args, n.method) for n in tree] == [
        ("publish", ("notes",), "summarise_then_index"),
        ("publish", ("q3",), "summarise_then_index"),
    ]
    assert [c.step for c in tree[0].children] == ["s1", "s2"]
    validate(plan, problem)


def test_publish_all_branches_come_out_unordered_in_the_dag() -> None:
    problem = dataclasses.replace(doc_pipeline_htn(), tasks=(_call("publish_all", "notes", "q3"),))
    plan = plan_htn(problem)
    assert _steps(plan) == ["summarise(notes)", "index(notes)", "summarise(q3)", "index(q3)"]
    after = {s.id: s.after for s in plan.steps}
    assert after == {"s1": (), "s2": ("s1",), "s3": (), "s4": ("s3",)}
    assert plan.decomposition[0].method == "both"
    validate(plan, problem)


def test_a_parallel_block_is_ordered_against_what_comes_before_and_after() -> None:
    block = Parallel((Ordered((_call("mark", "x"),)), Ordered((_call("mark", "y"),))))
    both = Method("both", network=Ordered((_call("count", "x"), block, _call("count", "y"))))
    plan = plan_htn(_problem([_call("both", "a", "b")], {"both": [both]}))
    assert _steps(plan) == ["count(a)", "mark(a)", "mark(b)", "count(b)"]
    after = {s.id: s.after for s in plan.steps}
    assert after == {"s1": (), "s2": ("s1",), "s3": ("s1",), "s4": ("s2", "s3")}


def test_interfering_parallel_branches_keep_their_order() -> None:
    # ship(x) needs marked(x), which the other branch's mark(x) adds.
    block = Parallel((Ordered((_call("mark", "x"),)), Ordered((_call("ship", "x"),))))
    method = Method("m", network=Ordered((block,)))
    plan = plan_htn(_problem([_call("deliver", "a")], {"deliver": [method]}))
    assert _steps(plan) == ["mark(a)", "ship(a)"]
    assert plan.steps[1].after == ("s1",)


def test_backtracks_to_the_next_method_when_an_action_fails() -> None:
    broken = Method("broken", network=Ordered((_call("mark", "x"), _call("fail", "x"))))
    works = Method("works", network=Ordered((_call("mark", "x"), _call("ship", "x"))))
    plan = plan_htn(_problem([_call("deliver", "a")], {"deliver": [broken, works]}))
    assert _steps(plan) == ["mark(a)", "ship(a)"]
    assert plan.decomposition[0].method == "works"


def test_backtracks_into_an_earlier_task_when_a_later_one_fails() -> None:
    # deliver(x) may just count x, or mark and ship it; the second task needs shipped(a).
    count = Method("count_only", network=Ordered((_call("count", "x"),)))
    ship = Method("ship_it", network=Ordered((_call("mark", "x"), _call("ship", "x"))))
    need = Method("need", [_lit("shipped", "x")], Ordered((_call("count", "x"),)))
    problem = _problem(
        [_call("deliver", "a"), _call("loop", "a")],
        {"deliver": [count, ship], "loop": [need]},
    )
    plan = plan_htn(problem)
    assert _steps(plan) == ["mark(a)", "ship(a)", "count(a)"]
    assert [n.method for n in plan.decomposition] == ["ship_it", "need"]


def test_backtracks_over_bindings_of_a_method_parameter() -> None:
    # deliver_any picks a ready item ?y; a is ready but "wanted" only holds for b.
    pick = Method(
        "pick",
        precondition=(_lit("ready", "y"),),
        network=Ordered((_call("mark", "y"), _call("deliver", "y"))),
        parameters=(TypedName("y", "item"),),
    )
    need_wanted = Method("wanted", [_lit("wanted", "x")], Ordered((_call("ship", "x"),)))
    problem = _problem(
        [_call("deliver_any")],
        {"deliver_any": [pick], "deliver": [need_wanted]},
        init=frozenset({Atom("ready", ("a",)), Atom("ready", ("b",)), Atom("wanted", ("b",))}),
    )
    plan = plan_htn(problem)
    assert _steps(plan) == ["mark(b)", "ship(b)"]
    assert plan.decomposition[0].children[0].args == ("b",)


def test_method_parameters_without_a_positive_literal_range_over_their_type() -> None:
    pick = Method(
        "pick",
        precondition=(_lit("ready", "y", positive=False),),
        network=Ordered((_call("count", "y"),)),
        parameters=(TypedName("y", "item"),),
    )
    plan = plan_htn(_problem([_call("deliver_any")], {"deliver_any": [pick]}))
    assert _steps(plan) == ["count(c)"]  # a and b are ready


def test_equalities_between_task_and_method_parameters_are_checked() -> None:
    other = Method(
        "other",
        precondition=(_lit("ready", "y"), Equality("x", "y", positive=False)),
        network=Ordered((_call("mark", "y"),)),
        parameters=(TypedName("y", "item"),),
    )
    plan = plan_htn(_problem([_call("deliver", "a")], {"deliver": [other]}))
    assert _steps(plan) == ["mark(b)"]


def test_a_failing_method_precondition_is_skipped() -> None:
    never = Method("never", [_lit("never", "x")], Ordered((_call("count", "x"),)))
    plain = Method("plain", network=Ordered((_call("mark", "x"),)))
    plan = plan_htn(_problem([_call("deliver", "b")], {"deliver": [never, plain]}))
    assert plan.decomposition[0].method == "plain"


def test_an_unsolvable_task_network_raises_unsolvable() -> None:
    broken = Method("broken", network=Ordered((_call("mark", "x"), _call("fail", "x"))))
    with pytest.raises(UnsolvableError) as caught:
        plan_htn(_problem([_call("deliver", "a")], {"deliver": [broken]}))
    assert caught.value.exit_code == 3
    assert caught.value.hint


def test_tasks_and_a_goal_must_both_hold() -> None:
    count = Method("count_only", network=Ordered((_call("count", "x"),)))
    ship = Method("ship_it", network=Ordered((_call("mark", "x"), _call("ship", "x"))))
    problem = _problem(
        [_call("deliver", "a")], {"deliver": [count, ship]}, goal=(_lit("shipped", "a"),)
    )
    assert _steps(plan_htn(problem)) == ["mark(a)", "ship(a)"]


def test_the_node_limit_stops_a_decomposition_that_does_not_progress() -> None:
    forever = Method("again", network=Ordered((_call("loop", "x"), _call("count", "x"))))
    problem = _problem([_call("loop", "a")], {"loop": [forever]})
    with pytest.raises(LimitReachedError) as caught:
        plan_htn(problem, PlanOptions(node_limit=500))
    assert caught.value.exit_code == 4


def test_the_time_limit_reads_the_injected_clock() -> None:
    ticks = itertools.count()
    forever = Method("again", network=Ordered((_call("loop", "x"), _call("count", "x"))))
    problem = _problem([_call("loop", "a")], {"loop": [forever]})
    with pytest.raises(LimitReachedError, match="time limit"):
        plan_htn(problem, PlanOptions(time_limit=10), clock=lambda: float(next(ticks)))


def test_plans_are_identical_across_runs() -> None:
    problem = dataclasses.replace(doc_pipeline_htn(), tasks=(_call("publish_all", "notes", "q3"),))
    first = plan_htn(problem)
    assert plan_htn(problem).to_dict() == first.to_dict()
    assert first.hash.startswith("sha256:")


def test_a_primitive_task_in_the_problem_becomes_a_leaf_of_the_tree() -> None:
    plan = plan_htn(_problem([_call("mark", "a"), _call("ship", "a")], {}))
    assert _steps(plan) == ["mark(a)", "ship(a)"]
    assert [(n.task, n.step, n.method) for n in plan.decomposition] == [
        ("mark", "s1", None),
        ("ship", "s2", None),
    ]
    assert plan.steps[1].after == ("s1",)


def test_an_empty_method_orders_its_neighbours_directly() -> None:
    nothing = Method("nothing")
    around = Method(
        "around", network=Ordered((_call("mark", "x"), _call("loop", "x"), _call("ship", "x")))
    )
    plan = plan_htn(_problem([_call("deliver", "a")], {"deliver": [around], "loop": [nothing]}))
    assert _steps(plan) == ["mark(a)", "ship(a)"]
    assert plan.steps[1].after == ("s1",)
    (root,) = plan.decomposition
    assert [(c.task, c.method, c.children) for c in root.children][1] == ("loop", "nothing", ())
