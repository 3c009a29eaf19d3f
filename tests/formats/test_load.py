"""Loading domains and problems from files: dispatch by suffix, and file errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from plansmith.errors import InputError, ParseError
from plansmith.formats import load_domain, load_problem, parse_domain, parse_problem, syntax_of

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DOC = EXAMPLES / "doc-pipeline"

PDDL_DOMAIN = """\
(define (domain toy)
  (:requirements :strips :typing)
  (:types item)
  (:predicates (have ?i - item) (made ?i - item))
  (:action make :parameters (?i - item) :precondition (have ?i) :effect (made ?i)))
"""
PDDL_PROBLEM = """\
(define (problem one) (:domain toy)
  (:objects a - item) (:init (have a)) (:goal (made a)))
"""


def test_yaml_and_json_files_load_to_the_same_model() -> None:
    domain = load_domain(DOC / "domain.yaml")
    assert load_domain(DOC / "domain.json") == domain
    problem = load_problem(DOC / "problem.yaml", domain)
    assert load_problem(str(DOC / "problem.json"), domain) == problem
    assert domain.source == str(DOC / "domain.yaml")
    assert problem.source == str(DOC / "problem.yaml")


def test_yml_suffix_reads_as_yaml(tmp_path: Path) -> None:
    path = tmp_path / "d.YML"
    shutil.copy(DOC / "domain.yaml", path)
    assert load_domain(path).name == "doc-pipeline"


def test_pddl_files_go_to_the_pddl_reader(tmp_path: Path) -> None:
    (tmp_path / "domain.pddl").write_text(PDDL_DOMAIN)
    (tmp_path / "problem.pddl").write_text(PDDL_PROBLEM)
    domain = load_domain(tmp_path / "domain.pddl")
    problem = load_problem(tmp_path / "problem.pddl", domain)
    assert (domain.name, problem.name) == ("toy", "one")
    assert (
        parse_problem(PDDL_PROBLEM, parse_domain(PDDL_DOMAIN, syntax="pddl"), syntax="pddl").name
        == "one"
    )


def test_yaml_problem_over_a_pddl_domain(tmp_path: Path) -> None:
    domain = parse_domain(PDDL_DOMAIN, syntax="pddl")
    problem = parse_problem(
        "problem: p\ndomain: toy\nobjects: {a: item}\ninit: [have(a)]\ngoal: [made(a)]\n", domain
    )
    assert [str(g) for g in problem.goal] == ["made(a)"]


def test_unknown_suffix_is_an_input_error_with_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "domain.txt"
    path.write_text("domain: x\n")
    with pytest.raises(InputError, match="cannot tell the syntax") as caught:
        load_domain(path)
    assert caught.value.hint is not None
    assert ".yaml" in caught.value.hint
    assert syntax_of("a/b.Json") == "json"


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(InputError, match="no such domain file") as caught:
        load_domain(path)
    assert type(caught.value) is InputError
    assert caught.value.location is not None
    assert caught.value.location.file == str(path)
    assert caught.value.hint


def test_folder_is_not_a_domain_file(tmp_path: Path) -> None:
    folder = tmp_path / "x.yaml"
    folder.mkdir()
    with pytest.raises(InputError, match="is a folder"):
        load_domain(folder)


def test_non_utf8_text_is_a_parse_error_at_the_bad_byte(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_bytes(b"problem: p\ndomain: caf\xe9\n")
    with pytest.raises(ParseError, match="not UTF-8") as caught:
        load_problem(path, load_domain(DOC / "domain.yaml"))
    assert str(caught.value.location) == f"{path}:2:12"


def test_byte_order_mark_is_allowed(tmp_path: Path) -> None:
    for suffix in (".yaml", ".json"):
        path = tmp_path / f"d{suffix}"
        path.write_bytes(b"\xef\xbb\xbf" + (DOC / f"domain{suffix}").read_bytes())
        assert load_domain(path).name == "doc-pipeline"
    text = (DOC / "domain.json").read_text("utf-8")
    assert parse_domain("\ufeff" + text, syntax="json").name == "doc-pipeline"


def test_errors_in_a_loaded_file_carry_its_path(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text('{"domain": "x", "predicates": {"p": ["thing"]}}')
    with pytest.raises(InputError, match="unknown type 'thing'") as caught:
        load_domain(path)
    assert str(caught.value.location) == f"{path}:1:38"


def test_unknown_syntax_argument_is_an_input_error() -> None:
    with pytest.raises(InputError, match="unknown syntax"):
        parse_domain("domain: x", syntax="toml")  # type: ignore[arg-type]
