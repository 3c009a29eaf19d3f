"""``plansmith research "QUESTION" --source DIR ...``: research a question over folders
of documents, with a progress bar; the cited report goes to stdout (or ``--out``)."""

# The MCP SDK and the engine are imported only when the command runs.

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from plansmith.cli._app import app, guarded
from plansmith.cli._check import HomeOpt
from plansmith.errors import ExecutionError

__all__: list[str] = []


class _View:
    """A progress bar of the plan's steps; a line per search."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        from plansmith.cli._live import make_console

        self.console = make_console(stderr=True)  # to a pipe or a file: nothing wrapped
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            console=self.console,
        )
        self.task = self.progress.add_task("planning", total=None)

    def __call__(self, event: Any) -> None:
        from rich.markup import escape

        from plansmith.execution import PlanReady, StepFailed, StepSucceeded

        p = self.progress
        if isinstance(event, PlanReady):
            steps: Any = event.bound.get("steps") or []
            p.update(self.task, total=len(steps), description="researching")
        elif isinstance(event, StepSucceeded | StepFailed):
            p.advance(self.task)
            p.update(self.task, description=escape(event.call))


@app.command("research")
@guarded
def research_command(
    question: Annotated[str, typer.Argument(help="The question, e.g. 'How do I use tomllib?'")],
    source: Annotated[
        list[str],
        typer.Option("--source", help="A folder of documents, DIR or NAME=DIR (repeatable)."),
    ],
    budget_searches: Annotated[
        int, typer.Option("--budget-searches", min=0, help="Searches sent to sources, at most.")
    ] = 48,
    budget_seconds: Annotated[
        float, typer.Option("--budget-seconds", min=0, help="Seconds of searching, at most.")
    ] = 300.0,
    budget_subtasks: Annotated[
        int, typer.Option("--budget-subtasks", min=0, help="Subquestions, at most.")
    ] = 12,
    max_depth: Annotated[
        int, typer.Option("--max-depth", min=1, max=8, help="Passages read per search.")
    ] = 3,
    max_in_flight: Annotated[
        int, typer.Option("--max-in-flight", min=1, help="Calls at once per source.")
    ] = 4,
    subquestion: Annotated[
        list[str] | None,
        typer.Option("--subquestion", help="An extra subquestion (the rules keep or drop it)."),
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write the report here.")] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report and trace as JSON.")
    ] = False,
    home: HomeOpt = Path(".plansmith"),
) -> None:
    """Research QUESTION over the sources (one plansmith-corpus server each): decompose it,
    search every source within the budget, verify the evidence in code, and print a report
    in which every factual sentence cites its source path and lines. The whole trace is
    kept in HOME/runs/RUN_ID/research.json."""
    import asyncio

    from plansmith.domains.research import Budget, check_question
    from plansmith.domains.research.desk import (
        ResearchService,
        SourceQuota,
        excludes_for,
        sources_from_specs,
    )
    from plansmith.engine import Engine

    check_question(question)  # a bad question makes no run (nor starts a server)
    sources = sources_from_specs(source)
    excludes = excludes_for(sources)
    budget = Budget(budget_subtasks, budget_searches, budget_seconds)
    view = _View()
    engine = Engine(home)

    async def main() -> Any:
        service = ResearchService(
            engine,
            sources,
            excludes=excludes,
            quota=SourceQuota(max_in_flight=max_in_flight),
            budget=budget,
            depth=max_depth,
        )
        async with service:  # its runs are cancelled and its servers stopped at the end
            handle = service.start_research(
                question, extra=tuple(subquestion or ()), owner="local", subscribe=view
            )
            view.console.print(
                f"plan: {handle.kind} question, {len(handle.subquestions)} subquestions:"
            )
            for line in handle.subquestions:  # the decomposition, before anything runs
                view.console.print(f"  {line}", markup=False)
            with view.progress:
                status = await service.wait(handle.run_id, owner="local")
            return status, service.get_research_report(handle.run_id, owner="local")

    try:
        status, report = asyncio.run(main())
    finally:
        engine.close()
    if as_json:
        payload = {"status": status.__dict__, "report": report.__dict__}
        sys.stdout.write(json.dumps(payload, indent=1, default=list) + "\n")
    elif out is not None:
        out.write_text(report.markdown, encoding="utf-8")
    else:
        sys.stdout.write(report.markdown)
    where = home / "runs" / status.run_id
    limited = "coverage limited" if status.coverage_limited else "full coverage"
    from rich.markup import escape

    view.console.print(
        escape(
            f"research {status.run_id}: {status.state}, {status.searches} searches, {limited}; "
            f"trace: {where / 'research.json'}"
        )
    )
    if status.state != "succeeded":
        raise ExecutionError(
            f"research {status.run_id} {status.state}: {status.error or 'no report'}",
            hint=f"see {where / 'servers.log'} and the run log (plansmith show {status.run_id})",
        )
