"""``plansmith plan``, ``validate`` and ``explain``: plan a problem and inspect the artifact."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from plansmith.cli._app import app, guarded
from plansmith.cli._inputs import load_inputs, read_plan_file
from plansmith.cli._plan_command import PLAN_HELP, run_plan
from plansmith.errors import PlanFormatError, PlanInvalidError

__all__: list[str] = []


DomainArg = Annotated[
    Path, typer.Argument(help="Domain file (.yaml, .json, .pddl) or GTPyhop folder.")
]


@app.command(
    "plan",
    help=PLAN_HELP,
    add_help_option=False,
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def plan_command(ctx: typer.Context) -> None:
    """``plansmith plan`` through Typer: the words go to the one argparse definition."""
    raise typer.Exit(run_plan(ctx.args))


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
