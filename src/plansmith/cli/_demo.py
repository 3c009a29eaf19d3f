"""``plansmith demo``: plan a shipped example end to end and show the artifact."""

from __future__ import annotations

import time
from importlib.resources import files
from pathlib import Path
from typing import Annotated

import typer

from plansmith.cli._app import app, guarded
from plansmith.errors import InputError
from plansmith.model import Plan

__all__: list[str] = []

DEFAULT_EXAMPLE = "lab-prep"


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
        str, typer.Argument(help="A shipped example: a folder under plansmith/examples.")
    ] = DEFAULT_EXAMPLE,
) -> None:
    """Plan a shipped example, validate the plan, and show it as a table, layers and Mermaid."""
    from rich.console import Console
    from rich.panel import Panel
    from rich.table import Table

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

    console.rule(f"[bold]plansmith demo: {problem.domain.name} / {problem.name}")
    console.print(f"goal: {', '.join(str(g) for g in problem.goal) or '(tasks)'}")
    table = Table(title=f"plan {result.hash[:19]}…  cost {result.cost}  ({elapsed_ms:.1f} ms)")
    for column in ("step", "action", "after", "tier", "cost"):
        table.add_column(column)
    for step in result.steps:
        table.add_row(step.id, str(step), ", ".join(step.after) or "-", step.tier, str(step.cost))
    console.print(table)
    layers = _layers(result)
    console.print(
        f"[bold]{len(result.steps)} steps in {len(layers)} layers[/bold] "
        "(steps in one layer are independent and may run in parallel):"
    )
    for number, layer in enumerate(layers, 1):
        console.print(f"  {number}: {'  '.join(layer)}")
    console.print(Panel(render_mermaid(result), title="Mermaid", expand=False))
    console.print(Panel(explain(result, problem).rstrip(), title="Why each step", expand=False))
    console.print("[green]plan validated:[/green] every linear order of the DAG reaches the goal.")
