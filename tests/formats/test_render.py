"""Renderings: the terminal list, Mermaid and Graphviz DOT, with escaping and golden files."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from _plan_format_fixtures import check_golden, doc_pipeline_plans
from hypothesis import given, settings
from hypothesis import strategies as st

from plansmith.formats import render_dot, render_mermaid, render_text
from plansmith.model import Plan, Step, Tier

HASH = "sha256:" + "0" * 64


def _odd_plan(action: str = 'say"hi"<b>#1&`x`', arg: str = "a\\b\n{c}") -> Plan:
    """A plan whose ids, names and arguments need escaping everywhere."""
    return Plan(
        "d",
        "p",
        HASH,
        HASH,
        steps=(
            Step("s1", action, (arg,), cost=1.5, tier=Tier.EXECUTE),
            Step("end", "x", (), cost=0, after=("s1",), tier=Tier.READ),
            Step('q"1', "y", ("z",), after=("s1", "end")),
        ),
    )


@pytest.mark.parametrize(
    ("name", "render"),
    [("text.txt", render_text), ("mmd", render_mermaid), ("dot", render_dot)],
)
def test_doc_pipeline_renderings_match_their_golden_files(name: str, render: object) -> None:
    assert callable(render)
    check_golden(f"doc-pipeline.{name}", render(doc_pipeline_plans()[0]))


def test_text_is_a_numbered_list_with_costs_dependencies_and_total() -> None:
    text = render_text(doc_pipeline_plans()[0])
    lines = text.splitlines()
    assert lines[0] == "Plan for problem two-docs (domain doc-pipeline): 4 steps"
    assert re.fullmatch(r"\s+3\. s3\s+index\(notes\)\s+cost 1\s+write\s+after s1", lines[4])
    assert "Total cost: 4" in lines
    assert any(line.startswith("Hash: sha256:") for line in lines)


def test_text_of_an_empty_plan_says_so() -> None:
    text = render_text(Plan("d", "p", HASH, HASH))
    assert "0 steps" in text
    assert "no steps" in text
    assert "Total cost: 0" in text


def test_mermaid_has_one_node_per_step_and_edges_from_after() -> None:
    text = render_mermaid(doc_pipeline_plans()[0])
    assert text.startswith("flowchart TD\n")
    assert '  s3["index(notes)"]' in text.splitlines()
    assert "  s1 --> s3" in text.splitlines()
    assert "  s2 --> s4" in text.splitlines()
    assert text.count("-->") == 2


_MERMAID_NODE = re.compile(r'  [A-Za-z][A-Za-z0-9_]*\["[^"\n]*"\]')
_MERMAID_EDGE = re.compile(r"  [A-Za-z][A-Za-z0-9_]* --> [A-Za-z][A-Za-z0-9_]*")
_MERMAID_CLASS = re.compile(r"  (classDef \w+ [\w:#,]+|class [\w,]+ \w+)")


def _mermaid_lines_are_well_formed(text: str) -> None:
    lines = text.splitlines()
    assert lines[0] == "flowchart TD"
    for line in lines[1:]:
        assert (
            _MERMAID_NODE.fullmatch(line)
            or _MERMAID_EDGE.fullmatch(line)
            or _MERMAID_CLASS.fullmatch(line)
        ), line
        assert not re.search(r"\b(end)\b", line.split("[")[0]), line  # reserved word as an id


def test_mermaid_escapes_labels_and_replaces_unsafe_ids() -> None:
    text = render_mermaid(_odd_plan())
    _mermaid_lines_are_well_formed(text)
    assert 's1["say#34;hi#34;#60;b#62;#35;1#38;#96;x#96;(a\\b {c})"]' in text
    assert "n2 --> n3" in text
    assert "s1 --> n2" in text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=12), st.text(max_size=12))
def test_mermaid_stays_well_formed_for_any_names(action: str, arg: str) -> None:
    _mermaid_lines_are_well_formed(render_mermaid(_odd_plan(action or "a", arg)))


_DOT_STRING = r'"(?:[^"\\\n]|\\.)*"'
_DOT_ATTR = rf"\w+=(?:{_DOT_STRING}|\w+)"
_DOT_LINE = re.compile(
    rf"  (?:{_DOT_STRING} \[{_DOT_ATTR}(?:, {_DOT_ATTR})*\];"
    rf"|{_DOT_STRING} -> {_DOT_STRING};|rankdir=TB;|node \[{_DOT_ATTR}(?:, {_DOT_ATTR})*\];)"
)


def _dot_is_well_formed(text: str) -> None:
    lines = text.splitlines()
    assert lines[0] == "digraph plan {"
    assert lines[-1] == "}"
    for line in lines[1:-1]:
        assert _DOT_LINE.fullmatch(line), line


def test_dot_has_a_node_per_step_and_edges_from_after() -> None:
    text = render_dot(doc_pipeline_plans()[0])
    _dot_is_well_formed(text)
    assert '  "s1" -> "s3";' in text.splitlines()
    assert 'label="index(notes)"' in text


def test_dot_escapes_quotes_backslashes_and_newlines() -> None:
    text = render_dot(_odd_plan())
    _dot_is_well_formed(text)
    assert 'label="say\\"hi\\"<b>#1&`x`(a\\\\b {c})"' in text
    assert '"q\\"1" [label="y(z)"' in text
    assert '  "end" -> "q\\"1";' in text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=12), st.text(max_size=12))
def test_dot_stays_well_formed_for_any_names(action: str, arg: str) -> None:
    _dot_is_well_formed(render_dot(_odd_plan(action or "a", arg)))


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_graphviz_accepts_the_dot_output() -> None:
    for plan in (doc_pipeline_plans()[0], _odd_plan()):
        done = subprocess.run(
            ["dot", "-Tsvg"],
            input=render_dot(plan),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
