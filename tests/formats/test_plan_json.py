"""Plan JSON: canonical writer, strict reader with file:line errors, schema, round trips."""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
from typing import Any

import pytest
from _plan_format_fixtures import SCHEMA, check_golden, doc_pipeline_plans
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from plansmith.errors import ParseError, PlanFormatError
from plansmith.formats import parse_plan_json, plan_to_json
from plansmith.model import DecompositionNode, Plan, Step, Tier

VALIDATOR = Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))


def _text() -> str:
    return plan_to_json(doc_pipeline_plans()[0])


def _doc() -> dict[str, Any]:
    return json.loads(_text())


def _rehash(doc: dict[str, Any]) -> str:
    """The document with a correct hash again, written as the writer would."""
    body = {k: v for k, v in doc.items() if k != "hash"}
    compact = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    doc = {**doc, "hash": "sha256:" + hashlib.sha256(compact.encode()).hexdigest()}
    return json.dumps(doc, sort_keys=True, indent=2) + "\n"


def _line_of_step(text: str, step_id: str) -> int:
    """The line of the '{' that opens the step object with this id."""
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if line.strip().rstrip(",") == f'"id": "{step_id}"')
    while lines[at].strip() != "{":
        at -= 1
    return at + 1


def _format_error(text: str) -> PlanFormatError:
    with pytest.raises(PlanFormatError) as err:
        parse_plan_json(text, "plan.json")
    assert err.value.location is not None
    assert err.value.location.file == "plan.json"
    assert err.value.hint
    return err.value


def test_doc_pipeline_plan_json_matches_its_golden_files() -> None:
    classical, htn = doc_pipeline_plans()
    check_golden("doc-pipeline.plan.json", plan_to_json(classical))
    check_golden("doc-pipeline-htn.plan.json", plan_to_json(htn))


def test_written_json_is_sorted_indented_and_ends_with_a_newline() -> None:
    text = _text()
    assert text.endswith("}\n")
    assert text == json.dumps(json.loads(text), sort_keys=True, indent=2) + "\n"


def test_hash_is_sha256_of_the_compact_canonical_json_without_hash() -> None:
    text = _text()
    assert json.loads(text)["hash"] == json.loads(_rehash(json.loads(text)))["hash"]
    assert _rehash(json.loads(text)) == text


def test_round_trip_gives_an_equal_plan_with_the_same_hash_and_bytes() -> None:
    for plan in doc_pipeline_plans():
        back = parse_plan_json(plan_to_json(plan))
        assert back == plan
        assert back.hash == plan.hash
        assert plan_to_json(back) == plan_to_json(plan)


def test_written_plans_satisfy_the_published_schema() -> None:
    Draft202012Validator.check_schema(VALIDATOR.schema)
    for plan in doc_pipeline_plans():
        VALIDATOR.validate(json.loads(plan_to_json(plan)))


def test_syntax_error_is_a_parse_error_with_line_and_column() -> None:
    text = _text().replace('"cost": 4,', '"cost": 4,,')
    with pytest.raises(ParseError) as err:
        parse_plan_json(text, "plan.json")
    assert err.value.location is not None
    assert (err.value.location.file, err.value.location.line) == ("plan.json", 2)
    assert err.value.location.column is not None
    assert not isinstance(err.value, PlanFormatError)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_refused(constant: str) -> None:
    with pytest.raises(ParseError, match=constant):
        parse_plan_json(_text().replace('"cost": 4,', f'"cost": {constant},'))


def test_wrong_format_name_is_refused() -> None:
    doc = _doc()
    doc["format"] = "other.plan"
    err = _format_error(_rehash(doc))
    assert err.location is not None
    assert err.location.line == 1
    assert "other.plan" in err.message


@pytest.mark.parametrize("version", [2, "1", True, 1.5])
def test_unsupported_version_is_refused(version: object) -> None:
    doc = _doc()
    doc["version"] = version
    assert "version" in _format_error(_rehash(doc)).message


def test_missing_step_key_is_reported_at_the_step_line() -> None:
    doc = _doc()
    del doc["steps"][2]["tier"]
    text = _rehash(doc)
    err = _format_error(text)
    assert "'tier'" in err.message
    assert err.location is not None
    assert err.location.line == _line_of_step(text, "s3")


