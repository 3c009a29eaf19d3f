"""``plansmith demo``: plan a shipped example end to end and show the artifact."""

from __future__ import annotations

import time
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plansmith.cli._app import app, guarded
from plansmith.errors import InputError
from plansmith.model import Plan

if TYPE_CHECKING:
    from rich.console import Console

__all__: list[str] = []

DEFAULT_DEMO = "lab"  # PCR prep planned by HTN and run on the Opentrons simulator
BIO_DEMO = "bio-opentrons"  # GTPyhop's bio_opentrons, unchanged, run on the simulator
DNA_DEMO = "dna-extraction"  # GTPyhop's Omega HDQ DNA extraction, on a 96-channel Flex
DRUG_DEMO = "drug-target"  # GTPyhop's drug target discovery over eight servers


def examples_dir() -> Path:
    """The examples shipped inside the package."""
    return Path(str(files("plansmith") / "examples"))


def _layers(plan: Plan) -> list[list[str]]:
    """Steps grouped by depth in the DAG: steps in one layer may run at the same time."""
    depth: dict[str, int] = {}
    for step in plan.steps:  # steps are in a topological order
        depth[step.id] = 1 + max((depth[a] for a in step.after), default=-1)
    layers: list[list[str]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for step in plan.steps:
        layers[depth[step.id]].append(step.id)
    return layers


@app.command("demo")
@guarded
def demo_command(
    example: Annotated[
        str,
        typer.Argument(
            help="`lab`: plan PCR prep and run it on the Opentrons simulator; "
            "`bio-opentrons`: run GTPyhop's bio_opentrons there; `dna-extraction`: run "
            "GTPyhop's Omega HDQ DNA extraction there (Flex 96-channel); `drug-target`: "
            "GTPyhop's drug target discovery over eight biomedical servers; `bio`: the full "
            "family report on Biopython and BLAST+; or a shipped example "
            "(a folder under plansmith/examples, e.g. lab-prep) to plan and show."
        ),
    ] = DEFAULT_DEMO,
    samples: Annotated[int, typer.Option(help="lab: samples to prepare (1-96).")] = 96,
    channels: Annotated[int, typer.Option(help="lab: pipette channels (1 or 8).")] = 8,
    cycles: Annotated[int, typer.Option(help="lab: PCR cycles (1-99).")] = 30,
    scenario: Annotated[
        int | None,
        typer.Option(
            help="bio-opentrons: scenario 1-6 (55 to 611 actions; default 6); "
            "dna-extraction: 1-3 (standard, dry run, manual mixing; default 1); "
            "drug-target: 1-3 (breast cancer, Alzheimer's, type 2 diabetes; default 1)."
        ),
    ] = None,
    tip_racks: Annotated[
        int, typer.Option(help="bio-opentrons: 2, or 1 to run out of tips and replan.")
    ] = 2,
    home: Annotated[
        Path,
        typer.Option(
            help="where runs are stored: lab, bio-opentrons, dna-extraction and drug-target: HOME "
            "(plansmith serve --home HOME); bio: HOME/demo-bio "
            "(plansmith serve --home HOME/demo-bio)."
        ),
    ] = Path(".plansmith"),
    blast_fails: Annotated[
        bool, typer.Option(help="bio: make BLAST+ fail at run time, so the run replans.")
    ] = False,
    as_published: Annotated[
        bool,
        typer.Option(
            "--as-published",
            help="drug-target: plan GTPyhop's domain as published (8 steps, no KEGG step), "
            "without plansmith's KEGG action and method.",
        ),
    ] = False,
    disease: Annotated[
        str | None,
        typer.Option(
            "--disease",
            help="drug-target: another disease than the scenario's, searched by name (one no"
            " database knows: its steps that need a hit are skipped, the report says 'No"
            " targets found').",
        ),
    ] = None,
    lab_python: Annotated[
        Path | None,
        typer.Option(
            "--lab-python",
            help="lab, bio-opentrons and dna-extraction: the python of a venv with opentrons "
            "9.1.2 and mcp 1.9.4 (default: $PLANSMITH_LAB_PYTHON, .venv-lab in a checkout, "
            "else one built in the user cache directory on first use; see docs/lab.md).",
        ),
    ] = None,
) -> None:
    """Plan PCR prep and run it on the Opentrons simulator (`lab`), or plan a shipped example."""
    if example == "bio":
        from plansmith.cli._demo_bio import run_bio_demo

        run_bio_demo(_console(), (home / "demo-bio").resolve(), blast_fails=blast_fails)
        return
    if example == DRUG_DEMO:
        from plansmith.cli._demo_drugtarget import run_drug_target_demo

        try:
            ok = run_drug_target_demo(
                _console(),
                scenario=1 if scenario is None else scenario,
                home=home.resolve(),
                as_published=as_published,
                disease=disease,
            )
        except ValueError as error:  # an option out of range
            raise InputError(str(error), hint="see `plansmith demo --help`") from None
        if not ok:
            raise typer.Exit(1)
        return
    if example in (DEFAULT_DEMO, BIO_DEMO, DNA_DEMO):
        from plansmith.cli._demo_lab import (
            run_bio_opentrons_demo,
            run_dna_extraction_demo,
            run_lab_demo,
        )

        try:
            if example == DEFAULT_DEMO:
                ok = run_lab_demo(
                    _console(),
                    samples=samples,
                    channels=channels,
                    cycles=cycles,
                    home=home.resolve(),
                    lab_python=lab_python,
                )
            elif example == DNA_DEMO:
                ok = run_dna_extraction_demo(
                    _console(),
                    scenario=1 if scenario is None else scenario,
                    home=home.resolve(),
                    lab_python=lab_python,
                )
            else:
                ok = run_bio_opentrons_demo(
                    _console(),
                    scenario=6 if scenario is None else scenario,
                    tip_racks=tip_racks,
                    home=home.resolve(),
                    lab_python=lab_python,
                )
        except ValueError as error:  # an option out of range
            raise InputError(str(error), hint="see `plansmith demo --help`") from None
        if not ok:
            raise typer.Exit(1)
        return
    _plan_example(example)


def _console() -> Console:
    """The demos' console: to a terminal it wraps lines at its width; to a pipe or a
    file (a log, CI) it leaves each line whole (a path or a command is not cut in two)."""
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(soft_wrap=True)


def _plan_example(example: str) -> None:
    """Plan a shipped example, validate the plan, and show it as a table, layers and Mermaid."""
    from rich.console import Console
    from rich.markup import escape
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    from plansmith.formats import load_domain, load_problem, render_mermaid
    from plansmith.planning import PlanOptions, explain, plan, validate

    folder = examples_dir() / example
    if not (folder / "domain.yaml").exists():
        known = sorted(p.name for p in examples_dir().iterdir() if (p / "domain.yaml").exists())
        raise InputError(f"no shipped example {example!r}", hint=f"choose one of {known}")
    console = Console()
    problem = load_problem(folder / "problem.yaml", load_domain(folder / "domain.yaml"))
    started = time.perf_counter()
    result = plan(problem, PlanOptions())
    elapsed_ms = (time.perf_counter() - started) * 1000
    validate(result, problem)

    console.rule(f"[bold]plansmith demo: {escape(problem.domain.name)} / {escape(problem.name)}")
    console.print(escape(f"goal: {', '.join(str(g) for g in problem.goal) or '(tasks)'}"))
    table = Table(title=f"plan {result.hash[:19]}…  cost {result.cost}  ({elapsed_ms:.1f} ms)")
    for column in ("step", "action", "after", "tier", "cost"):
        table.add_column(column)
    for step in result.steps:
        cells = (step.id, str(step), ", ".join(step.after) or "-", step.tier, str(step.cost))
        table.add_row(*(escape(cell) for cell in cells))
    console.print(table)
    layers = _layers(result)
    console.print(
        f"[bold]{len(result.steps)} steps in {len(layers)} layers[/bold] "
        "(steps in one layer are independent and may run in parallel):"
    )
    for number, layer in enumerate(layers, 1):
        console.print(escape(f"  {number}: {'  '.join(layer)}"))
    console.print(Panel(Text(render_mermaid(result)), title="Mermaid", expand=False))
    why = Text(explain(result, problem).rstrip())
    console.print(Panel(why, title="Why each step", expand=False))
    console.print("[green]plan validated:[/green] every linear order of the DAG reaches the goal.")
