"""validate / check_plan: every kind of bad plan is reported with its step id and a hint."""

from __future__ import annotations

from dataclasses import replace

import pytest
from _plan_fixtures import (
    ROOMS,
    after,
    doc_pipeline_plans,
    lit,
    rooms_plan,
    rooms_problem,
    with_after,
)

from plansmith.errors import PlanFormatError, PlanInvalidError
from plansmith.model import Atom, DecompositionNode, Plan, Problem, Step, Tier
from plansmith.planning import PlanIssue, check_plan, object_args, validate

LIT_K = Atom("lit", ("k",))
AT_K = Atom("at", ("r1", "k"))


def _sweep_plan() -> tuple[Problem, Plan]:
    """switch_on(k) -> sweep(r1, k) -> switch_off(k), goal clean(k)."""
    problem = rooms_problem(goal=[lit("clean", "k")])
    plan = rooms_plan(problem, ("switch_on", "k"), ("sweep", "r1", "k"), ("switch_off", "k"))
    assert after(plan) == {"s1": (), "s2": ("s1",), "s3": ("s2",)}
    return problem, plan


def _edit_step(plan: Plan, step_id: str, **changes: object) -> Plan:
    steps = tuple(replace(s, **changes) if s.id == step_id else s for s in plan.steps)
    return replace(plan, steps=steps)


def _only(issues: list[PlanIssue]) -> PlanIssue:
    assert len(issues) == 1, issues
    return issues[0]


def _invalid(plan: Plan, problem: Problem) -> PlanInvalidError:
    with pytest.raises(PlanInvalidError) as err:
        validate(plan, problem)
    assert err.value.hint
    return err.value


def test_valid_plans_pass() -> None:
    problem, plan = _sweep_plan()
    validate(plan, problem)
    for problem, plan in doc_pipeline_plans():
        validate(plan, problem)


def test_unknown_action_is_reported_at_its_step() -> None:
    problem, plan = _sweep_plan()
    issue = _only(check_plan(_edit_step(plan, "s2", action="mop"), problem))
    assert (issue.kind, issue.location.step) == ("unknown-action", "s2")
    assert "sweep" in issue.hint  # lists the known actions


def test_wrong_number_of_arguments_is_reported() -> None:
    problem, plan = _sweep_plan()
    issue = _only(check_plan(_edit_step(plan, "s1", args=("k", "h")), problem))
    assert (issue.kind, issue.location.step) == ("arity", "s1")
    assert "a: room" in issue.hint


def test_unknown_object_is_reported() -> None:
    problem, plan = _sweep_plan()
    issue = _only(check_plan(_edit_step(plan, "s2", args=("r1", "cellar")), problem))
    assert (issue.kind, issue.location.step) == ("argument", "s2")
    assert "cellar" in issue.message


def test_argument_of_the_wrong_type_is_reported() -> None:
    problem, plan = _sweep_plan()
    issue = _only(check_plan(_edit_step(plan, "s2", args=("k", "k")), problem))
    assert (issue.kind, issue.location.step) == ("argument", "s2")
    assert "needs a robot" in issue.message


@pytest.mark.parametrize("value", [3, 2.5, True, None])
def test_non_string_argument_of_a_declarative_domain_is_reported(value: object) -> None:
    problem, plan = _sweep_plan()
    issue = _only(check_plan(_edit_step(plan, "s2", args=("r1", value)), problem))
    assert (issue.kind, issue.location.step) == ("argument", "s2")
    assert "not an object name" in issue.message
    assert "needs a room" in issue.message


def test_object_args_gives_names_and_refuses_numbers_with_the_step_id() -> None:
    assert object_args(Step("s1", "sweep", ("r1", "k"))) == ("r1", "k")
    with pytest.raises(PlanInvalidError) as err:
        object_args(Step("s7", "sweep", ("r1", 4)))
    assert err.value.location is not None
    assert err.value.location.step == "s7"
    assert "argument 2 is 4" in err.value.message
    assert err.value.hint


def test_failed_equality_precondition_is_reported() -> None:
    problem = rooms_problem()
    plan = Plan("rooms", "rooms-1", "", "", steps=(Step("s1", "move", ("r1", "k", "k")),))
    issues = check_plan(plan, problem, check_hashes=False)
    assert [(i.kind, i.location.step) for i in issues] == [("equality", "s1")]


def test_edited_cost_and_lowered_tier_are_reported() -> None:
    problem, plan = _sweep_plan()
    issues = check_plan(_edit_step(plan, "s1", cost=1, tier=Tier.READ), problem)
    assert [(i.kind, i.location.step) for i in issues] == [("cost", "s1"), ("tier", "s1")]


def test_hash_mismatch_is_a_plan_format_error() -> None:
    problem, plan = _sweep_plan()
    other = rooms_problem(goal=[lit("clean", "h")])
    with pytest.raises(PlanFormatError, match="problem") as err:
        validate(plan, other)
    assert err.value.exit_code == 2
    with pytest.raises(PlanFormatError, match="domain"):
        validate(plan, replace(problem, domain=replace(ROOMS, name="rooms2")))
    validate(replace(plan, problem_hash="sha256:" + "0" * 64), problem, check_hashes=False)


