"""Loading GTPyhop domain packages (domain.py + problems.py) with the stand-in."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from plansmith.compat import gtpyhop as compat
from plansmith.errors import DomainError, InputError, ParseError, ProblemError
from plansmith.formats import load_gtpyhop_package, load_gtpyhop_problems
from plansmith.planning.htn import plan_python

DOMAIN = """\
from gtpyhop import Domain, State, declare_actions, declare_task_methods
import gtpyhop

the_domain = Domain("counter")

def bump(state, by):
    state.count = state.count + by
    return state

def m_twice(state, by):
    return [("bump", by), ("bump", by)]

declare_actions(bump)
declare_task_methods("twice", m_twice)
"""

PROBLEMS = """\
from gtpyhop import State, Multigoal

print("problems.py talks while it is imported")

def get_problems():
    return {
        "small": (State("s", count=0), [("twice", 1)], "two bumps of one"),
        "big": (State("s", count=0), [("twice", 5)]),
    }
"""


def _package(tmp_path: Path, domain: str = DOMAIN, problems: str = PROBLEMS) -> Path:
    folder = tmp_path / "counter-domain"
    folder.mkdir()
    (folder / "domain.py").write_text(domain)
    (folder / "problems.py").write_text(problems)
    return folder


def test_loads_a_package_and_plans_the_named_problem(tmp_path: Path) -> None:
    domain, problem = load_gtpyhop_package(_package(tmp_path), "big", stand_in=compat)
    assert domain.name == "counter"
    assert [name for name, _ in domain.actions] == ["bump"]
    assert problem.name == "big"
    assert problem.todo == (("twice", 5),)
    assert problem.source is not None
    assert problem.source.endswith("problems.py")
    plan = plan_python(domain, problem)
    assert [str(s) for s in plan.steps] == ["bump(5)", "bump(5)"]
    assert problem.state.count == 0


def test_lists_every_problem_in_order(tmp_path: Path) -> None:
    _, problems = load_gtpyhop_problems(_package(tmp_path), stand_in=compat)
    assert [(p.name, p.description) for p in problems] == [
        ("small", "two bumps of one"),
        ("big", ""),
    ]


def test_the_stand_in_is_installed_only_while_importing(tmp_path: Path) -> None:
    before = sys.modules.get("gtpyhop")
    path = list(sys.path)
    load_gtpyhop_package(_package(tmp_path), "small", stand_in=compat)
    assert sys.modules.get("gtpyhop") is before
    assert sys.path == path
    assert not [k for k in sys.modules if k.startswith("_plansmith_gtpyhop_package_")]


def test_output_of_the_package_does_not_reach_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    load_gtpyhop_package(_package(tmp_path), "small", stand_in=compat)
    assert capsys.readouterr().out == ""


def test_a_missing_folder_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such GTPyhop domain folder") as caught:
        load_gtpyhop_package(tmp_path / "nowhere", None, stand_in=compat)
    assert caught.value.location is not None
    assert caught.value.hint


@pytest.mark.parametrize("missing", ["domain.py", "problems.py"])
def test_a_missing_file_is_an_input_error_naming_it(tmp_path: Path, missing: str) -> None:
    folder = _package(tmp_path)
    (folder / missing).unlink()
    with pytest.raises(InputError, match=f"has no {missing}") as caught:
        load_gtpyhop_package(folder, None, stand_in=compat)
    assert caught.value.location is not None
    assert caught.value.location.file == str(folder / missing)


def test_problems_without_get_problems_is_a_problem_error(tmp_path: Path) -> None:
    folder = _package(tmp_path, problems="from gtpyhop import State\nX = 1\n")
    with pytest.raises(ProblemError, match="no get_problems") as caught:
        load_gtpyhop_package(folder, None, stand_in=compat)
    assert caught.value.hint is not None
    assert "def get_problems" in caught.value.hint


def test_an_unknown_problem_name_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ProblemError, match="no problem named 'huge'") as caught:
        load_gtpyhop_package(_package(tmp_path), "huge", stand_in=compat)
    assert caught.value.hint == "the problems are: small, big"


def test_several_problems_and_no_name_asks_to_choose(tmp_path: Path) -> None:
    with pytest.raises(ProblemError, match="has 2 problems") as caught:
        load_gtpyhop_package(_package(tmp_path), None, stand_in=compat)
    assert caught.value.hint == "pass --problem NAME, one of: small, big"


def test_a_single_problem_needs_no_name(tmp_path: Path) -> None:
    problems = PROBLEMS.replace('        "big": (State("s", count=0), [("twice", 5)]),\n', "")
    _, problem = load_gtpyhop_package(_package(tmp_path, problems=problems), None, stand_in=compat)
    assert problem.name == "small"


def test_a_syntax_error_is_a_parse_error_at_its_line(tmp_path: Path) -> None:
    folder = _package(tmp_path, domain=DOMAIN + "def broken(:\n")
    with pytest.raises(ParseError) as caught:
        load_gtpyhop_package(folder, "small", stand_in=compat)
    assert caught.value.location is not None
    assert caught.value.location.file == str(folder / "domain.py")
    assert caught.value.location.line == DOMAIN.count("\n") + 1


def test_an_exception_while_importing_is_a_domain_error_at_its_line(tmp_path: Path) -> None:
    folder = _package(tmp_path, domain=DOMAIN + "declare_actions(undefined_action)\n")
    with pytest.raises(DomainError, match="NameError") as caught:
        load_gtpyhop_package(folder, "small", stand_in=compat)
    assert caught.value.location is not None
    assert caught.value.location.line == DOMAIN.count("\n") + 1


def test_importing_a_part_of_gtpyhop_the_stand_in_lacks_says_so(tmp_path: Path) -> None:
    folder = _package(tmp_path, domain="from gtpyhop.no_such_part import x\n" + DOMAIN)
    with pytest.raises(DomainError, match="no_such_part") as caught:
        load_gtpyhop_package(folder, "small", stand_in=compat)
    assert caught.value.hint is not None
    assert "plansmith does not provide" in caught.value.hint


def test_a_problem_that_is_not_a_tuple_is_a_problem_error(tmp_path: Path) -> None:
    problems = "def get_problems():\n    return {'p': 42}\n"
    with pytest.raises(ProblemError, match="not a tuple"):
        load_gtpyhop_package(_package(tmp_path, problems=problems), "p", stand_in=compat)


def test_a_goal_dict_becomes_a_multigoal_over_the_only_goal_variable(tmp_path: Path) -> None:
    domain = DOMAIN + (
        "from gtpyhop import declare_unigoal_methods\n"
        "def m_count(state, arg, value):\n"
        "    return [('bump', value - state.count)]\n"
        "declare_unigoal_methods('count_of', m_count)\n"
    )
    problems = "from gtpyhop import State\ndef get_problems():\n"
    problems += "    return {'g': (State('s', count=0, count_of={}), {'x': 3})}\n"
    _, problem = load_gtpyhop_package(
        _package(tmp_path, domain=domain, problems=problems), "g", stand_in=compat
    )
    (goal,) = problem.todo
    assert type(goal).__name__ == "Multigoal"
    assert goal.count_of == {"x": 3}
