"""Output extraction: the fast path agrees with the JSONPath library; a singular path
gives a value, any other a list; a path reads the parsed text when it could reach it."""

from __future__ import annotations

import jsonpath
import pytest
from hypothesis import given
from hypothesis import strategies as st

from plansmith.binding import extract, reads_json, singular
from plansmith.binding._extract import simple_path
from plansmith.errors import ToolCallError
from plansmith.execution import ToolResult

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner, max_size=3)
    ),
    max_leaves=10,
)
paths = st.lists(st.sampled_from([".a", ".b", "[0]", "[1]", "['c']"]), min_size=1, max_size=4).map(
    lambda parts: "$" + "".join(parts)
)


@given(value=json_values, path=paths)
def test_simple_paths_match_the_library(value: object, path: str) -> None:
    document = {"root": value}
    full = "$.root" + path[1:]
    assert simple_path(full) is not None
    expected = jsonpath.findall(full, document)  # type: ignore[arg-type]
    if expected:
        assert extract([("v", full)], document) == {"v": expected[0]}  # type: ignore[arg-type]
    else:
        with pytest.raises(ToolCallError):
            extract([("v", full)], document)  # type: ignore[arg-type]


def test_filter_paths_use_the_library() -> None:
    doc = {"json": [{"n": 1}, {"n": 2}]}
    assert simple_path("$.json[?@.n > 1].n") is None
    assert extract([("v", "$.json[?@.n > 1].n")], doc) == {"v": [2]}
    assert extract([("v", "$.json[*].n")], doc) == {"v": [1, 2]}


NON_SINGULAR = [
    "$.structured.hits[*].id",
    "$.structured..id",
    "$.structured.hits[?@.id].id",
    "$.structured.hits[0:5].id",
    "$.structured.hits[0,1].id",
    "$.structured.hits.*.id",
]


@pytest.mark.parametrize("path", NON_SINGULAR)
def test_a_path_that_is_not_singular_gives_a_list_whatever_it_matches(path: str) -> None:
    for hits in range(3):
        document = {"structured": {"hits": [{"id": f"h{k}"} for k in range(hits)]}}
        found = extract([("ids", path)], document)  # type: ignore[arg-type]
        assert found == {"ids": [f"h{k}" for k in range(hits)]}, (path, hits)


def test_a_path_of_names_and_indices_gives_its_one_value_or_fails() -> None:
    document = {"structured": {"hits": [{"id": "a"}, {"id": "b"}], "it's": [1]}}
    for path, value in [
        ("$.structured.hits[0].id", "a"),
        ("$.structured.hits[-1].id", "b"),  # the library's, not the direct lookup
        ('$["structured"]["hits"][1]["id"]', "b"),
        ("$.structured.hits", [{"id": "a"}, {"id": "b"}]),
    ]:
        assert singular(path)
        assert extract([("v", path)], document) == {"v": value}  # type: ignore[arg-type]
    for path in ("$.structured.hits[2].id", "$.structured.hits[-3]", '$["structured"]["x"]'):
        with pytest.raises(ToolCallError) as info:
            extract([("v", path)], document)  # type: ignore[arg-type]
        assert info.value.error_class == "extraction_error"


def test_a_union_of_paths_is_not_singular() -> None:
    document = {"structured": {"a": 1}, "text": "t"}
    assert not singular("$.structured.a | $.text")
    assert extract([("v", "$.structured.a | $.text")], document) == {"v": [1, "t"]}


READS_JSON = {
    "$..id": True,
    "$.*": True,
    "$[*].id": True,
    "$[?@.id]": True,
    "$['json', 'text']": True,
    "$.json.a": True,
    "$['json'].a": True,
    "$": True,
    "$.structured[?@.id == $.json.id]": True,  # a filter's query from the root
    "$.structured | $.json.a": True,
    "$.structured..id": False,
    "$.structured[*].id": False,
    "$.text": False,
    "$['structured', 'text']": False,
    "$.is_error": False,
    "$.structured.json": False,  # a member named json inside structured
}


