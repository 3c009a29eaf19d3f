"""``plansmith demo lab``: plan PCR prep with the HTN planner and run it on the simulator.

Plans ``flex-pcr`` for N samples (1- or 8-channel pipette), shows the plan in
brief, runs it through the engine over the lab server's three role servers with
a live progress bar, and prints the report.
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from plansmith.execution import Event, Replanned, StepFailed, StepSucceeded
from plansmith.model import Plan

if TYPE_CHECKING:
    from plansmith.domains.lab.sim import LabRun

__all__ = ["run_lab_demo", "run_bio_opentrons_demo", "run_dna_extraction_demo", "plan_layers"]


def plan_layers(plan: Plan) -> int:
    """How many layers the plan's DAG has (steps in one layer may run together)."""
    depth: dict[str, int] = {}
    for step in plan.steps:
        depth[step.id] = 1 + max((depth[a] for a in step.after), default=-1)
    return max(depth.values(), default=-1) + 1


def _show_plan(console: Console, plan: Plan, planned_ms: float) -> None:
    counts = Counter(s.action for s in plan.steps)
    table = Table(title=f"plan {plan.hash[:19]}…  planned in {planned_ms:.0f} ms")
    table.add_column("action")
    table.add_column("steps", justify="right")
    for action, n in counts.most_common():
        table.add_row(escape(action), str(n))
    console.print(table)
    console.print(f"[bold]{len(plan.steps)} steps in {plan_layers(plan)} layers[/bold]")


def run_lab_demo(
    console: Console,
    *,
    samples: int,
    channels: int,
    cycles: int = 30,
    home: Path | None = None,
    lab_python: Path | None = None,
) -> bool:
    """Plan ``flex-pcr`` and run it through the engine; True if the run succeeded.

    ``lab_python``: the lab venv's python (default: found, or built on first use; see
    ``plansmith.domains.lab.sim.require_lab_venv``)."""
    from plansmith.domains.lab import PCR_DOMAIN, problem_for
    from plansmith.domains.lab.sim import require_lab_venv, run_pcr
    from plansmith.formats import load_domain, parse_problem
    from plansmith.planning import plan as make_plan

    text = problem_for(samples, channels, cycles)  # ValueError before any work
    python = require_lab_venv(build=True, python=lab_python)
    home = home or Path(tempfile.mkdtemp(prefix="plansmith-lab-demo-"))
    home.mkdir(parents=True, exist_ok=True)
    problem_file = home / "problem.yaml"
    problem_file.write_text(text)
    console.rule(f"[bold]plansmith demo lab: PCR prep, {samples} samples, {channels}-channel")
    started = time.perf_counter()
    plan = make_plan(parse_problem(text, load_domain(PCR_DOMAIN)))
    _show_plan(console, plan, (time.perf_counter() - started) * 1000)
    run = _with_progress(
        console,
        len(plan.steps),
        lambda on: run_pcr(problem_file, home=home, subscribe=on, lab_python=python),
    )
    _report(console, run, home)
    return run.stats.state == "succeeded"


def run_bio_opentrons_demo(
    console: Console,
    *,
    scenario: int,
    tip_racks: int,
    home: Path | None = None,
    lab_python: Path | None = None,
) -> bool:
    """Plan GTPyhop's ``bio_opentrons`` scenario, map it to a Flex and run it; True if it
    succeeded (``tip_racks=1``: the tips run out and a replan replaces the rack)."""
    from plansmith.domains.lab.sim import SCENARIOS, plan_scenario, require_lab_venv, run_bio

    if not 1 <= scenario <= len(SCENARIOS) or tip_racks not in (1, 2):
        raise ValueError(f"scenario must be 1 to {len(SCENARIOS)} and tip racks 1 or 2")
    python = require_lab_venv(build=True, python=lab_python)
    home = home or Path(tempfile.mkdtemp(prefix="plansmith-lab-demo-"))
    name = SCENARIOS[scenario - 1]
    console.rule(f"[bold]plansmith demo bio-opentrons: {name}, {tip_racks} tip rack(s)")
    started = time.perf_counter()
    plan, _ = plan_scenario(name)
    _show_plan(console, plan, (time.perf_counter() - started) * 1000)
    run = _with_progress(
        console,
        len(plan.steps),
        lambda on: run_bio(name, home=home, subscribe=on, tip_racks=tip_racks, lab_python=python),
    )
    console.print("[bold]names mapped to the Flex:[/bold]")
    for line in run.mappings:
        console.print(f"  {escape(line)}")
    for note in run.replan_notes:
        console.print(f"[yellow]replan:[/yellow] {escape(note)}")
    _report(console, run, home)
    return run.stats.state == "succeeded"


