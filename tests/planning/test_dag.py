"""build_plan: partial-order lifting of a sequence into the plan DAG, and the problem hash."""

from __future__ import annotations

from dataclasses import replace

import pytest
from _plan_fixtures import (
    ROOMS,
    act,
    after,
    doc_pipeline_plans,
    lit,
    neg,
    rooms_plan,
    rooms_problem,
)

from plansmith.errors import PlanInvalidError
from plansmith.model import Atom, DecompositionNode, content_hash
from plansmith.planning import build_plan, problem_hash
from plansmith.planning._dag import transitive_reduction

AT_K = Atom("at", ("r1", "k"))


def test_independent_steps_come_out_unordered() -> None:
    plan = rooms_plan(rooms_problem(), ("switch_on", "k"), ("switch_on", "h"), ("look", "h"))
    assert after(plan) == {"s1": (), "s2": (), "s3": ("s2",)}


def test_doc_pipeline_summaries_run_in_parallel_and_each_index_waits_for_its_summary() -> None:
    (_, plan), _ = doc_pipeline_plans()
    assert after(plan) == {"s1": (), "s2": (), "s3": ("s1",), "s4": ("s2",)}


def test_causal_chain_is_ordered() -> None:
    plan = rooms_plan(
        rooms_problem(goal=[lit("clean", "h")]),
        ("switch_on", "h"),
        ("move", "r1", "k", "h"),
        ("sweep", "r1", "h"),
    )
    assert after(plan) == {"s1": (), "s2": (), "s3": ("s1", "s2")}


def test_step_that_deletes_a_needed_fact_is_ordered_after_its_consumer() -> None:
    plan = rooms_plan(
        rooms_problem(), ("switch_on", "k"), ("sweep", "r1", "k"), ("switch_off", "k")
    )
    # s3 needs lit(k) from s1 (causal) and would clobber s2's lit(k): s3 after s2.
    assert after(plan) == {"s1": (), "s2": ("s1",), "s3": ("s2",)}


def test_threat_to_a_fact_from_the_initial_state_is_ordered_after_the_consumer() -> None:
    problem = rooms_problem(init=[AT_K, Atom("lit", ("k",))])
    plan = rooms_plan(problem, ("look", "k"), ("sweep", "r1", "k"), ("cut", "k"))
    assert after(plan) == {"s1": (), "s2": (), "s3": ("s1", "s2")}


def test_threat_that_came_first_stays_before_the_achiever() -> None:
    # cut(h) deletes lit(h); spark(h) re-adds it for look(h). cut must stay before spark.
    problem = rooms_problem(init=[AT_K, Atom("lit", ("h",))])
    plan = rooms_plan(problem, ("cut", "h"), ("switch_on", "k"), ("spark", "h"), ("look", "h"))
    assert after(plan) == {"s1": (), "s2": (), "s3": ("s1",), "s4": ("s3",)}


def test_negative_preconditions_link_to_the_last_deleter() -> None:
    plan = rooms_plan(rooms_problem(), ("switch_on", "k"), ("switch_off", "k"), ("switch_on", "k"))
    assert after(plan) == {"s1": (), "s2": ("s1",), "s3": ("s2",)}


def test_interfering_effects_keep_their_sequence_order() -> None:
    # Nothing needs lit(h), but spark adds what cut deletes: the final state depends on order.
    plan = rooms_plan(rooms_problem(), ("spark", "h"), ("cut", "h"), ("spark", "k"))
    assert after(plan) == {"s1": (), "s2": ("s1",), "s3": ()}


def test_steps_with_the_same_effect_on_an_atom_stay_unordered() -> None:
    plan = rooms_plan(rooms_problem(), ("cut", "h"), ("cut", "h"), ("spark", "h"))
    assert after(plan) == {"s1": (), "s2": (), "s3": ("s1", "s2")}


def test_goal_achiever_stays_after_every_deleter_of_the_goal() -> None:
    plan = rooms_plan(rooms_problem(goal=[lit("lit", "h")]), ("cut", "h"), ("spark", "h"))
    assert after(plan) == {"s1": (), "s2": ("s1",)}


