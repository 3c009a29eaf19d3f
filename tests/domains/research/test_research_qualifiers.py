"""A trailing "in/with/using <language or tool>" qualifier never changes a question's
kind: "How do I read a CSV file in Python?" asks what "How do I read a CSV file?" asks."""

from __future__ import annotations

import pytest

from plansmith.domains.research import (
    Budget,
    classify,
    problem_for,
    propose,
    read_research_header,
    research_problem,
    split_qualifier,
)

LANGUAGES = (
    "in Python",
    "in Python 3",
    "in Python 3.11",
    "with Python",
    "using Python 3.12",
    "in CPython",
    "using the standard library",
    "with the stdlib",
    "in pure Python",
    "on Linux",
)
TOOLS = ("with pandas", "using the csv module", "with os.path", "via sqlite3")

BASES = (
    ("How do I read a CSV file?", "explain"),
    ("How to read a CSV file?", "explain"),
    ("How can I parse JSON?", "explain"),
    ("What is asyncio?", "explain"),
    ("Explain decorators?", "explain"),
    ("How does asyncio work?", "explain"),
    ("Compare json and pickle?", "compare"),
    ("json vs pickle?", "compare"),
    ("Which is better, json or pickle?", "compare"),
    ("What are the differences between list and tuple?", "compare"),
    ("Should we use asyncio or threading?", "should"),
    ("When was tomllib added?", "fact"),
    ("Is sqlite3 thread-safe?", "fact"),
    ("How many workers does ThreadPoolExecutor use?", "fact"),
    ("What are tomllib and zoneinfo?", "compound"),
)


def _with(question: str, qualifier: str) -> str:
    return f"{question.rstrip('?')} {qualifier}?"


@pytest.mark.parametrize(("question", "kind"), BASES)
@pytest.mark.parametrize("qualifier", LANGUAGES + TOOLS)
def test_a_trailing_qualifier_never_changes_the_kind(
    question: str, kind: str, qualifier: str
) -> None:
    assert classify(question).kind == kind
    qualified = classify(_with(question, qualifier))
    assert qualified.kind == kind, (qualifier, qualified)
    assert len(qualified.parts) == len(classify(question).parts)


@pytest.mark.parametrize(("question", "kind"), BASES)
@pytest.mark.parametrize("qualifier", LANGUAGES)
def test_a_language_qualifier_is_context_and_asks_the_same_subquestions(
    question: str, kind: str, qualifier: str
) -> None:
    plain, qualified = classify(question), classify(_with(question, qualifier))
    assert qualified.topic == plain.topic
    assert qualified.options == plain.options
    assert qualified.criteria == plain.criteria
    asked = [(s.facet, s.query, s.also) for s in propose(plain)]
    assert [(s.facet, s.query, s.also) for s in propose(qualified)] == asked


def test_the_csv_question_in_python_is_the_csv_question() -> None:
    q = classify("How do I read a CSV file in Python?")
    assert (q.kind, q.topic, q.qualifier) == ("explain", "read a CSV file", "in Python")
    assert q.text == "How do I read a CSV file in Python"  # the question as asked
    sources = ["python-docs"]
    plain = research_problem("How do I read a CSV file?", sources, Budget())
    qualified = research_problem("How do I read a CSV file in Python?", sources, Budget())
    assert [(s.text, s.query) for s in qualified.subquestions] == [
        (s.text, s.query) for s in plain.subquestions
    ]


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        (
            "How do I create a temporary file with tempfile?",
            "create a temporary file with tempfile",
        ),
        ("How do I use regular expressions with re?", "regular expressions with re"),
        ("How do I read a CSV file using the csv module?", "read a CSV file using the csv module"),
        ("What is asyncio with pandas?", "asyncio with pandas"),
    ],
)
def test_a_tool_qualifier_stays_in_an_explain_topic(question: str, topic: str) -> None:
    q = classify(question)
    assert (q.kind, q.topic) == ("explain", topic)


def test_a_fact_leaves_a_language_out_of_its_search_words() -> None:
    (sq,) = propose(classify("When was tomllib added in Python 3?"))
    assert sq.query == "tomllib"
    assert sq.text == "When was tomllib added in Python 3?"


def test_a_qualifier_after_criteria_stays_with_them() -> None:
    q = classify("Compare asyncio and threading for I/O-bound concurrency in Python")
    assert q.options == ("asyncio", "threading")
    assert q.criteria == ("I/O-bound concurrency in Python",)
    q = classify("Should we use sqlite3 or shelve for local storage in Python?")
    assert (q.kind, q.options, q.criteria) == (
        "should",
        ("sqlite3", "shelve"),
        ("local storage in Python",),
    )


@pytest.mark.parametrize(
    ("question", "options"),
    [
        ("Compare json with pickle", ("json", "pickle")),
        ("What is the difference between list and tuple in Python?", ("list", "tuple")),
    ],
)
def test_with_between_options_still_joins_them(question: str, options: tuple[str, ...]) -> None:
    q = classify(question)
    assert (q.kind, q.options) == ("compare", options)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("How do I read a CSV file in Python?", ("How do I read a CSV file?", "in Python")),
        ("How do I store data in a file?", ("How do I store data in a file?", "")),
        (
            "How do I read a file with a context manager",
            ("How do I read a file with a context manager", ""),
        ),
        ("in Python", ("in Python", "")),
        ("What is it in Python 3.x?", ("What is it?", "in Python 3.x")),
    ],
)
def test_split_qualifier(text: str, expected: tuple[str, str]) -> None:
    assert split_qualifier(text) == expected


def test_the_qualifier_round_trips_through_the_problem_header() -> None:
    text = problem_for("How do I read a CSV file in Python?", ["python-docs"], Budget())
    header = read_research_header(text)
    assert header.question.qualifier == "in Python"
