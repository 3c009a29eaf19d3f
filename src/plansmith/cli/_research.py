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

_LIMIT_OPTIONS = {
    "rate": "--rate",
    "breaker_failures": "--breaker-failures",
    "breaker_cooldown": "--breaker-cooldown",
}


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
    rate: Annotated[
        list[str] | None,
        typer.Option(
            "--rate",
            help="Calls a source may start per time window, across runs: [SOURCE=]RATE, "
            "e.g. 5/s, 60/min, python-docs='100 per 10 s' (repeatable; no SOURCE: every "
            "source). A call over the rate waits for a slot.",
        ),
    ] = None,
    breaker_failures: Annotated[
        int | None,
        typer.Option(
            "--breaker-failures",
            help="Failed calls in a row that open a source's circuit breaker (0: no "
            "breaker; default 5).",
        ),
    ] = None,
    breaker_cooldown: Annotated[
        float | None,
        typer.Option(
            "--breaker-cooldown",
            help="Seconds an open breaker waits before letting one trial call through "
            "(default 30).",
        ),
    ] = None,
    subquestion: Annotated[
        list[str] | None,
        typer.Option("--subquestion", help="An extra subquestion (the rules keep or drop it)."),
    ] = None,
    offline: Annotated[
        bool,
        typer.Option(
            "--offline",
            help="Ask no model, even with PLANSMITH_LLM_BASE_URL set (by default the "
            "endpoint, when set, proposes subquestions and explains the flagged "
            "conflicts: two calls at most).",
        ),
    ] = False,
    out: Annotated[Path | None, typer.Option("--out", help="Write the report here.")] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report and trace as JSON.")
    ] = False,
    home: HomeOpt = Path(".plansmith"),
) -> None:
    """Research QUESTION over the sources (one plansmith-corpus server each): decompose it,
    search every source within the budget, verify the evidence in code, and print a report
    in which every factual sentence cites its source path and lines. The whole trace is
    kept in HOME/runs/RUN_ID/research.json. With PLANSMITH_LLM_BASE_URL and
    PLANSMITH_LLM_MODEL set (an OpenAI-compatible endpoint), the run makes two model
    calls at most: one proposes more subquestions (the rules keep or drop them), one
    explains the conflicts the verifier flagged, in a section marked as model text."""
    import asyncio

    from plansmith.domains.research import Budget, check_question
    from plansmith.domains.research.desk import (
        ResearchService,
        SourceQuota,
        excludes_for,
        limit_settings,
        sources_from_specs,
    )
    from plansmith.engine import Engine

    check_question(question)  # a bad question makes no run (nor starts a server)
    sources = sources_from_specs(source)
    limits = limit_settings(  # bad limits make no run either
        list(sources),
        rate=rate or None,
        breaker_failures=breaker_failures,
        breaker_cooldown=breaker_cooldown,
        names=_LIMIT_OPTIONS,
    )
    model = None
    if not offline:  # the endpoint translation uses, when the environment names one
        import os

        from plansmith.mcp import openai_config, openai_model

        config = openai_config(os.environ)
        model = openai_model(config) if config is not None else None
    quota = {name: limits.apply(SourceQuota(max_in_flight=max_in_flight), name) for name in sources}
    excludes = excludes_for(sources)
    budget = Budget(budget_subtasks, budget_searches, budget_seconds)
    view = _View()
    engine = Engine(home)

    async def main() -> Any:
        service = ResearchService(
            engine,
            sources,
            excludes=excludes,
            quota=quota,
            budget=budget,
            depth=max_depth,
            model=model,
            model_via="openai",
        )
        async with service:  # its runs are cancelled and its servers stopped at the end
            proposed: tuple[str, ...] = ()
            if model is not None:  # one call: more subquestions, filtered by the rules
                proposed, failed = await service.model_proposals(question, model)
                if failed:
                    view.console.print(
                        f"the model proposed no subquestion ({failed}); the rules' only",
                        markup=False,
                    )
            handle = service.start_research(
                question,
                extra=tuple(subquestion or ()),
                owner="local",
                subscribe=view,
                proposed=proposed,
                llm_calls=1 if model is not None else 0,
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