def test_after_is_the_transitive_reduction() -> None:
    plan = rooms_plan(
        rooms_problem(goal=[lit("clean", "k")]),
        ("switch_on", "k"),
        ("look", "k"),
        ("sweep", "r1", "k"),
        ("switch_off", "k"),
    )
    # switch_off must follow s1 (causal), s2 and s3 (it would clobber their lit(k)).
    # s2 and s3 are unordered, so s4 keeps both edges; s1 -> s4 is implied and dropped.
    assert after(plan) == {"s1": (), "s2": ("s1",), "s3": ("s1",), "s4": ("s2", "s3")}


def test_transitive_reduction_drops_exactly_the_implied_edges() -> None:
    preds = [set(), {0}, {0, 1}, {0, 1, 2}, {1}]
    assert transitive_reduction(preds) == [(), (0,), (1,), (2,), (1,)]


def test_step_ids_costs_and_tiers_come_from_the_actions() -> None:
    plan = rooms_plan(rooms_problem(), ("switch_on", "k"), ("look", "k"))
    assert [(s.id, s.action, s.args, s.cost, s.tier.value) for s in plan.steps] == [
        ("s1", "switch_on", ("k",), 2, "execute"),
        ("s2", "look", ("k",), 0, "read"),
    ]
    assert plan.cost == 2


def test_plan_records_names_hashes_and_sorted_settings() -> None:
    problem = rooms_problem()
    plan = build_plan(problem, [act(ROOMS, "spark", "k")], (("search", "bfs"), ("kind", "x")))
    assert (plan.domain, plan.problem) == ("rooms", "rooms-1")
    assert plan.domain_hash == content_hash(ROOMS)
    assert plan.problem_hash == problem_hash(problem)
    assert plan.settings == (("kind", "x"), ("search", "bfs"))


def test_decomposition_is_kept() -> None:
    tree = (
        DecompositionNode(
            "light",
            ("k",),
            "by_switch",
            children=(DecompositionNode("switch_on", ("k",), step="s1"),),
        ),
    )
    plan = build_plan(rooms_problem(), [act(ROOMS, "switch_on", "k")], (), decomposition=tree)
    assert plan.decomposition == tree


def test_empty_sequence_gives_an_empty_plan_when_the_goal_already_holds() -> None:
    plan = build_plan(rooms_problem(goal=[lit("at", "r1", "k")]), [], ())
    assert plan.steps == ()
    assert plan.cost == 0


def test_sequence_that_is_not_executable_is_refused_with_its_step_id() -> None:
    with pytest.raises(PlanInvalidError) as err:
        rooms_plan(rooms_problem(), ("look", "h"), ("sweep", "r1", "k"))
    assert err.value.location is not None
    assert err.value.location.step == "s1"
    assert "lit(h)" in err.value.message
    assert err.value.hint


def test_negative_precondition_failure_names_the_literal() -> None:
    with pytest.raises(PlanInvalidError, match=r"not lit\(k\)") as err:
        rooms_plan(rooms_problem(), ("spark", "k"), ("switch_on", "k"))
    assert err.value.location is not None
    assert err.value.location.step == "s2"


def test_sequence_that_misses_the_goal_is_refused() -> None:
    with pytest.raises(PlanInvalidError, match=r"goal clean\(k\)"):
        rooms_plan(rooms_problem(goal=[lit("clean", "k")]), ("spark", "k"))


def test_problem_hash_ignores_the_name_and_the_domain_object_but_not_the_content() -> None:
    problem = rooms_problem(goal=[lit("clean", "k")])
    renamed = replace(problem, name="other", domain=replace(ROOMS, name="renamed"))
    assert problem_hash(renamed) == problem_hash(problem)
    assert problem_hash(replace(problem, goal=(neg("clean", "k"),))) != problem_hash(problem)
    extra = replace(problem, init=problem.init | {Atom("lit", ("k",))})
    assert problem_hash(extra) != problem_hash(problem)


def test_problem_hash_does_not_depend_on_init_order() -> None:
    atoms = [Atom("lit", (r,)) for r in ("k", "h")] + [AT_K]
    a = rooms_problem(init=atoms)
    b = rooms_problem(init=list(reversed(atoms)))
    assert problem_hash(a) == problem_hash(b)


def test_building_twice_gives_equal_plans_and_hashes() -> None:
    calls = (("switch_on", "k"), ("sweep", "r1", "k"), ("switch_off", "k"))
    first, second = rooms_plan(rooms_problem(), *calls), rooms_plan(rooms_problem(), *calls)
    assert first == second
    assert first.hash == second.hash
