"""The YAML/JSON problem reader: the formats.md example, the HTN variant and JSON."""

from __future__ import annotations

import re
from pathlib import Path

from plansmith.formats import parse_domain, parse_problem
from plansmith.model import Atom, Equality, Literal, TaskCall, TypedName

ROOT = Path(__file__).resolve().parents[2]
FORMATS_MD = ROOT / "docs" / "formats.md"
FOLDER = ROOT / "examples" / "doc-pipeline"
DOMAIN = parse_domain((FOLDER / "domain.yaml").read_text(encoding="utf-8"))


def _formats_md_problem() -> str:
    return re.findall(r"```yaml\n(.*?)```", FORMATS_MD.read_text(encoding="utf-8"), re.S)[1]


def test_shipped_problem_is_the_formats_md_example_verbatim() -> None:
    assert (FOLDER / "problem.yaml").read_text(encoding="utf-8") == _formats_md_problem()


def test_formats_md_problem_parses_to_the_expected_model() -> None:
    problem = parse_problem(_formats_md_problem(), DOMAIN, file="problem.yaml")
    assert problem.name == "two-docs"
    assert problem.domain is DOMAIN
    assert problem.source == "problem.yaml"
    assert problem.objects == (TypedName("notes", "document"), TypedName("q3", "report"))
    assert problem.init == frozenset({Atom("exists", ("notes",)), Atom("exists", ("q3",))})
    assert problem.goal == (
        Literal(Atom("indexed", ("notes",))),
        Literal(Atom("indexed", ("q3",))),
    )
    assert problem.tasks == ()
    assert [str(g.loc) for g in problem.goal] == ["problem.yaml:5:8", "problem.yaml:5:24"]
    assert str(problem.objects[1].loc) == "problem.yaml:3:28"


def test_htn_problem_lists_ground_task_calls() -> None:
    text = (FOLDER / "problem-htn.yaml").read_text(encoding="utf-8")
    problem = parse_problem(text, DOMAIN, file="problem-htn.yaml")
    assert problem.tasks == (TaskCall("publish", ("notes",)), TaskCall("publish", ("q3",)))
    assert problem.goal == ()
    assert str(problem.tasks[1].loc) == "problem-htn.yaml:5:25"


def test_formats_md_commented_htn_line_works_when_uncommented() -> None:
    text = _formats_md_problem().replace("goal: [", "# goal: [").replace("# tasks:", "tasks:")
    problem = parse_problem(text, DOMAIN)
    assert [str(t) for t in problem.tasks] == ["publish(notes)", "publish(q3)"]


def test_json_problem_gives_the_same_model_as_yaml() -> None:
    from_yaml = parse_problem((FOLDER / "problem.yaml").read_text(encoding="utf-8"), DOMAIN)
    text = (FOLDER / "problem.json").read_text(encoding="utf-8")
    assert parse_problem(text, DOMAIN, syntax="json") == from_yaml


def test_goal_may_hold_negative_literals_equalities_and_both_goal_and_tasks() -> None:
    text = """\
problem: p
domain: doc-pipeline
objects: {notes: document}
init: [exists(notes), busy()]
goal: [not busy(), notes == notes]
tasks: [publish(notes)]
"""
    problem = parse_problem(text, DOMAIN)
    assert problem.goal == (Literal(Atom("busy"), positive=False), Equality("notes", "notes"))
    assert problem.tasks == (TaskCall("publish", ("notes",)),)


def test_constants_of_the_domain_are_objects_of_the_problem() -> None:
    domain = parse_domain("domain: d\nconstants: {home: object}\npredicates: {at: [object]}\n")
    problem = parse_problem("problem: p\ndomain: d\ninit: [at(home)]\ngoal: [at(home)]\n", domain)
    assert problem.all_objects == (TypedName("home", "object"),)
    assert problem.init == frozenset({Atom("at", ("home",))})


def test_empty_goal_list_is_a_trivial_problem() -> None:
    problem = parse_problem("problem: p\ndomain: doc-pipeline\ngoal: []\n", DOMAIN)
    assert problem.goal == ()
    assert problem.objects == ()


def test_lab_prep_problem_reads() -> None:
    folder = ROOT / "examples" / "lab-prep"
    domain = parse_domain((folder / "domain.yaml").read_text(encoding="utf-8"))
    problem = parse_problem((folder / "problem.yaml").read_text(encoding="utf-8"), domain)
    assert len(problem.objects) == 7
    assert Literal(Atom("pipetted", ("s2", "plate1"))) in problem.goal
    assert len(problem.init) == 3
