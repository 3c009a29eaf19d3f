"""Every shared benchmark domain and task parses, and what it reads matches the files."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from plansmith.formats._pddl import parse_pddl_domain, parse_pddl_problem
from plansmith.model import Atom, Domain, Literal, Problem

BENCH = Path(__file__).resolve().parents[3] / "shared" / "benchmarks" / "pddl"
TASKS = sorted(BENCH.glob("*/task*.pddl"))

pytestmark = pytest.mark.skipif(not BENCH.is_dir(), reason="../shared/benchmarks/pddl not found")


@cache
def _domain(name: str) -> Domain:
    path = BENCH / name / "domain.pddl"
    return parse_pddl_domain(path.read_text(), str(path))


def _problem(name: str, task: str) -> Problem:
    path = BENCH / name / task
    return parse_pddl_problem(path.read_text(), _domain(name), str(path))


@cache
def _object_counts() -> dict[str, int]:
    """The 'objects' column of SOURCES.md, which counts each problem's (:objects ...)."""
    rows = re.findall(
        r"^\| `(\w+/task\d+\.pddl)` \|[^|]*\|[^|]*\| (\d+) \|",
        (BENCH / "SOURCES.md").read_text(),
        re.M,
    )
    return {path: int(n) for path, n in rows}


def test_all_43_shared_tasks_are_found() -> None:
    assert len(TASKS) == 43
    assert len(_object_counts()) == 43


@pytest.mark.parametrize("task", TASKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_shared_task_parses_with_its_domain(task: Path) -> None:
    problem = _problem(task.parent.name, task.name)
    assert problem.domain is _domain(task.parent.name)
    assert problem.goal
    assert problem.init
    assert len(problem.objects) == _object_counts()[f"{task.parent.name}/{task.name}"]
    assert problem.source == str(task)


def test_blocks_upper_case_keywords_and_names_are_lower_cased() -> None:
    domain = _domain("blocks")
    assert domain.name == "blocks"
    assert [a.name for a in domain.actions] == ["pick-up", "put-down", "stack", "unstack"]
    problem = _problem("blocks", "task01.pddl")
    assert problem.name == "blocks-4-0"
    assert [(o.name, o.type) for o in problem.objects] == [(n, "block") for n in "dbac"]
    assert len(problem.init) == 9
    assert Atom("clear", ("c",)) in problem.init
    assert Atom("handempty") in problem.init
    assert problem.goal == (
        Literal(Atom("on", ("d", "c"))),
        Literal(Atom("on", ("c", "b"))),
        Literal(Atom("on", ("b", "a"))),
    )


def test_blocks_unstack_reads_parameters_preconditions_and_effects() -> None:
    unstack = _domain("blocks").action("unstack")
    assert unstack is not None
    assert [(p.name, p.type) for p in unstack.parameters] == [("?x", "block"), ("?y", "block")]
    assert [str(c) for c in unstack.precondition] == ["on(?x, ?y)", "clear(?x)", "handempty()"]
    assert [str(e) for e in unstack.effect] == [
        "holding(?x)",
        "clear(?y)",
        "not clear(?x)",
        "not handempty()",
        "not on(?x, ?y)",
    ]
    assert unstack.cost == 1
    assert unstack.loc is not None
    assert (unstack.loc.line, unstack.loc.column) == (41, 3)


def test_logistics_type_hierarchy_follows_the_file() -> None:
    domain = _domain("logistics")
    assert domain.types.is_subtype("truck", "physobj")
    assert domain.types.is_subtype("airport", "place")
    assert not domain.types.is_subtype("package", "vehicle")
    assert domain.types.parent("physobj") == "object"
    assert len(domain.actions) == 6
    assert domain.actions[0].name == "load-truck"


def test_miconic_uses_types_without_declaring_typing() -> None:
    domain = _domain("miconic")
    assert domain.requirements == (":strips",)
    assert domain.types.names == {"object", "passenger", "floor"}
    problem = _problem("miconic", "task30.pddl")
    assert len(problem.objects) == 90
    assert len(problem.init) == 1831


def test_depot_untyped_objects_are_of_type_object() -> None:
    domain = _domain("depot")
    assert domain.types.names == {"object"}
    assert len(domain.predicates) == 15
    problem = _problem("depot", "task13.pddl")
    assert {o.type for o in problem.objects} == {"object"}
    assert len(problem.init) == 92


def test_gripper_and_satellite_counts_match_the_files() -> None:
    gripper = _problem("gripper", "task01.pddl")
    assert (len(gripper.domain.actions), len(gripper.objects), len(gripper.init)) == (3, 8, 15)
    assert len(gripper.goal) == 4
    satellite = _problem("satellite", "task15.pddl")
    assert len(satellite.domain.actions) == 5
    assert (len(satellite.objects), len(satellite.init)) == (57, 142)
