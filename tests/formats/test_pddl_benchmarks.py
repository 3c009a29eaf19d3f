"""Every domain and task of the generated PDDL suite (``tests/_pddl_suite.py``) parses
from its file, and what the reader reads matches what the generator wrote; the parser
quirks of competition files (upper case, types without ``:typing``, untyped domains)
are covered by the suite's own files."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

import _pddl_suite as suite
from plansmith.formats._pddl import parse_pddl_domain, parse_pddl_problem
from plansmith.model import Atom, Domain, Literal

TASKS = suite.suite()


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole suite written out as ``<domain>/domain.pddl`` and ``<domain>/<task>``."""
    root = tmp_path_factory.mktemp("pddl-suite")
    for task in TASKS:
        suite.write(task, root)
    return root


@cache
def _domain_from(path: Path) -> Domain:
    return parse_pddl_domain(path.read_text(), str(path))


def _domain(name: str) -> Domain:
    return parse_pddl_domain(suite.DOMAINS[name], f"{name}/domain.pddl")


def test_the_suite_has_tasks_of_all_six_domains() -> None:
    assert len(TASKS) == 44
    assert (
        {t.domain for t in TASKS}
        == set(suite.DOMAINS)
        == {
            "blocks",
            "depot",
            "gripper",
            "logistics",
            "miconic",
            "satellite",
        }
    )


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_every_task_parses_with_its_domain(folder: Path, task: suite.Task) -> None:
    path = folder / task.domain / task.name
    domain = _domain_from(folder / task.domain / "domain.pddl")
    problem = parse_pddl_problem(path.read_text(), domain, str(path))
    assert problem.domain is domain
    assert problem.goal
    assert problem.init
    assert len(problem.objects) == task.objects
    assert len(problem.init) == task.init
    assert len(problem.goal) == task.goal
    assert problem.source == str(path)


@pytest.mark.parametrize(
    ("name", "actions"),
    [
        ("blocks", 4),
        ("depot", 5),
        ("gripper", 3),
        ("logistics", 6),
        ("miconic", 4),
        ("satellite", 5),
    ],
)
def test_every_domain_parses_from_its_file(folder: Path, name: str, actions: int) -> None:
    path = folder / name / "domain.pddl"
    domain = _domain_from(path)
    assert domain.name == name.replace("gripper", "gripper-strips")
    assert len(domain.actions) == actions
    assert all(a.loc is not None and a.loc.file == str(path) for a in domain.actions)


def test_blocks_upper_case_keywords_and_names_are_lower_cased() -> None:
    domain = _domain("blocks")
    assert domain.name == "blocks"
    assert [a.name for a in domain.actions] == ["pick-up", "put-down", "stack", "unstack"]
    problem = parse_pddl_problem(suite.BLOCKS_UPPER_CASE, domain)
    assert problem.name == "blocks-4-hand"
    assert [(o.name, o.type) for o in problem.objects] == [(n, "block") for n in "eadb"]
    assert len(problem.init) == 7
    assert Atom("clear", ("e",)) in problem.init
    assert Atom("on", ("b", "d")) in problem.init
    assert Atom("handempty") in problem.init
    assert problem.goal == (Literal(Atom("on", ("a", "b"))), Literal(Atom("on", ("d", "e"))))


def test_generated_blocks_problems_are_upper_case_and_read_lower_case() -> None:
    task = suite.task("blocks", "reverse-4")
    assert "(:INIT\n    (ONTABLE A) (ON B A) (ON C B) (ON D C) (CLEAR D) (HANDEMPTY)\n" in task.text
    assert "(:goal (AND (ON C D) (ON B C) (ON A B)))" in task.text
    assert "A B C D - BLOCK" in task.text
    problem = parse_pddl_problem(task.text, _domain("blocks"))
    assert problem.name == "reverse-4"
    assert [(o.name, o.type) for o in problem.objects] == [(n, "block") for n in "abcd"]
    assert Atom("on", ("d", "c")) in problem.init
    assert [str(g) for g in problem.goal] == ["on(c, d)", "on(b, c)", "on(a, b)"]


