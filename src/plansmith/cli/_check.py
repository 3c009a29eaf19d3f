"""``plansmith check``: plan, then check the bindings against the live tool catalog."""

# The engine imports the MCP SDK (about 0.6 s of CPU); commands import it lazily so that
# `plansmith --help` and the planning commands stay fast.

from __future__ import annotations

import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, TypeVar

import anyio
import typer

from plansmith.cli._app import app, guarded

__all__: list[str] = []

T = TypeVar("T")

#: the signals that stop ``check``, and its exit code for each (128 + the signal's number)
_STOPS = {signal.SIGINT: 130, signal.SIGTERM: 143}


def run_interruptible(fn: Callable[[], Awaitable[T]]) -> T:
    """``anyio.run(fn)``; Ctrl-C (SIGINT) or SIGTERM cancels it, promptly (its servers'
    start-up included: each is stopped), and the command exits 130 (143) with a line on
    stderr, not a traceback. A signal the command was started with ignored stays so."""
    caught: list[int] = []

    async def main() -> T | None:
        watched = [s for s in _STOPS if signal.getsignal(s) is not signal.SIG_IGN]
        result: list[T] = []
        failed: list[Exception] = []
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                if not watched:  # both ignored (nohup and a background job): nothing to do
                    return
                with anyio.open_signal_receiver(*watched) as signals:
                    async for signum in signals:
                        caught.append(signum)
                        tg.cancel_scope.cancel()
                        return

            async def body() -> None:
                try:
                    result.append(await fn())
                except Exception as error:  # raised below, not in an exception group
                    failed.append(error)
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            tg.start_soon(body)
        if failed:
            raise failed[0]
        return result[0] if result else None

    outcome = anyio.run(main)
    if caught:
        sys.stderr.write("check: interrupted\n")
        raise typer.Exit(_STOPS[signal.Signals(caught[0])])
    assert outcome is not None
    return outcome


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
    plan, bound, catalog = run_interruptible(lambda: engine.check(inputs))
    offered = sum(len(t) for _, t in catalog.servers)
    used = len({(step.server, step.tool) for step in bound.steps})
    typer.echo(
        f"ok: {len(bound.steps)} steps bound to {used} of the {offered} tools of "
        f"{len(catalog.servers)} server(s); plan {plan.hash}"
    )
