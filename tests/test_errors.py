"""The exception tree drawn in ``plansmith.errors``' docstring is the tree the module
defines: every error class at its place under its base, with the exit code it shows."""

from __future__ import annotations

import inspect
import re

import pytest

from plansmith import errors
from plansmith.errors import InputError, Location, PlansmithError

#: a line of the drawing: its indent and branch, the class, and an optional ``exit N``
_LINE = re.compile(r"^(?P<lead>[ │├└─]*)(?P<name>[A-Z]\w*Error)\s+(?:exit (?P<exit>\d+))?")


def _drawn() -> dict[str, tuple[str | None, int | None]]:
    """Each class the docstring draws: its parent in the drawing and its shown exit code."""
    assert errors.__doc__ is not None
    drawn: dict[str, tuple[str | None, int | None]] = {}
    path: list[str] = []  # the classes above the current line, by depth
    for line in errors.__doc__.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        depth = (len(match["lead"]) - 4) // 4  # the root is indented 4, each level 4 more
        name = match["name"]
        assert name not in drawn, f"{name} is drawn twice"
        del path[depth:]
        drawn[name] = (path[-1] if path else None, int(match["exit"]) if match["exit"] else None)
        path.append(name)
    return drawn


def _defined() -> dict[str, type[PlansmithError]]:
    return {
        name: cls
        for name, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, PlansmithError) and cls.__module__ == errors.__name__
    }


def test_the_docstring_tree_draws_every_error_class_under_its_base() -> None:
    drawn, defined = _drawn(), _defined()
    not_drawn, not_defined = sorted(set(defined) - set(drawn)), sorted(set(drawn) - set(defined))
    assert (not_drawn, not_defined) == ([], [])
    for name, (parent, exit_code) in drawn.items():
        cls = defined[name]
        base = cls.__bases__[0]
        assert parent == (None if cls is PlansmithError else base.__name__), name
        if exit_code is not None:
            assert cls.exit_code == exit_code, name


@pytest.mark.parametrize(
    ("location", "text"),
    [
        (Location("d.yaml", 3, 7), "d.yaml:3:7"),
        (Location("d.yaml", 3), "d.yaml:3"),
        (Location("d.yaml", column=7), "d.yaml"),
        (Location(line=3), "line 3"),
        (Location(step="s2"), "step s2"),
        (Location("b.yaml", 5, 23, step="a"), "b.yaml:5:23 step a"),
        (Location(argument="plan_hash"), "argument plan_hash"),
        (Location("api", 2, argument="--source"), "api:2 argument --source"),
        (Location(), "<unknown location>"),
    ],
)
def test_a_location_reads_as_where_it_points(location: Location, text: str) -> None:
    assert str(location) == text


def test_an_argument_is_named_as_one_and_kept_when_a_file_is_attached() -> None:
    error = InputError("no plan with hash 'x'", location=Location(argument="plan_hash"))
    assert str(error) == "argument plan_hash: no plan with hash 'x'"
    assert error.located("request.json").location == Location("request.json", argument="plan_hash")
    assert str(error).startswith("request.json argument plan_hash: ")


def test_step_failed_error_is_gone_a_failed_step_is_an_event() -> None:
    assert not hasattr(errors, "StepFailedError")
    assert "StepFailedError" not in errors.__all__
