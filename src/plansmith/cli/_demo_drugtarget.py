"""``plansmith demo drug-target``: GTPyhop's drug target discovery over eight servers.

Plans a scenario of GTPyhop's domain (loaded unchanged, with plansmith's KEGG action and
method added; ``as_published``: without them), shows the plan (its ``${context.X}``
placeholders as planned), runs it through the engine over the servers of
``servers.json`` (Open Targets, UniProt, Reactome, KEGG, PDB, AlphaFold, ChEMBL and
PubMed, shaped like the public ones), and prints the servers the run used and the
findings with where each value came from; ``report.md`` and ``report.json`` are in the
run's directory.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from plansmith.execution import Event, StepFailed, StepRetrying, StepSkipped, StepSucceeded

__all__ = ["run_drug_target_demo"]


def run_drug_target_demo(
    console: Console,
    *,
    scenario: int,
    home: Path,
    servers: Path | None = None,
    as_published: bool = False,
    disease: str | None = None,
) -> bool:
    """Plan and run drug target scenario 1-3; True if the run succeeded.
    ``as_published``: GTPyhop's domain without plansmith's KEGG action and method;
    ``disease``: another disease than the scenario's."""
    import anyio

    from plansmith.domains.drugtarget import pipeline

    if not 1 <= scenario <= len(pipeline.DT_SCENARIOS):
        raise ValueError(f"scenario must be 1 to {len(pipeline.DT_SCENARIOS)}")
    name = pipeline.DT_SCENARIOS[scenario - 1]
    what = "as published, seven servers" if as_published else "eight servers"
    console.rule(f"[bold]plansmith demo drug-target: {name}, {what}")
    plan, _ = pipeline.plan_drug_target(name, disease, as_published=as_published)
    table = Table(title=f"plan {plan.hash[:19]}…  ({len(plan.steps)} steps)")
    for column in ("step", "action", "argument"):
        table.add_column(column)
    for step in plan.steps:
        table.add_row(step.id, escape(step.action), escape(", ".join(map(str, step.args))))
    console.print(table)

    def on_event(event: Event) -> None:
        if isinstance(event, StepSucceeded):
            console.print(f"  [green]ok[/green] {event.step} {event.server}:{event.tool}")
        elif isinstance(event, StepRetrying):
            console.print(f"  [yellow]retry[/yellow] {event.step}: {escape(event.message)}")
        elif isinstance(event, StepFailed):
            console.print(f"  [red]failed[/red] {event.step}: {escape(event.message)}")
        elif isinstance(event, StepSkipped):
            console.print(f"  [cyan]skipped[/cyan] {event.step}: {escape(event.reason)}")

    config = pipeline.servers_config(servers) if servers else None

    async def go() -> pipeline.DrugTargetRun:
        return await pipeline.run_drug_target(
            name,
            home=home,
            servers=config,
            subscribe=on_event,
            as_published=as_published,
            disease=disease,
        )

    run = anyio.run(go)
    used = run.findings.called()
    console.print(f"servers used: {len(used)} ({', '.join(used)})")
    console.print((run.report_dir / "report.md").read_text(), markup=False, highlight=False)
    colour = "green" if run.state == "succeeded" else "red"
    console.print(
        f"[{colour}]run {run.run_id} {run.state}[/{colour}] in {run.seconds:.2f} s; "
        f"failed steps: {run.failed_steps}; retries: {run.retries}"
    )
    console.print(f"report: {run.report_dir / 'report.md'} (and report.json)")
    console.print(f"Watch runs in a browser: plansmith serve --home {home}")
    return run.state == "succeeded"
