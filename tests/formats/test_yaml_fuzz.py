"""Fuzzing the YAML/JSON readers: whatever the input, only plansmith errors come out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _fuzz_values import plansmith_error, values_of
from plansmith.formats import parse_domain, parse_problem

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DOMAIN_TEXTS = {
    "yaml": [
        (EXAMPLES / d / "domain.yaml").read_text("utf-8") for d in ("doc-pipeline", "lab-prep")
    ],
    "json": [(EXAMPLES / "doc-pipeline" / "domain.json").read_text("utf-8")],
}
PROBLEM_TEXTS = {
    "yaml": [
        (EXAMPLES / "doc-pipeline" / "problem.yaml").read_text("utf-8"),
        (EXAMPLES / "doc-pipeline" / "problem-htn.yaml").read_text("utf-8"),
    ],
    "json": [(EXAMPLES / "doc-pipeline" / "problem.json").read_text("utf-8")],
}
DOMAIN = parse_domain(DOMAIN_TEXTS["yaml"][0])

WORDS = [
    "domain", "types", "constants", "predicates", "actions", "tasks", "goals", "parameters",
    "precondition", "effect", "cost", "tier", "methods", "name", "subtasks", "parallel", "goal",
    "description", "problem", "objects", "init", "<<", "document", "report", "object", "d", "a",
    "exists", "indexed", "publish", "summarise", "notes", "q3", "read", "doc-pipeline",
    "exists(d)", "not summarised(d)", "indexed(notes)", "publish(a)", "d == d", "x(", "on(a, b)",
]  # fmt: skip
VALUES = values_of(WORDS, max_leaves=30)
TOP = st.fixed_dictionaries(
    {"domain": st.sampled_from(["doc-pipeline", "x", ""])},
    optional=dict.fromkeys(WORDS[1:21], VALUES),
)
SLOW = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _only_plansmith_errors(text: str, syntax: Any) -> None:
    for error in (
        plansmith_error(lambda: parse_domain(text, file="fuzz", syntax=syntax)),
        plansmith_error(lambda: parse_problem(text, DOMAIN, file="fuzz", syntax=syntax)),
    ):
        assert error is None or error.location is not None


@SLOW
@given(st.one_of(TOP, VALUES))
def test_random_yaml_documents_raise_only_plansmith_errors(document: object) -> None:
    _only_plansmith_errors(yaml.safe_dump(document, default_flow_style=None), "yaml")


@SLOW
@given(st.one_of(TOP, VALUES))
def test_random_json_documents_raise_only_plansmith_errors(document: object) -> None:
    _only_plansmith_errors(json.dumps(document, indent="\t"), "json")


EDIT = st.tuples(
    st.sampled_from(["delete", "insert", "copy"]),
    st.floats(min_value=0, max_value=1),
    st.floats(min_value=0, max_value=1),
    st.text(alphabet="()[]{},:-#&*!|>'\"\n \t~?%@`adnot=0.\\\x85", min_size=1, max_size=3),
)


def _mutate(text: str, edits: list[tuple[str, float, float, str]]) -> str:
    for kind, where, other, chars in edits:
        i = int(where * len(text))
        if kind == "delete":
            text = text[:i] + text[i + 1 + int(other * 5) :]
        elif kind == "insert":
            text = text[:i] + chars + text[i:]
        else:
            j = int(other * len(text))
            text = text[:i] + text[j : j + 40] + text[i:]
    return text


@SLOW
@given(
    kind=st.sampled_from(["domain", "problem"]),
    syntax=st.sampled_from(["yaml", "json"]),
    index=st.integers(min_value=0, max_value=1),
    edits=st.lists(EDIT, min_size=1, max_size=4),
)
def test_mutated_example_files_raise_only_plansmith_errors(
    kind: str, syntax: Any, index: int, edits: list[tuple[str, float, float, str]]
) -> None:
    texts = (DOMAIN_TEXTS if kind == "domain" else PROBLEM_TEXTS)[syntax]
    text = _mutate(texts[index % len(texts)], edits)
    if kind == "domain":
        error = plansmith_error(lambda: parse_domain(text, file="m", syntax=syntax))
    else:
        error = plansmith_error(lambda: parse_problem(text, DOMAIN, file="m", syntax=syntax))
    assert error is None or (error.location is not None and error.location.file == "m")


@SLOW
@given(st.text(max_size=200), st.sampled_from(["yaml", "json"]))
def test_random_text_raises_only_plansmith_errors(text: str, syntax: str) -> None:
    _only_plansmith_errors(text, syntax)
