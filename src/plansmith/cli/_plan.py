"""``plansmith plan``, ``validate`` and ``explain``: plan a problem and inspect the artifact."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from plansmith.cli._app import app, guarded
from plansmith.cli._inputs import load_inputs, plan_gtpyhop_folder, read_plan_file
from plansmith.errors import PlanFormatError, PlanInvalidError

__all__: list[str] = []


class Search(StrEnum):
    astar = "astar"
    wastar = "wastar"
    gbfs = "gbfs"
    lazy_gbfs = "lazy-gbfs"
    bfs = "bfs"


class Heuristic(StrEnum):
    ff = "ff"
    add = "add"
    max = "max"
    goalcount = "goalcount"
    blind = "blind"


class Format(StrEnum):
    text = "text"
    json = "json"
    mermaid = "mermaid"
    dot = "dot"


DomainArg = Annotated[
    Path, typer.Argument(help="Domain file (.yaml, .json, .pddl) or GTPyhop folder.")
]
ProblemArg = Annotated[
    Path | None,
    typer.Argument(help="Problem file (.yaml, .json, .pddl); omit for a GTPyhop folder."),
]
ProblemName = Annotated[
    str | None, typer.Option("--problem", help="Problem name in a GTPyhop folder's problems.py.")
]


@app.command("plan")
@guarded
def plan_command(
    domain: DomainArg,
    problem: ProblemArg = None,
    problem_name: ProblemName = None,
    search: Annotated[Search, typer.Option(help="Search algorithm.")] = Search.lazy_gbfs,
    heuristic: Annotated[Heuristic, typer.Option(help="Heuristic.")] = Heuristic.ff,
    weight: Annotated[int, typer.Option(min=1, help="Weight for wastar.")] = 2,
    preferred: Annotated[
        bool, typer.Option(help="Use preferred operators (gbfs, lazy-gbfs).")
    ] = True,
    time_limit: Annotated[
        float | None, typer.Option("--time-limit", min=0, help="Seconds of CPU time.")
    ] = None,
    node_limit: Annotated[
        int | None, typer.Option("--node-limit", min=1, help="Expanded nodes.")
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.text,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the plan here.")
    ] = None,
) -> None:
    """Plan a problem and print the plan. Exit codes: 0 plan found, 2 bad input,
    3 proved unsolvable, 4 limit reached."""
    import time

    from plansmith.formats import plan_to_json, render_dot, render_mermaid, render_text
    from plansmith.planning import PlanOptions, plan

    options = PlanOptions(
        search=search.value,
        heuristic=heuristic.value,
        weight=weight,
        preferred_operators=preferred,
        time_limit=time_limit,
        node_limit=node_limit,
    )
    if domain.is_dir():
        result = plan_gtpyhop_folder(domain, problem, problem_name, options)
    else:
        inputs = load_inputs(domain, problem, problem_name)
        result = plan(inputs, options, clock=time.process_time)
    renderers = {
        Format.text: render_text,
        Format.json: plan_to_json,
        Format.mermaid: render_mermaid,
        Format.dot: render_dot,
    }
    text = renderers[fmt](result)
    if not text.endswith("\n"):
        text += "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        _write_atomically(output, text)


@app.command("validate")
@guarded
def validate_command(
    domain: DomainArg,
    problem: Annotated[Path, typer.Argument(help="Problem file.")],
    plan_file: Annotated[Path, typer.Argument(metavar="PLAN_JSON", help="Plan JSON file.")],
) -> None:
    """Check a plan JSON against its domain and problem: exit 0 if valid, 1 with the reason."""
    from plansmith.planning import validate

    inputs = load_inputs(domain, problem, None)
    plan = read_plan_file(plan_file)
    try:
        validate(plan, inputs)
    except PlanFormatError as error:
        # A well-formed plan made for another domain or problem is an invalid plan here.
        raise PlanInvalidError(error.message, location=error.location, hint=error.hint) from None
    sys.stdout.write(f"valid: {plan_file} ({len(plan.steps)} steps, cost {plan.cost})\n")


@app.command("explain")
@guarded
def explain_command(
    domain: DomainArg,
    problem: Annotated[Path, typer.Argument(help="Problem file.")],
    plan_file: Annotated[Path, typer.Argument(metavar="PLAN_JSON", help="Plan JSON file.")],
) -> None:
    """Say why each step of a plan is there."""
    from plansmith.planning import explain

    inputs = load_inputs(domain, problem, None)
    sys.stdout.write(explain(read_plan_file(plan_file), inputs))


def _write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file, so nothing is half-written."""
    import os
    import tempfile

    from plansmith.errors import InputError

    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent or Path("."), prefix=f".{path.name}.")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except OSError as error:
        raise InputError(
            f"cannot write {path}: {error.strerror}", hint="choose a writable --output path"
        ) from None
