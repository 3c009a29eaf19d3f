"""Decomposition that respects the question's structure (offline, no model): a compound
question gives one part per clause, each part its own subquestions, and no subquestion
ever crosses an entity of one part with the question of another."""

from __future__ import annotations

import re

import pytest

from plansmith.domains.research import (
    DOMAIN_FILE,
    Budget,
    classify,
    problem_for,
    read_research_header,
    research_problem,
    split_parts,
)
from plansmith.model import Plan

ACCEPTANCE = (
    "Compare asyncio and threading for I/O-bound concurrency in Python, "
    "and when was Frobnicator 4.2 released?"
)

# question -> (kind of each part, the words that name each part's own entities)
COMPOUND = {
    ACCEPTANCE: (("compare", "fact"), (("asyncio", "threading"), ("Frobnicator",))),
    "What is tomllib, and when was zoneinfo added?": (
        ("explain", "fact"),
        (("tomllib",), ("zoneinfo",)),
    ),
    "When was Python 3.9 released? Which version added math.isqrt?": (
        ("fact", "fact"),
        (("Python 3.9",), ("isqrt",)),
    ),
    "Compare json and pickle on speed; should we use sqlite3 or shelve for local storage?": (
        ("compare", "should"),
        (("json", "pickle"), ("sqlite3", "shelve")),
    ),
    "What are tomllib and zoneinfo?": (("explain", "explain"), (("tomllib",), ("zoneinfo",))),
    "How many workers does ThreadPoolExecutor use by default, and what is statistics.fmean?": (
        ("fact", "explain"),
        (("ThreadPoolExecutor",), ("fmean",)),
    ),
    "Is asyncio.Queue thread-safe and how does threading.Lock work?": (
        ("fact", "explain"),
        (("asyncio.Queue",), ("threading.Lock",)),
    ),
}


@pytest.mark.parametrize("question", list(COMPOUND))
def test_a_compound_question_gives_one_part_per_clause(question: str) -> None:
    kinds, _ = COMPOUND[question]
    q = classify(question)
    assert q.kind == "compound"
    assert tuple(p.kind for p in q.parts) == kinds


@pytest.mark.parametrize("question", list(COMPOUND))
def test_every_subquestion_belongs_to_one_part_and_names_only_its_entities(question: str) -> None:
    _, entities = COMPOUND[question]
    rp = research_problem(question, ["python-docs", "notes"], Budget(max_subtasks=40))
    parts = {s.part for s in rp.subquestions}
    assert parts == set(range(1, len(entities) + 1)), "every part is asked"
    for sq in rp.subquestions:
        asked = f"{sq.text} {sq.query}".lower()
        own = entities[sq.part - 1]
        assert any(e.lower() in asked for e in own), (sq, own)
        for n, others in enumerate(entities, 1):
            if n != sq.part:
                crossed = [e for e in others if e.lower() in asked]
                assert not crossed, f"{sq.id} crosses part {n}: {sq.text!r}"


def test_the_acceptance_question_is_a_comparison_over_its_own_criterion_and_one_fact() -> None:
    rp = research_problem(ACCEPTANCE, ["python-docs", "NOTES"])
    got = [(s.id, s.part, s.facet, s.text, s.query) for s in rp.subquestions]
    assert got == [
        ("sq1", 1, "criterion", "How does asyncio fare on I/O-bound concurrency in Python?",
         "asyncio"),
        ("sq2", 1, "criterion", "How does threading fare on I/O-bound concurrency in Python?",
         "threading"),
        ("sq3", 2, "fact", "When was Frobnicator 4.2 released?", "Frobnicator 4.2"),
    ]  # fmt: skip
    assert "released" in rp.subquestions[2].also.split()
    assert not any("fare on when" in s.text for s in rp.subquestions)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How do I read and write CSV files?", "explain"),
        ("Compare json, pickle and marshal on speed and safety", "compare"),
        ("Should we use sqlite3 or shelve for local storage?", "should"),
        ("asyncio vs threading for I/O bound work", "compare"),
        ("When was Frobnicator 4.2 released?", "fact"),
        ("What is tomllib?", "explain"),
    ],
)
def test_one_clause_questions_are_not_split(question: str, kind: str) -> None:
    assert split_parts(question) == [question]
    assert classify(question).kind == kind


def test_a_pronoun_in_a_later_part_names_the_part_before() -> None:
    q = classify("What is zoneinfo and when was it added?")
    assert [(p.kind, p.text) for p in q.parts] == [
        ("explain", "What is zoneinfo"),
        ("fact", "when was zoneinfo added"),
    ]


def test_a_small_budget_still_asks_every_part() -> None:
    question = "Compare json and pickle on speed and safety, and when was tomllib added?"
    rp = research_problem(question, ["docs"], Budget(max_subtasks=2))
    assert sorted(s.part for s in rp.subquestions) == [1, 2]
    assert [s.id for s in rp.subquestions] == ["sq1", "sq2"]
    kept = [d.reason for d in rp.decisions if d.kept]
    assert kept == ["kept as sq1 (criterion)", "kept as sq2 (fact)"]


def test_the_problem_shows_the_decomposition_and_its_header_round_trips() -> None:
    text = problem_for(ACCEPTANCE, ["python-docs", "NOTES"])
    assert "# part 1 (compare): Compare asyncio and threading" in text
    assert "# part 2 (fact): when was Frobnicator 4.2 released" in text
    assert "# sq3 (part 2): When was Frobnicator 4.2 released?" in text
    assert re.search(r"^  - asks_compound\(q\)$", text, re.M)
    header = read_research_header(text)
    assert header == research_problem(ACCEPTANCE, ["python-docs", "NOTES"])
    assert [p.kind for p in header.question.parts] == ["compare", "fact"]


def _plan(question: str, sources: list[str]) -> Plan:
    formats = pytest.importorskip("plansmith.formats")
    from plansmith.engine import make_plan

    domain = formats.load_domain(DOMAIN_FILE)
    return make_plan(formats.parse_problem(problem_for(question, sources), domain))


@pytest.mark.parametrize(
    "question", [ACCEPTANCE, "When was Frobnicator 4.2 released?", "What are tomllib and zoneinfo?"]
)
def test_the_plan_searches_each_subquestion_on_every_source_before_anything_runs(
    question: str,
) -> None:
    sources = ["python-docs", "NOTES"]
    plan = _plan(question, sources)
    rp = research_problem(question, sources)
    searches = sorted(tuple(s.args) for s in plan.steps if s.action == "search")
    assert searches == sorted((sq.id, obj) for sq in rp.subquestions for obj, _ in rp.sources)
    actions = [s.action for s in plan.steps]
    assert actions.count("verify") == 1
    assert actions.count("write_report") == 1
    assert ("compare" in actions) == (question == ACCEPTANCE)
