"""``plansmith demo drug-target``: GTPyhop's drug target discovery over eight servers.

Plans a scenario of the unchanged GTPyhop domain, shows the plan (its ``${context.X}``
placeholders as planned), runs it through the engine over the eight servers of
``servers.json`` (Open Targets, UniProt, Reactome, KEGG, PDB, AlphaFold, ChEMBL and
PubMed, shaped like the public ones), and prints the findings with where each value
came from; ``report.md`` and ``report.json`` are in the run's directory.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from plansmith.execution import Event, StepFailed, StepRetrying, StepSucceeded

__all__ = ["run_drug_target_demo"]


def run_drug_target_demo(
    console: Console, *, scenario: int, home: Path, servers: Path | None = None
) -> bool:
    """Plan and run drug target scenario 1-3; True if the run succeeded."""
    import anyio

    from plansmith.domains.drugtarget import pipeline

    if not 1 <= scenario <= len(pipeline.DT_SCENARIOS):
        raise ValueError(f"scenario must be 1 to {len(pipeline.DT_SCENARIOS)}")
    name = pipeline.DT_SCENARIOS[scenario - 1]
    console.rule(f"[bold]plansmith demo drug-target: {name}, eight servers")
    plan, _ = pipeline.plan_drug_target(name)
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

    config = pipeline.servers_config(servers) if servers else None

    async def go() -> pipeline.DrugTargetRun:
        return await pipeline.run_drug_target(name, home=home, servers=config, subscribe=on_event)

    run = anyio.run(go)
    console.print((run.report_dir / "report.md").read_text(), markup=False, highlight=False)
    colour = "green" if run.state == "succeeded" else "red"
    console.print(
        f"[{colour}]run {run.run_id} {run.state}[/{colour}] in {run.seconds:.2f} s; "
        f"failed steps: {run.failed_steps}; retries: {run.retries}"
    )
    console.print(f"report: {run.report_dir / 'report.md'} (and report.json)")
    console.print(f"Watch runs in a browser: plansmith serve --home {home}")
    return run.state == "succeeded"
