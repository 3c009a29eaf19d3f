"""Runs a domain's code makes: a plan, and what runs it, made again from recorded
arguments.

A run made from files (``Engine.run``) is resumed from its files. A domain whose plan is
made by code (GTPyhop's bio_opentrons mapped to a Flex, the drug target plan over eight
servers) names a *run maker*: ``maker(args, context)`` gives the plan, the domain of its
actions, the bindings, the servers and the replan hook, from JSON arguments.
``Engine.run_made`` records the maker's name and arguments with the run (``MADE_KEY``),
so that approving, resuming, retrying or taking the run over, in this process or
another, makes the same run again; a run whose plan is bound already takes that plan
from the log.

A maker is found in the engine's ``makers`` mapping, else among the installed entry
points of the group ``plansmith.run_makers`` (plansmith declares its own in its
``pyproject.toml``; another package may add its own the same way).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from plansmith.binding import Bindings
from plansmith.engine._tools import ReplanFactory
from plansmith.errors import ExecutionError, InputError, Location
from plansmith.execution import RunLog
from plansmith.model import Domain, JSONValue, Plan
from plansmith.servers import ServersConfig

__all__ = [
    "MADE_KEY",
    "MAKERS_GROUP",
    "MakeContext",
    "MadeRun",
    "RunMaker",
    "find_maker",
    "made_by",
]

#: the key of a run's recorded ``inputs`` that names its maker: ``{"maker": NAME,
#: "args": {...}}``
MADE_KEY = "made_by"

#: the entry point group of installed run makers
MAKERS_GROUP = "plansmith.run_makers"


@dataclass(frozen=True, slots=True)
class MakeContext:
    """Where the run is: its id, its directory (servers' files, a robot's state) and the
    engine's run log (a replan hook reads the run's failures from it)."""

    run_id: str
    run_dir: Path
    log: RunLog


@dataclass(frozen=True, slots=True)
class MadeRun:
    """A plan and what runs it; ``replan(catalog)`` makes the runner's replan hook once
    the tools are known (None, or returning None: no replanning)."""

    plan: Plan
    domain: Domain
    bindings: Bindings
    config: ServersConfig
    replan: ReplanFactory | None = None


#: ``maker(args, context)``: the run of these JSON arguments (a bad argument is an
#: ``InputError`` naming it)
RunMaker = Callable[[Mapping[str, JSONValue], MakeContext], MadeRun]


def made_by(inputs: Mapping[str, JSONValue]) -> tuple[str, dict[str, JSONValue]] | None:
    """The maker's name and arguments a run was recorded with; None for another run."""
    made = inputs.get(MADE_KEY)
    if not isinstance(made, dict):
        return None
    name, args = made.get("maker"), made.get("args")
    if not isinstance(name, str) or not isinstance(args, dict):
        return None
    return name, dict(args)


def find_maker(name: str, makers: Mapping[str, RunMaker]) -> RunMaker:
    """The maker ``name``: from ``makers``, else an installed entry point of
    ``MAKERS_GROUP``; one that is not there is an ``InputError`` saying what is."""
    found = makers.get(name)
    if found is not None:
        return found
    for point in entry_points(group=MAKERS_GROUP, name=name):
        try:
            loaded: object = point.load()
        except (ImportError, AttributeError) as error:
            raise ExecutionError(
                f"the run maker {name!r} ({point.value}) does not load: {error}",
                hint="reinstall plansmith (`make install`), or the package that declares it",
            ) from None
        if callable(loaded):
            return loaded
    known = sorted({*makers, *(p.name for p in entry_points(group=MAKERS_GROUP))})
    raise InputError(
        f"no run maker named {name!r} is installed here",
        location=Location(argument="maker"),
        hint=f"installed: {', '.join(known) or 'none'} (entry points of {MAKERS_GROUP})",
    )
