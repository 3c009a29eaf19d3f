"""Question classifier, subquestion rules, the problem writer, and the domain's plans."""

from __future__ import annotations

import pytest

from plansmith.domains.research import (
    DOMAIN_FILE,
    Budget,
    classify,
    problem_for,
    read_research_header,
    research_problem,
)
from plansmith.errors import ProblemError
from plansmith.model import Plan


@pytest.mark.parametrize(
    ("question", "kind", "options", "criteria"),
    [
        ("Compare json and pickle on speed, safety and portability", "compare",
         ("json", "pickle"), ("speed", "safety", "portability")),
        ("asyncio vs threading for I/O bound work", "compare",
         ("asyncio", "threading"), ("I/O bound work",)),
        ("What are the differences between list and tuple?", "compare",
         ("list", "tuple"), ("features", "performance", "limitations")),
        ("Should we use sqlite3 or shelve for local storage?", "should",
         ("sqlite3", "shelve"), ("local storage",)),
        ("Should we adopt asyncio.TaskGroup?", "should", (), ()),
        ("What is tomllib?", "explain", (), ()),
        ("How do I parse TOML files?", "explain", (), ()),
    ],
)  # fmt: skip
def test_questions_are_classified_with_their_options_and_criteria(
    question: str, kind: str, options: tuple[str, ...], criteria: tuple[str, ...]
) -> None:
    q = classify(question)
    assert (q.kind, q.options, q.criteria) == (kind, options, criteria)


def test_topics_drop_question_words() -> None:
    assert classify("What does functools.lru_cache do?").topic == "functools.lru_cache"
    assert classify("How do I parse TOML files?").topic == "parse TOML files"
    assert classify("Should we adopt asyncio.TaskGroup?").topic == "asyncio.TaskGroup"


def test_compare_gives_options_times_criteria_subquestions() -> None:
    rp = research_problem("Compare json and pickle on speed and safety", ["docs"])
    assert [(s.id, s.option, s.criterion) for s in rp.subquestions] == [
        ("sq1", "json", "speed"),
        ("sq2", "json", "safety"),
        ("sq3", "pickle", "speed"),
        ("sq4", "pickle", "safety"),
    ]


def test_explain_and_should_give_their_facets() -> None:
    explain = research_problem("What is tomllib?", ["docs"])
    assert [s.facet for s in explain.subquestions] == ["definition", "usage", "caveats", "history"]
    should = research_problem("Should we use sqlite3 or shelve?", ["docs"])
    assert [(s.facet, s.option) for s in should.subquestions] == [
        ("options", ""),
        ("pros", "sqlite3"),
        ("cons", "sqlite3"),
        ("pros", "shelve"),
        ("cons", "shelve"),
    ]


def test_rules_drop_off_topic_small_duplicate_and_over_budget_and_say_why() -> None:
    rp = research_problem(
        "Compare json and pickle on speed and safety",
        ["docs", "notes"],
        Budget(max_subtasks=5, max_searches=100),
        extra=["weather in Paris", "it", "json speed", "pickle protocol versions", "json schema"],
    )
    reasons = {d.subquestion: d.reason for d in rp.decisions if not d.kept}
    assert reasons["weather in Paris"].startswith("off-topic")
    assert reasons["it"].startswith("too small")
    assert reasons["json speed"].startswith("duplicate of sq1")
    assert reasons["json schema"] == "over budget: max_subtasks is 5"
    assert [s.text for s in rp.subquestions][-1] == "pickle protocol versions"
    assert len(rp.subquestions) == 5


def test_the_search_budget_caps_subquestions_times_sources() -> None:
    rp = research_problem("What is tomllib?", ["a", "b", "c"], Budget(max_searches=7))
    assert len(rp.subquestions) == 2  # 2 x 3 = 6 searches; a third would make 9
    dropped = [d.reason for d in rp.decisions if not d.kept]
    assert all("max_searches 7" in r for r in dropped)
    assert len(dropped) == 2


def test_problem_yaml_loads_and_its_header_round_trips() -> None:
    formats = pytest.importorskip("plansmith.formats")
    text = problem_for("Compare json and pickle on speed", ["python-docs", "planted-notes"])
    domain = formats.load_domain(DOMAIN_FILE)
    problem = formats.parse_problem(text, domain)
    assert [str(t) for t in problem.tasks] == ["research(q)"]
    assert {o.name for o in problem.objects} >= {"q", "sq1", "sq2", "src_python_docs"}
    header = read_research_header(text)
    assert header.sources == (
        ("src_python_docs", "python-docs"),
        ("src_planted_notes", "planted-notes"),
    )
    assert header == research_problem(
        "Compare json and pickle on speed", ["python-docs", "planted-notes"]
    )


def test_bad_inputs_are_problem_errors_with_hints() -> None:
    for question, sources in (("", ["a"]), ("What is x?", []), ("What is x?", ["a-b", "a_b"])):
        with pytest.raises(ProblemError) as info:
            research_problem(question, sources)
        assert info.value.hint
    with pytest.raises(ProblemError, match="header"):
        read_research_header("problem: x\n", "p.yaml")


def _plan(question: str, sources: list[str]) -> Plan:
    formats = pytest.importorskip("plansmith.formats")
    planning = pytest.importorskip("plansmith.planning")
    plan = getattr(planning, "plan", None)
    if plan is None:
        planner = pytest.importorskip("plansmith.planning._planner")
        plan = planner.plan
    domain = formats.load_domain(DOMAIN_FILE)
    result: Plan = plan(formats.parse_problem(problem_for(question, sources), domain))
    return result


def _before(plan: Plan, step_id: str) -> set[str]:
    seen: set[str] = set()
    todo = [step_id]
    while todo:
        step = plan.step(todo.pop())
        assert step is not None
        for a in step.after:
            if a not in seen:
                seen.add(a)
                todo.append(a)
    return seen


@pytest.mark.parametrize(
    "question",
    ["Compare json and pickle on speed", "What is tomllib?", "Should we use sqlite3 or shelve?"],
)
def test_searches_of_one_subquestion_are_unordered_and_precede_its_weighing(question: str) -> None:
    sources = ["python-docs", "planted-notes", "planted-blog"]
    plan = _plan(question, sources)
    rp = research_problem(question, sources)
    searches = [s for s in plan.steps if s.action == "search"]
    assert len(searches) == len(rp.subquestions) * len(sources)
    for sq in rp.subquestions:
        mine = [s for s in searches if s.args[0] == sq.id]
        assert sorted(s.args[1] for s in mine) == sorted(obj for obj, _ in rp.sources)
        for a in mine:
            for b in mine:
                assert a.id == b.id or a.id not in _before(plan, b.id)
        (weigh,) = [s for s in plan.steps if s.action == "weigh" and s.args[0] == sq.id]
        assert {s.id for s in mine} <= _before(plan, weigh.id)
    (verify,) = [s for s in plan.steps if s.action == "verify"]
    assert {s.id for s in plan.steps if s.action == "weigh"} <= _before(plan, verify.id)
    (report,) = [s for s in plan.steps if s.action == "write_report"]
    assert verify.id in _before(plan, report.id)
    assert all(s.tier.value == "read" for s in plan.steps)