def test_wrong_argument_type_is_reported_at_the_step_line() -> None:
    doc = _doc()
    doc["steps"][1]["args"] = "q3"
    text = _rehash(doc)
    err = _format_error(text)
    assert "'args'" in err.message
    assert err.location is not None
    assert err.location.line == _line_of_step(text, "s2")


def test_duplicate_step_ids_are_refused() -> None:
    doc = _doc()
    doc["steps"][3]["id"] = "s1"
    doc["steps"][3]["after"] = []
    text = _rehash(doc)
    err = _format_error(text)
    assert "s1 is used more than once" in err.message
    assert err.location is not None
    assert err.location.line > _line_of_step(text, "s3")


def test_unknown_after_id_is_refused() -> None:
    doc = _doc()
    doc["steps"][2]["after"] = ["s9"]
    text = _rehash(doc)
    err = _format_error(text)
    assert "'s9'" in err.message
    assert err.location is not None
    assert err.location.line == _line_of_step(text, "s3")


def test_edited_content_no_longer_matches_the_hash() -> None:
    doc = _doc()
    doc["steps"][2]["tier"] = "read"
    text = json.dumps(doc, sort_keys=True, indent=2)
    err = _format_error(text)
    assert "does not match its content" in err.message


def test_total_cost_must_be_the_sum_of_step_costs() -> None:
    doc = _doc()
    doc["cost"] = 3
    assert "sum of its step costs" in _format_error(_rehash(doc)).message


def test_duplicate_keys_are_refused() -> None:
    text = _text().replace('"cost": 4,', '"cost": 4,\n  "cost": 4,')
    err = _format_error(text)
    assert "'cost' appears twice" in err.message
    assert err.location is not None
    assert err.location.line == 1


def test_unknown_keys_are_refused() -> None:
    doc = _doc()
    doc["steps"][0]["colour"] = "red"
    assert "unknown key 'colour'" in _format_error(_rehash(doc)).message


@pytest.mark.parametrize(
    ("path", "value", "words"),
    [
        (("steps", 0, "tier"), "admin", "tier"),
        (("steps", 0, "cost"), "1", "finite number"),
        (("steps", 0, "cost"), True, "finite number"),
        (("domain", "hash"), "md5:abc", "64 hex digits"),
        (("planner",), [], "'planner' must be an object"),
        (("planner", "search"), {"a": 1}, "planner"),
        (("steps",), {}, "'steps' must be a list"),
        (("steps", 0), "s1", "must be a JSON object"),
        (("steps", 0, "id"), "", "non-empty string"),
        (("domain",), None, "must be a JSON object"),
    ],
)
def test_wrong_types_are_refused(path: tuple[Any, ...], value: object, words: str) -> None:
    doc = _doc()
    target: Any = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert words in _format_error(_rehash(doc)).message


def test_top_level_must_be_an_object() -> None:
    assert "must be a JSON object" in _format_error("[1, 2]").message


def _gtpyhop_plan() -> Plan:
    """A plan of a Python-function domain: actions take numbers, booleans and null."""
    steps = (
        Step("s1", "a_pick_up_tip", ("left", "tiprack_1", 1), cost=1),
        Step("s2", "a_aspirate", ("left", 20.5, "plate", "A1"), after=("s1",)),
        Step("s3", "a_mix", ("left", 3, 0, True, None), after=("s2",)),
        Step("s4", "a_drop_tip", ("left", False, -2.25, ""), after=("s3",)),
    )
    return Plan("bio_opentrons", "protocol", "sha256:" + "a" * 64, "sha256:" + "b" * 64, steps)


def test_numeric_boolean_and_null_arguments_round_trip_with_their_types() -> None:
    plan = _gtpyhop_plan()
    text = plan_to_json(plan)
    VALIDATOR.validate(json.loads(text))
    back = parse_plan_json(text)
    assert back == plan
    assert back.hash == plan.hash
    assert plan_to_json(back) == text
    for mine, theirs in zip(plan.steps, back.steps, strict=True):
        assert [type(a) for a in theirs.args] == [type(a) for a in mine.args]
    assert json.loads(text)["steps"][1]["args"] == ["left", 20.5, "plate", "A1"]


