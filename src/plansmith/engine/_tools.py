"""A run's tools: tools at hand (``RunTools``), or the servers of a servers file."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from plansmith.binding import Bindings, BoundPlan, ToolCatalog, load_bindings
from plansmith.errors import InputError, PlansmithError
from plansmith.execution import ReplanFn, ToolInvoker
from plansmith.servers import ServerPool, ServersConfig, load_servers

__all__ = ["RunTools", "ReplanFactory", "server_limits", "load_run_files", "local_pool"]


@dataclass(frozen=True, slots=True)
class RunTools:
    """Tools at hand for ``Engine.run_plan``, instead of servers for it to start.

    ``catalog``: what the plan is bound against; ``invoker``: what calls them (the engine
    wraps it for tracing); ``limits``: the runner's calls in flight per server (None:
    none); ``route``: a change to the bound plan before it is recorded (e.g. giving
    steps the server named by one of their arguments).
    """

    catalog: ToolCatalog
    invoker: ToolInvoker
    limits: Mapping[str, int] | None = None
    route: Callable[[BoundPlan], BoundPlan] | None = None


# ``Engine.run_plan``'s ``replan``: the runner's replan hook, made once the catalog is known
ReplanFactory = Callable[[ToolCatalog], ReplanFn | None]


def server_limits(config: ServersConfig) -> dict[str, int]:
    return {s.name: s.max_in_flight for s in config.servers}


def load_run_files(bindings: Path, servers: Path) -> tuple[Bindings, ServersConfig]:
    """The bindings and the servers file, both read: the problems of both are reported
    at once (one ``InputError`` whose ``problems`` are each file's error)."""
    found: list[PlansmithError] = []
    read_bindings: Bindings | None = None
    config: ServersConfig | None = None
    try:
        read_bindings = load_bindings(bindings)
    except InputError as error:
        found.append(error)
    try:
        config = load_servers(servers)
    except InputError as error:
        found.append(error)
    if len(found) == 1:
        raise found[0]
    if found:
        raise InputError(
            "the bindings and the servers file both have problems",
            hint="fix every listed problem",
            problems=tuple(found),
        )
    assert read_bindings is not None
    assert config is not None
    return read_bindings, config


def local_pool(config: ServersConfig, errlog: TextIO | None) -> ServerPool:
    return ServerPool(config, errlog=errlog)
