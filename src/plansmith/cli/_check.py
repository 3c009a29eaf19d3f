"""``plansmith check``: plan, then check the bindings against the live tool catalog."""

# The engine imports the MCP SDK (about 0.6 s of CPU); commands import it lazily so that
# `plansmith --help` and the planning commands stay fast.

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import anyio
import typer

from plansmith.cli._app import app, guarded

__all__: list[str] = []

ServersOpt = Annotated[Path, typer.Option("--servers", "-s", help="mcpServers JSON file.")]
BindingsOpt = Annotated[Path, typer.Option("--bindings", "-b", help="Bindings YAML file.")]
HomeOpt = Annotated[
    Path,
    typer.Option("--home", envvar="PLANSMITH_HOME", help="Where runs are kept (run log, blobs)."),
]


@app.command("check")
@guarded
def check_command(
    domain: Annotated[Path, typer.Argument(help="Domain file.")],
    problem: Annotated[Path, typer.Argument(help="Problem file.")],
    servers: ServersOpt,
    bindings: BindingsOpt,
    home: HomeOpt = Path(".plansmith"),
) -> None:
    """Check a plan's bindings against the live servers before anything runs: every
    problem is listed with its location.

    Exit codes: 0 ok; 2 bad input (every binding problem listed); 3 no plan exists; 4 a
    planning limit was reached; 5 a server did not start or answer; 130 interrupted
    (Ctrl-C)."""
    from plansmith.engine import Engine, RunInputs
    from plansmith.execution import MemoryRunLog

    engine = Engine(home, log=MemoryRunLog())
    inputs = RunInputs(domain, problem, servers, bindings)
    plan, bound, catalog = anyio.run(engine.check, inputs)
    offered = sum(len(t) for _, t in catalog.servers)
    used = len({(step.server, step.tool) for step in bound.steps})
    typer.echo(
        f"ok: {len(bound.steps)} steps bound to {used} of the {offered} tools of "
        f"{len(catalog.servers)} server(s); plan {plan.hash}"
    )