@pytest.mark.parametrize(("value", "kind"), [(["A1", "A2"], "a list"), ({"row": 1}, "an object")])
def test_non_scalar_argument_is_refused_at_the_step_line(value: object, kind: str) -> None:
    doc = json.loads(plan_to_json(_gtpyhop_plan()))
    step_line = _line_of_step(_rehash(doc), "s2")  # the lines above it do not change
    doc["steps"][1]["args"][1] = value
    text = _rehash(doc)
    assert not VALIDATOR.is_valid(json.loads(text))
    err = _format_error(text)
    assert "step s2" in err.message
    assert "argument 2" in err.message
    assert kind in err.message
    assert err.location is not None
    assert err.location.line == step_line


def test_argument_too_large_for_a_finite_float_is_refused() -> None:
    text = _rehash(json.loads(plan_to_json(_gtpyhop_plan())))
    text = text.replace("20.5", "1e400")
    err = _format_error(text)
    assert "finite" in err.message
    assert err.location is not None
    assert err.location.line == _line_of_step(text, "s2")


# -- properties ----------------------------------------------------------------------------

_names = st.text(min_size=1, max_size=8)
_numbers = st.integers(0, 10**6) | st.floats(0, 1e6, allow_nan=False, allow_infinity=False)
_setting = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5)
_args = (
    st.text(max_size=8)
    | st.integers(-(10**9), 10**9)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.booleans()
    | st.none()
)


@st.composite
def _plans(draw: st.DrawFn) -> Plan:
    ids = draw(st.lists(_names, unique=True, max_size=6))
    steps = []
    for n, sid in enumerate(ids):
        earlier = ids[:n]
        deps = draw(st.lists(st.sampled_from(earlier), unique=True)) if earlier else []
        steps.append(
            Step(
                sid,
                draw(_names),
                tuple(draw(st.lists(_args, max_size=3))),
                draw(_numbers),
                tuple(deps),
                draw(st.sampled_from(list(Tier))),
            )
        )
    leaves = [DecompositionNode(draw(_names), step=s.id) for s in steps[:2]]
    tree = (DecompositionNode("root", ("x",), "m", children=tuple(leaves)),) if leaves else ()
    hex64 = st.text("0123456789abcdef", min_size=64, max_size=64).map(lambda h: "sha256:" + h)
    return Plan(
        draw(_names),
        draw(_names),
        draw(hex64),
        draw(hex64),
        steps=tuple(steps),
        settings=tuple(sorted(draw(st.dictionaries(_names, _setting, max_size=3)).items())),
        decomposition=tree if draw(st.booleans()) else (),
    )


@settings(max_examples=200, deadline=None)
@given(_plans())
def test_any_plan_round_trips_and_satisfies_the_schema(plan: Plan) -> None:
    text = plan_to_json(plan)
    VALIDATOR.validate(json.loads(text))
    back = parse_plan_json(text)
    assert back == plan
    assert back.hash == plan.hash
    assert plan_to_json(back) == text


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_reader_raises_only_plansmith_errors_on_any_text(text: str) -> None:
    with contextlib.suppress(ParseError, PlanFormatError):
        parse_plan_json(text)


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_mutated_plans_are_refused_whenever_the_schema_refuses_them(data: st.DataObject) -> None:
    doc = copy.deepcopy(json.loads(plan_to_json(doc_pipeline_plans()[1])))
    path = data.draw(st.sampled_from(_paths(doc)))
    parent: Any = doc
    for key in path[:-1]:
        parent = parent[key]
    if isinstance(parent, dict) and data.draw(st.booleans()):
        del parent[path[-1]]
    else:
        parent[path[-1]] = data.draw(_json)
    text = _rehash(doc)
    schema_ok = VALIDATOR.is_valid(json.loads(text))
    try:
        parse_plan_json(text)
    except PlanFormatError:
        return
    assert schema_ok, f"the reader accepted what the schema refuses: {path}"


def test_bytes_that_are_not_utf8_are_a_parse_error_at_the_first_bad_byte() -> None:
    data = _text().encode().replace(b'"format"', b'"for\xffmat"', 1)
    line = data[: data.index(b"\xff")].count(b"\n") + 1
    with pytest.raises(ParseError, match=r"not UTF-8 text \(byte 0xff\)") as caught:
        parse_plan_json(data, file="plan.json")
    assert str(caught.value.location) == f"plan.json:{line}:7"
    assert caught.value.hint is not None
    assert parse_plan_json(_text().encode()) == parse_plan_json(_text())
