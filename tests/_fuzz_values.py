"""What the fuzz tests of the YAML/JSON readers share: documents made of a reader's own
words and of any other scalar, nested in lists and mappings, and the check that a reader
raises nothing but a plansmith error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from plansmith.errors import PlansmithError


def values_of(words: list[str], *, max_leaves: int = 30) -> st.SearchStrategy[Any]:
    """Nested lists and mappings of ``words``, other text, numbers, booleans and null."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-5, max_value=10**30),
        st.floats(),
        st.sampled_from(words),
        st.text(max_size=12),
    )
    keys = st.one_of(st.sampled_from(words), st.text(max_size=6))
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=5)
        ),
        max_leaves=max_leaves,
    )


def plansmith_error(read: Callable[[], object]) -> PlansmithError | None:
    """The plansmith error ``read`` raises, or None; any other exception fails the test."""
    try:
        read()
    except PlansmithError as error:
        return error
    return None