def test_blocks_unstack_reads_parameters_preconditions_and_effects() -> None:
    unstack = _domain("blocks").action("unstack")
    assert unstack is not None
    assert [(p.name, p.type) for p in unstack.parameters] == [
        ("?b", "block"),
        ("?from", "block"),
    ]
    assert [str(c) for c in unstack.precondition] == ["handempty()", "clear(?b)", "on(?b, ?from)"]
    assert [str(e) for e in unstack.effect] == [
        "holding(?b)",
        "clear(?from)",
        "not on(?b, ?from)",
        "not clear(?b)",
        "not handempty()",
    ]
    assert unstack.cost == 1
    assert unstack.loc is not None
    lines = suite.DOMAINS["blocks"].splitlines()
    row = next(i for i, line in enumerate(lines) if "(:action unstack" in line)
    assert (unstack.loc.line, unstack.loc.column) == (row + 1, 3)
    assert lines[row].index("(") == 2


def test_logistics_type_hierarchy_follows_the_file() -> None:
    domain = _domain("logistics")
    assert domain.types.is_subtype("truck", "physobj")
    assert domain.types.is_subtype("airplane", "vehicle")
    assert domain.types.is_subtype("airport", "place")
    assert not domain.types.is_subtype("package", "vehicle")
    assert not domain.types.is_subtype("city", "place")
    assert domain.types.parent("physobj") == "object"
    assert len(domain.actions) == 6
    assert domain.actions[0].name == "load-truck"  # LOAD-TRUCK in the file
    problem = parse_pddl_problem(suite.task("logistics", "relay-2").text, domain)
    assert {o.name: o.type for o in problem.objects}["apt2"] == "airport"


def test_miconic_uses_types_without_declaring_typing() -> None:
    domain = _domain("miconic")
    assert domain.requirements == (":strips",)
    assert domain.types.names == {"object", "passenger", "floor"}
    task = suite.task("miconic", "miconic-30-60-s5")
    problem = parse_pddl_problem(task.text, domain)
    assert len(problem.objects) == 30 + 60
    # every pair of floors, origin and destination per passenger, and the lift
    assert len(problem.init) == 60 * 59 // 2 + 2 * 30 + 1 == 1831
    assert {o.type for o in problem.objects} == {"passenger", "floor"}


def test_depot_untyped_objects_are_of_type_object() -> None:
    domain = _domain("depot")
    assert domain.types.names == {"object"}
    assert len(domain.predicates) == 15
    task = suite.task("depot", "depot-5-8-s7")
    problem = parse_pddl_problem(task.text, domain)
    assert {o.type for o in problem.objects} == {"object"}
    # 5 places, 3 trucks, 5 pallets, 8 crates and 5 hoists
    assert len(problem.objects) == 5 + 3 + 5 + 8 + 5
    # per place 9 facts (place, kind, pallet x3, hoist x4), per truck 3, per crate 5,
    # and the top of each of the 5 stacks is clear
    assert len(problem.init) == 5 * 9 + 3 * 3 + 8 * 5 + 5 == task.init


def test_gripper_and_satellite_counts_match_the_files() -> None:
    gripper = parse_pddl_problem(suite.task("gripper", "gripper-4").text, _domain("gripper"))
    assert (len(gripper.domain.actions), len(gripper.objects), len(gripper.init)) == (3, 8, 15)
    assert len(gripper.goal) == 4
    task = suite.task("satellite", "satellite-6-16-s5")
    satellite = parse_pddl_problem(task.text, _domain("satellite"))
    assert len(satellite.domain.actions) == 5
    assert (len(satellite.objects), len(satellite.init)) == (task.objects, task.init)
    assert len(satellite.goal) == 16
    kinds = ("satellite", "instrument", "mode", "direction")
    typed = {o.name for o in satellite.objects}
    assert typed == {a.args[0] for a in satellite.init if a.predicate in kinds}
