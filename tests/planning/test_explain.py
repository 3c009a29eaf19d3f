"""explain: why each step is in the plan, as plain deterministic text (with golden files)."""

from __future__ import annotations

import pytest
from _plan_fixtures import (
    check_golden,
    doc_pipeline_plans,
    lit,
    rooms_plan,
    rooms_problem,
    with_after,
)

from plansmith.errors import PlanInvalidError
from plansmith.model import Atom
from plansmith.planning import explain


def _block(text: str, step_id: str) -> str:
    """The lines of the explanation about one step."""
    blocks = text.split("\n\n")
    return next(b for b in blocks if b.startswith(f"{step_id} "))


def test_doc_pipeline_explanation_matches_its_golden_file() -> None:
    (problem, plan), _ = doc_pipeline_plans()
    check_golden("doc-pipeline.explain.txt", explain(plan, problem))


def test_htn_explanation_matches_its_golden_file() -> None:
    _, (problem, plan) = doc_pipeline_plans()
    check_golden("doc-pipeline-htn.explain.txt", explain(plan, problem))


def test_step_says_which_goal_it_achieves_and_what_it_needs() -> None:
    (problem, plan), _ = doc_pipeline_plans()
    block = _block(explain(plan, problem), "s3")
    assert "achieves: goal indexed(notes)" in block
    assert "needs:    summarised(notes) <- s1 summarise(notes)" in block


def test_step_says_which_later_steps_it_supplies() -> None:
    problem = rooms_problem(goal=[lit("clean", "k")])
    plan = rooms_plan(problem, ("switch_on", "k"), ("look", "k"), ("sweep", "r1", "k"))
    block = _block(explain(plan, problem), "s1")
    assert "supplies: lit(k) -> s2 look(k)" in block
    assert "lit(k) -> s3 sweep(r1, k)" in block
    assert "not lit(k) <- the initial state" in block


def test_htn_step_shows_its_decomposition_path() -> None:
    _, (problem, plan) = doc_pipeline_plans()
    block = _block(explain(plan, problem), "s2")
    assert "task:     publish(notes) by summarise_then_index > index(notes)" in block
    assert "Tasks: publish(notes), publish(q3)" in explain(plan, problem)


def test_ordering_without_a_causal_link_is_explained() -> None:
    problem = rooms_problem()
    plan = rooms_plan(problem, ("switch_on", "k"), ("sweep", "r1", "k"), ("switch_off", "k"))
    text = explain(plan, problem)
    assert "after:    s2, which needs lit(k) before this step changes it" in _block(text, "s3")
    clash = rooms_plan(problem, ("spark", "h"), ("cut", "h"))
    assert "after:    s1: both change lit(h)" in _block(explain(clash, problem), "s2")


def test_step_nothing_needs_is_flagged() -> None:
    problem = rooms_problem(goal=[lit("lit", "k")])
    plan = rooms_plan(problem, ("spark", "h"), ("spark", "k"))
    text = explain(plan, problem)
    assert "no goal and no later step uses its effects" in _block(text, "s1")
    assert "no goal" not in _block(text, "s2")


def test_goals_true_initially_are_credited_to_the_initial_state() -> None:
    problem = rooms_problem(goal=[lit("at", "r1", "k")])
    text = explain(rooms_plan(problem), problem)
    assert "0 steps, total cost 0" in text
    assert "at(r1, k) <- the initial state" in text


def test_explanation_is_the_same_every_time() -> None:
    problem = rooms_problem(init=[Atom("at", ("r1", "k")), Atom("lit", ("h",))])
    calls = (("cut", "h"), ("switch_on", "k"), ("spark", "h"), ("look", "h"))
    texts = {explain(rooms_plan(problem, *calls), problem) for _ in range(3)}
    assert len(texts) == 1


def test_plan_that_does_not_fit_the_domain_cannot_be_explained() -> None:
    problem = rooms_problem()
    plan = rooms_plan(problem, ("spark", "k"), ("look", "k"))
    with pytest.raises(PlanInvalidError) as err:
        explain(with_after(plan, s1=("s2",)), problem)
    assert err.value.location is not None
    assert err.value.location.step == "s1"
