"""The offline translator: a request matched to a domain's named goals, deterministically."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import plansmith
from plansmith.formats import load_domain, load_problem, parse_domain, parse_problem
from plansmith.model import Domain, TypedName
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
WORDS = ("run", "pcr", "cycle", "load", "sample", "plate", "p1", "p2", "dna", "gamma", "a",
         "the", "and", "onto", "cake", "p3", "sealed", "cyclle", "make")  # fmt: skip


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


def test_a_tie_or_no_word_in_common_is_unsure_and_says_why() -> None:
    tie = match_goal(DOMAIN, "plate p1", OBJECTS)  # both goals mention plates
    assert not tie.sure
    assert tie.reason == (
        "'cycled_plate' ties with 'load_sample' (1 word each): name the goal; "
        "the request names only 'plate': say what to do"
    )
    assert [c.reason for c in tie.candidates] == [
        "ties with 'load_sample' (1 word each); the request names only 'plate': say what to do",
        "ties with 'cycled_plate' (1 word each)",
    ]
    nothing = match_goal(DOMAIN, "bake a cake", OBJECTS)
    assert not nothing.sure
    assert nothing.candidates == ()  # nothing that looks plannable
    assert nothing.reason == "no goal of lab matches 'bake a cake'"


def test_the_answer_is_the_same_for_the_same_request() -> None:
    first = match_goal(DOMAIN, "load dna onto p2", OBJECTS)
    assert all(match_goal(DOMAIN, "load dna onto p2", OBJECTS) == first for _ in range(3))


@given(st.text(max_size=60) | st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join))
def test_any_request_gives_a_goal_that_parses_or_no_goal(request: str) -> None:
    match = match_goal(DOMAIN, request, OBJECTS)
    assert match.sure == bool(match.goal)
    if match.sure:
        assert match.reason == ""
        assert match.candidates[0].reason == ""
        assert all(c.reason for c in match.candidates[1:])
    else:
        assert match.reason
        assert all(c.reason for c in match.candidates)
    if match.goal:
        objects = ", ".join(f"{o.name}: {o.type}" for o in OBJECTS)
        text = f"problem: p\ndomain: lab\nobjects: {{{objects}}}\ngoal: [{', '.join(match.goal)}]\n"
        assert parse_problem(text, DOMAIN).goal


def _shipped(name: str) -> tuple[Domain, tuple[TypedName, ...]]:
    folder = Path(plansmith.__file__).parent / "examples" / name
    domain = load_domain(folder / "domain.yaml")
    return domain, load_problem(folder / "problem.yaml", domain).objects


def test_the_goal_description_word_for_word_asks_which_document() -> None:
    domain, objects = _shipped("doc-pipeline")  # notes (a document), q3 (a report)
    match = match_goal(domain, "make a document searchable", objects)
    assert not match.sure
    assert match.reason == "which document? name one of: notes, q3"
    [candidate] = match.candidates
    assert (candidate.name, candidate.missing, candidate.goal) == ("indexed", ("d",), ())
    assert candidate.reason == "which document? name one of: notes, q3"
    assert match_goal(domain, "make notes and q3 searchable", objects).goal == (
        "indexed(notes)",
        "indexed(q3)",
    )
    assert match_goal(domain, "index the report", objects).goal == ("indexed(q3)",)


def test_an_unknown_object_and_a_foreign_request_say_different_things() -> None:
    domain, objects = _shipped("doc-pipeline")
    gamma = match_goal(domain, "ingest gamma", objects)
    pizza = match_goal(domain, "order a pizza", objects)
    assert not gamma.sure
    assert not pizza.sure
    assert gamma.candidates == pizza.candidates == ()  # never silently the only goal
    assert gamma.unknown == ("gamma",)
    assert gamma.reason == (
        "no goal of doc-pipeline matches 'ingest gamma'; "
        "'gamma' is not an object of this domain: pass it in objects"
    )
    assert pizza.reason == "no goal of doc-pipeline matches 'order a pizza'"
    indexed = match_goal(domain, "index notes and gamma", objects)
    assert not indexed.sure
    assert indexed.reason == "'gamma' is not an object of this domain: pass it in objects"
    assert indexed.candidates[0].reason == indexed.reason
    typo = match_goal(domain, "index notse", objects)
    assert typo.reason.startswith("'notse' (did you mean 'notes'?) is not an object")


def test_typos_of_five_letters_or_more_still_match() -> None:
    domain, objects = _shipped("doc-pipeline")
    for request in ("make notes serchable", "idnex notes", "make notes searchabel"):
        assert match_goal(domain, request, objects).goal == ("indexed(notes)",), request
    assert match_goal(domain, "make notes srchble", objects).goal == ()  # two edits


def test_a_word_of_one_goal_counts_more_than_a_word_of_several() -> None:
    domain = parse_domain(
        """\
domain: w
types: {thing: object}
predicates: {a: [thing], b: [thing], c: [thing]}
actions: {}
goals:
  alpha: {description: "polish the thing", goal: [a(t)], parameters: {t: thing}}
  beta: {description: "wash and rinse the thing", goal: [b(t)], parameters: {t: thing}}
  gamma: {description: "wash and dry the thing", goal: [c(t)], parameters: {t: thing}}
""",
        file="domain.yaml",
    )
    objects = (TypedName("x", "thing"),)
    polish = match_goal(domain, "polish and wash x", objects)  # 1 word each for alpha, beta
    assert not polish.sure  # alpha, but beta and gamma are asked for too
    assert [c.name for c in polish.candidates] == ["alpha", "beta", "gamma"]
    assert [c.weight for c in polish.candidates] == [3.0, 1.5, 1.5]
    assert match_goal(domain, "rinse x", objects).goal == ("b(x)",)
    assert match_goal(domain, "gamma x", objects).goal == ("c(x)",)  # by its name


def test_a_request_with_a_foreign_word_per_goal_word_is_not_planned() -> None:
    assert not match_goal(DOMAIN, "cycle a bicycle", OBJECTS).sure  # no plate named
    assert match_goal(DOMAIN, "cycle p1 for the bicycle team", OBJECTS).goal == (
        "cycled(p1)",
        "sealed(p1)",
    )
