"""``plansmith stats``: what the run log says of each action and tool, and the costs the
planner would learn from it (``--costs learned``)."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from plansmith.cli._app import app, guarded
from plansmith.cli._check import HomeOpt
from plansmith.cli._engine_options import LogOpt, open_engine
from plansmith.cli._live import make_console
from plansmith.errors import PlansmithError

__all__: list[str] = []


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


@app.command("stats")
@guarded
def stats_command(
    home: HomeOpt = Path(".plansmith"),
    log: LogOpt = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="One JSON line per action and tool: action, server, tool, calls, succeeded,"
            " failed (error class -> count), p50_ms, p95_ms, runs.",
        ),
    ] = False,
) -> None:
    """Per action and tool, over every run of the log: calls (attempts), successes,
    failures by error class, and the duration p50/p95 of the attempts.

    Exit codes: 0 listed; 2 no run log there."""
    from plansmith.execution import stats_of

    engine = open_engine(home, log=log, existing=True, read_only=True)
    skipped: list[str] = []
    try:
        runs = []
        for info in engine.log.runs():
            try:
                runs.append(engine.log.events(info.run_id))
            except PlansmithError as error:  # one damaged run: the others are counted
                skipped.append(f"run {info.run_id} is unreadable: {str(error).splitlines()[0]}")
        stats = stats_of(runs)
    finally:
        engine.close()
    for line in skipped:
        sys.stderr.write(f"warning: {line}\n")
    if as_json:
        for s in stats:
            row = dataclasses.asdict(s)
            row["failed"] = dict(s.failed)
            sys.stdout.write(json.dumps(row, sort_keys=True) + "\n")
        return
    table = Table("action", "server", "tool", "calls", "ok", "failed", "p50 ms", "p95 ms", "runs")
    for s in stats:
        failed = ", ".join(f"{c} {n}" for c, n in s.failed) or "-"
        table.add_row(
            s.action, s.server, s.tool, str(s.calls), str(s.succeeded), failed,
            _ms(s.p50_ms), _ms(s.p95_ms), str(s.runs),
        )  # fmt: skip
    console = make_console()
    if stats:
        console.print(table)
    else:
        console.print(f"no step has run in the log of {home}")
