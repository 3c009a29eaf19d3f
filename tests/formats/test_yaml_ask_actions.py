"""Ask actions in YAML domains: read with their question, answer schema and effects by
answer; every mistake is a DomainError at its line with a hint; any typed answer is
read by its schema or refused with an AnswerError (fuzzed)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plansmith.errors import AnswerError, DomainError
from plansmith.formats import parse_domain
from plansmith.model import (
    AnswerSchema,
    Tier,
    answer_from_text,
    answer_json_schema,
    answered_schema,
    check_answer,
)

HEAD = """\
domain: asky
types: {item: object}
predicates: {ready: [item], kept: [item], trimmed: [item], checked: [item]}
actions:
"""
ASK = """\
  review:
    kind: ask
    parameters: {x: item}
    question: "Keep all of {x}, or trim it?"
    answer: %s
    precondition: [ready(x)]
    effect: [checked(x)]
    answers:
      %s
"""


def _domain(answer: str, answers: str = "keep: [kept(x)]") -> str:
    return HEAD + ASK % (answer, answers)


def test_an_ask_action_is_read_with_its_schema_and_plans_with_the_assumed_answer() -> None:
    domain = parse_domain(
        _domain(
            "{type: enum, choices: [keep, trim], default: trim}",
            "keep: [kept(x)]\n      trim: [trimmed(x)]",
        )
    )
    review = domain.action("review")
    assert review is not None
    assert review.ask is not None
    assert review.tier is Tier.READ
    assert review.ask.answer.choices == ("keep", "trim")
    assert review.ask.assumed == "trim"
    assert [str(e) for e in review.effect] == ["checked(x)", "trimmed(x)"]
    kept = answered_schema(review, "keep")
    assert [str(e) for e in kept.effect] == ["checked(x)", "kept(x)"]
    assert answer_json_schema(review.ask.answer) == {
        "type": "string",
        "enum": ["keep", "trim"],
        "default": "trim",
    }


def test_a_yes_no_answer_reads_its_branches_by_yes_and_no() -> None:
    domain = parse_domain(_domain("{type: boolean}", "yes: [kept(x)]\n      no: [trimmed(x)]"))
    review = domain.action("review")
    assert review is not None
    assert review.ask is not None
    assert review.ask.branches[0][0] == "true"
    assert review.ask.assumed is True
    assert [str(e) for e in answered_schema(review, False).effect] == ["checked(x)", "trimmed(x)"]


@pytest.mark.parametrize(
    ("answer", "answers", "line", "says"),
    [
        ("{type: enumm, choices: [a]}", "a: []", 9, "unknown answer type 'enumm'"),
        ("{type: enum}", "keep: []", 9, "an enum with no choices"),
        ("{type: enum, choices: [keep], minimum: 2}", "keep: []", 9, "'minimum' does not apply"),
        ("{type: enum, choices: [keep], default: trim}", "keep: []", 9, "'trim' is not one of"),
        ("{type: enum, choices: [keep]}", "kep: []", 13, "'kep' is not a choice"),
        ("{type: number, maximum: 3}", "keep: []", 13, "has no effects by answer"),
        ("{type: string, pattern: '('}", "", 9, "not a regular expression"),
        ("{type: boolean}", "maybe: []", 13, "'maybe' is not yes or no"),
    ],
)
def test_a_wrong_ask_is_a_domain_error_at_its_line(
    answer: str, answers: str, line: int, says: str
) -> None:
    with pytest.raises(DomainError) as error:
        parse_domain(_domain(answer, answers), file="d.yaml")
    assert says in str(error.value)
    assert error.value.location is not None
    assert error.value.location.line == line


def test_an_ask_needs_a_question_and_its_placeholders_name_parameters() -> None:
    text = _domain("{type: boolean}", "yes: []")
    with pytest.raises(DomainError, match="names \\{y\\}, not a parameter"):
        parse_domain(text.replace("{x}", "{y}"))
    with pytest.raises(DomainError, match="an ask with no question"):
        parse_domain(text.replace('    question: "Keep all of {x}, or trim it?"\n', ""))
    with pytest.raises(DomainError, match="unknown kind 'asc'") as error:
        parse_domain(text.replace("kind: ask", "kind: asc"))
    assert error.value.hint is not None
    assert "ask" in error.value.hint


def test_a_question_on_an_action_that_is_no_ask_is_refused() -> None:
    text = _domain("{type: boolean}", "yes: []").replace("    kind: ask\n", "")
    with pytest.raises(DomainError, match="'question' is for an ask action") as error:
        parse_domain(text)
    assert error.value.hint == "add `kind: ask` to make a person answer this action"


SCHEMAS = [
    AnswerSchema("enum", choices=("all", "top5")),
    AnswerSchema("boolean"),
    AnswerSchema("number", minimum=0, maximum=100, integer=True),
    AnswerSchema("number", minimum=-1.5),
    AnswerSchema("string", min_length=1, max_length=8, pattern="[a-z]+"),
]


@given(st.sampled_from(SCHEMAS), st.text(max_size=20))
def test_any_typed_answer_is_read_by_its_schema_or_refused_with_the_reason(
    schema: AnswerSchema, text: str
) -> None:
    try:
        value = answer_from_text(schema, text)
    except AnswerError as error:
        refused: AnswerError | None = error
    else:
        refused = None
        assert check_answer(schema, value) == value
    if refused is not None:
        assert (refused.hint or "").startswith("answer ")


@given(
    st.sampled_from(SCHEMAS),
    st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(), st.text(), st.lists(st.integers())
    ),
)
def test_any_json_answer_is_checked_or_refused_with_the_reason(
    schema: AnswerSchema, value: object
) -> None:
    try:
        checked = check_answer(schema, value)
    except AnswerError:
        return
    assert check_answer(schema, checked) == checked