def run_dna_extraction_demo(
    console: Console,
    *,
    scenario: int = 1,
    home: Path | None = None,
    lab_python: Path | None = None,
) -> bool:
    """Plan GTPyhop's Omega HDQ DNA extraction (scenario 1-3), map it to a Flex with the
    96-channel pipette and run it; True if it succeeded."""
    from plansmith.domains.lab.sim import OMEGA_SCENARIOS, plan_omega, require_lab_venv, run_omega

    if not 1 <= scenario <= len(OMEGA_SCENARIOS):
        raise ValueError(f"scenario must be 1 to {len(OMEGA_SCENARIOS)}")
    python = require_lab_venv(build=True, python=lab_python)
    home = home or Path(tempfile.mkdtemp(prefix="plansmith-lab-demo-"))
    name = OMEGA_SCENARIOS[scenario - 1]
    console.rule(f"[bold]plansmith demo dna-extraction: {name}, 96-channel pipette")
    started = time.perf_counter()
    plan, _, _ = plan_omega(name)
    _show_plan(console, plan, (time.perf_counter() - started) * 1000)
    run = _with_progress(
        console,
        len(plan.steps) + 1,  # and the deck set-up
        lambda on: run_omega(name, home=home, subscribe=on, lab_python=python),
    )
    console.print("[bold]names mapped to the Flex:[/bold]")
    for line in run.mappings:
        console.print(f"  {escape(line)}")
    _report(console, run, home)
    return run.stats.state == "succeeded"


def _with_progress(
    console: Console, total: int, start: Callable[[Callable[[Event], None]], Awaitable[LabRun]]
) -> LabRun:
    """Run ``start(on_event)`` under a live progress bar."""
    import anyio

    progress = Progress(
        TextColumn("[bold]running[/bold] {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    )
    task = progress.add_task("on the Opentrons simulator", total=total)

    def on_event(event: Event) -> None:
        if isinstance(event, StepSucceeded):
            progress.update(task, advance=1, description=escape(f"{event.server}: {event.action}"))
        elif isinstance(event, StepFailed):
            progress.console.print(
                f"[red]failed[/red] {escape(event.step)} {escape(event.action)}: "
                f"{escape(event.message)}"
            )
        elif isinstance(event, Replanned):
            done = int(progress.tasks[0].completed)
            progress.update(task, total=done + event.step_count)

    async def go() -> LabRun:
        return await start(on_event)

    with progress:
        return anyio.run(go)


def _report(console: Console, run: LabRun, home: Path) -> None:
    stats, run_id = run.stats, run.run_id
    colour = "green" if stats.state == "succeeded" else "red"
    console.print(
        f"[{colour}]run {run_id} {stats.state}[/{colour}]"
        + (f": {escape(stats.reason)}" if stats.reason else "")
    )
    table = Table(title="steps per server")
    table.add_column("server")
    table.add_column("steps", justify="right")
    for server in ("movement", "liquid", "modules"):
        table.add_row(server, str(stats.per_server.get(server, 0)))
    console.print(table)
    console.print(
        f"{stats.steps} steps in {stats.seconds:.2f} s: [bold]{stats.actions_per_second:.0f} "
        f"actions/s[/bold]; failed steps: {len(stats.failed)}; replans: {len(stats.replans)}"
    )
    for line in stats.replans:
        console.print(f"  replan: {escape(line)}")
    console.print(f"simulator commands (get_run_log): [bold]{stats.commands}[/bold]")
    console.print(
        f"Watch runs in a browser: [bold]plansmith serve --home {home}[/bold] "
        "(the run log is in runs.db there)."
    )