@pytest.mark.parametrize(("path", "reads"), READS_JSON.items(), ids=READS_JSON.keys())
def test_a_path_reads_the_parsed_text_when_it_could_reach_it(path: str, reads: bool) -> None:
    assert reads_json(path) is reads


@pytest.mark.parametrize("path", ["$..id", "$.*", "$[?@.items]"])
def test_what_a_path_matches_does_not_depend_on_the_other_outputs(path: str) -> None:
    # the runner parses the result's text only for outputs that read_json says read it
    result = ToolResult(None, '{"a": 1, "items": [{"id": "x"}, {"id": "y"}]}')
    alone = [("v", path)]
    with_json = [("v", path), ("a", "$.json.a")]
    found = [
        extract(outputs, result.document(parse_json=any(reads_json(p) for _, p in outputs)))
        for outputs in (alone, with_json)
    ]
    assert found[0]["v"] == found[1]["v"] != []


def test_no_match_is_an_extraction_error() -> None:
    with pytest.raises(ToolCallError) as info:
        extract([("v", "$.structured.nope")], {"structured": {}})
    assert info.value.error_class == "extraction_error"


def test_a_path_into_json_of_a_text_that_is_not_json_says_so() -> None:
    document = {"structured": None, "text": "oops, not json", "json": None, "is_error": False}
    with pytest.raises(ToolCallError) as info:
        extract([("v", "$.json.value")], document)
    assert info.value.message == (
        "output 'v': $.json.value matched nothing in the result"
        " (its text is not JSON, so $.json is null: 'oops, not json')"
    )
    with pytest.raises(ToolCallError) as other:
        extract([("v", "$.json.value")], {**document, "json": {"x": 1}})
    assert other.value.message == (
        "output 'v': $.json.value matched nothing in the result: $.json is an object with keys x"
    )


MEMORY_EXISTS = {  # create_entities of the memory server, for an entity it has already
    "structured": {"entities": []},
    "text": '{"entities": []}',
    "json": {"entities": []},
    "is_error": False,
}


def test_an_optional_output_takes_its_default_when_its_path_matches_nothing() -> None:
    outputs = [("created", "$.structured.entities[0].name"), ("all", "$.json.entities[*].name")]
    found = extract(outputs, MEMORY_EXISTS, [("created", "exists"), ("all", None)])
    assert found == {"created": "exists", "all": None}
    made = {**MEMORY_EXISTS, "structured": {"entities": [{"name": "ideas"}]}}
    assert extract(outputs[:1], made, [("created", "exists")]) == {"created": "ideas"}
    # a default never hides a match, falsy ones included
    zero = {**MEMORY_EXISTS, "structured": {"n": 0}}
    assert extract([("n", "$.structured.n")], zero, [("n", 5)]) == {"n": 0}


def test_a_required_output_that_matches_nothing_names_the_path_and_the_keys() -> None:
    with pytest.raises(ToolCallError) as info:
        extract([("created", "$.structured.entities[0].name")], MEMORY_EXISTS)
    assert info.value.error_class == "extraction_error"
    assert info.value.message == (
        "output 'created': $.structured.entities[0].name matched nothing in the result:"
        " $.structured.entities is an empty list; the top-level keys of $.structured: entities"
    )
    assert "default:" in (info.value.hint or "")
    with pytest.raises(ToolCallError) as top:
        extract([("v", "$.content")], MEMORY_EXISTS)
    assert top.value.message.endswith("$ is an object with keys structured, text, json, is_error")


@given(value=json_values, path=paths, default=json_values)
def test_a_default_is_given_exactly_when_the_path_matches_nothing(
    value: object, path: str, default: object
) -> None:
    document = {"root": value}
    full = "$.root" + path[1:]
    expected = jsonpath.findall(full, document)  # type: ignore[arg-type]
    found = extract([("v", full)], document, [("v", default)])  # type: ignore[arg-type, list-item]
    assert found == {"v": expected[0] if expected else default}