def test_precondition_that_fails_in_the_replay_names_the_step() -> None:
    problem, plan = _sweep_plan()
    swapped = replace(plan, steps=(plan.steps[1], plan.steps[0], plan.steps[2]))
    swapped = with_after(swapped, s2=(), s3=("s2",))
    err = _invalid(swapped, problem)
    assert err.location is not None
    assert err.location.step == "s2"
    assert "lit(k)" in err.message


def test_missed_goal_is_reported() -> None:
    problem, plan = _sweep_plan()
    short = replace(plan, steps=plan.steps[:1])
    issues = check_plan(short, problem, check_hashes=False)
    assert [i.kind for i in issues] == ["goal"]
    assert "clean(k)" in issues[0].message


def test_htn_problem_without_goal_only_replays_preconditions() -> None:
    problem = rooms_problem()
    plan = rooms_plan(problem, ("switch_on", "k"))
    validate(plan, problem)
    bad = Plan(
        plan.domain,
        plan.problem,
        plan.domain_hash,
        plan.problem_hash,
        steps=(Step("s1", "look", ("k",), cost=0, tier=Tier.READ),),
    )
    assert [i.kind for i in check_plan(bad, problem)] == ["precondition"]


def test_cycle_is_reported_with_its_steps() -> None:
    problem, plan = _sweep_plan()
    issue = _only(check_plan(with_after(plan, s1=("s3",)), problem))
    assert issue.kind == "cycle"
    assert "s1 -> s2 -> s3 -> s1" in issue.message


def test_unknown_and_self_after_ids_are_reported() -> None:
    problem, plan = _sweep_plan()
    issues = check_plan(with_after(plan, s2=("s1", "s9"), s3=("s3",)), problem)
    assert [(i.kind, i.location.step) for i in issues] == [
        ("unknown-after", "s2"),
        ("self-after", "s3"),
    ]


def test_duplicate_step_ids_are_reported() -> None:
    problem, plan = _sweep_plan()
    issues = check_plan(_edit_step(plan, "s3", id="s1"), problem)
    assert ("duplicate-id", "s1") in [(i.kind, i.location.step) for i in issues]


def test_missing_causal_edge_is_unsafe() -> None:
    problem, plan = _sweep_plan()
    err = _invalid(with_after(plan, s2=()), problem)
    assert err.location is not None
    assert err.location.step == "s2"
    assert "lit(k)" in err.message
    assert "s1" in (err.hint or "")


def test_unordered_clobberer_is_unsafe() -> None:
    problem, plan = _sweep_plan()
    # s3 switch_off(k) no longer waits for s2 sweep(r1, k), which needs lit(k).
    issues = check_plan(with_after(plan, s3=("s1",)), problem)
    assert [(i.kind, i.location.step) for i in issues] == [("unsafe-order", "s2")]
    assert "s3" in issues[0].message
    assert "order s3 after s2" in issues[0].hint


def test_unordered_deleter_of_a_goal_is_unsafe() -> None:
    problem = rooms_problem(goal=[lit("lit", "h")])
    plan = rooms_plan(problem, ("cut", "h"), ("spark", "h"))
    issue = _only(check_plan(with_after(plan, s2=()), problem))
    assert (issue.kind, issue.location.step) == ("unsafe-order", "s1")
    assert "goal lit(h)" in issue.message


def test_clobberer_with_a_white_knight_in_between_is_safe() -> None:
    # look(k) needs lit(k). cut(k) is unordered with spark(k) s1, which look depends on,
    # but the second spark(k) restores lit(k) after cut and before look in every order.
    problem = rooms_problem(init=[AT_K])
    plan = rooms_plan(problem, ("spark", "k"), ("cut", "k"), ("spark", "k"), ("look", "k"))
    dag = with_after(plan, s1=(), s2=(), s3=("s2",), s4=("s1", "s3"))
    assert check_plan(dag, problem) == []
    # Without the knight's edge, cut(k) may come last before look(k).
    issues = check_plan(with_after(dag, s3=()), problem)
    assert [(i.kind, i.location.step) for i in issues] == [("unsafe-order", "s4")]


def test_bad_decomposition_reference_is_reported() -> None:
    problem, plan = _sweep_plan()
    tree = (DecompositionNode("clean", ("k",), "m", children=(DecompositionNode("x", step="s7"),)),)
    issue = _only(check_plan(replace(plan, decomposition=tree), problem))
    assert (issue.kind, issue.location.step) == ("decomposition", "s7")


def test_validate_lists_every_problem_in_its_message() -> None:
    problem, plan = _sweep_plan()
    bad = _edit_step(_edit_step(plan, "s1", cost=5), "s3", action="nap")
    err = _invalid(bad, problem)
    assert err.location is not None
    assert err.location.step == "s1"
    assert "1 more problem(s)" in err.message
    assert "step s3" in err.message
    assert str(err).startswith("step s1: ")
