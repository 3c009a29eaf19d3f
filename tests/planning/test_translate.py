"""The offline translator: a request matched to a domain's named goals, deterministically."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from plansmith.formats import parse_domain, parse_problem
from plansmith.model import TypedName
from plansmith.planning import match_goal

DOMAIN = parse_domain(
    """\
domain: lab
types: {plate: object, sample: object}
predicates:
  cycled: [plate]
  sealed: [plate]
  loaded: [sample, plate]
actions: {}
goals:
  cycled_plate:
    description: "run a PCR thermal cycle on a plate"
    goal: [cycled(p), sealed(p)]
    parameters: {p: plate}
  load_sample:
    description: "load a sample onto a plate"
    goal: [loaded(s, p)]
    parameters: {s: sample, p: plate}
""",
    file="domain.yaml",
)
OBJECTS = (TypedName("p1", "plate"), TypedName("p2", "plate"), TypedName("dna", "sample"))


def test_a_clear_request_gives_the_ground_goal_of_the_best_named_goal() -> None:
    match = match_goal(DOMAIN, "Please run the PCR cycle on p2", OBJECTS)
    assert match.sure
    assert match.chosen == "cycled_plate"
    assert match.goal == ("cycled(p2)", "sealed(p2)")


def test_several_named_objects_make_a_conjunction_for_a_one_parameter_goal() -> None:
    match = match_goal(DOMAIN, "cycle p1 and p2", OBJECTS)
    assert match.goal == ("cycled(p1)", "sealed(p1)", "cycled(p2)", "sealed(p2)")


def test_the_only_object_of_a_type_fills_a_parameter_the_request_does_not_name() -> None:
    match = match_goal(DOMAIN, "load the sample onto p1", OBJECTS)
    assert match.sure
    assert match.goal == ("loaded(dna, p1)",)


def test_a_missing_object_gives_candidates_not_a_guess() -> None:
    match = match_goal(DOMAIN, "run a pcr cycle on a plate", OBJECTS)
    assert not match.sure
    assert match.goal == ()
    assert match.candidates[0].name == "cycled_plate"
    assert match.candidates[0].missing == ("p",)


def test_a_tie_or_no_word_in_common_is_unsure() -> None:
    assert not match_goal(DOMAIN, "plate p1", OBJECTS).sure  # both goals mention plates
    nothing = match_goal(DOMAIN, "bake a cake", OBJECTS)
    assert not nothing.sure
    assert [c.score for c in nothing.candidates] == [0, 0]


def test_the_answer_is_the_same_for_the_same_request() -> None:
    first = match_goal(DOMAIN, "load dna onto p2", OBJECTS)
    assert all(match_goal(DOMAIN, "load dna onto p2", OBJECTS) == first for _ in range(3))


@given(st.text(max_size=60))
def test_any_request_gives_a_goal_that_parses_or_no_goal(request: str) -> None:
    match = match_goal(DOMAIN, request, OBJECTS)
    assert match.sure == bool(match.goal)
    if match.goal:
        objects = ", ".join(f"{o.name}: {o.type}" for o in OBJECTS)
        text = f"problem: p\ndomain: lab\nobjects: {{{objects}}}\ngoal: [{', '.join(match.goal)}]\n"
        assert parse_problem(text, DOMAIN).goal
