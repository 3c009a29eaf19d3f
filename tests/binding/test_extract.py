"""Output extraction: the fast path agrees with the JSONPath library."""

from __future__ import annotations

import jsonpath
import pytest
from hypothesis import given
from hypothesis import strategies as st

from plansmith.binding import extract
from plansmith.binding._extract import simple_path
from plansmith.errors import ToolCallError

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
    assert extract([("v", "$.json[?@.n > 1].n")], doc) == {"v": 2}
    assert extract([("v", "$.json[*].n")], doc) == {"v": [1, 2]}


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
    assert other.value.message == "output 'v': $.json.value matched nothing in the result"
