"""``plansmith plan``, ``validate`` and ``explain``: plan a problem and inspect the artifact."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Literal

import typer

from plansmith.cli._app import app, guarded
from plansmith.cli._inputs import load_inputs, read_plan_file
from plansmith.cli._plan_command import PLAN_HELP, learned_problem, run_plan
from plansmith.errors import InputError, Location, PlanFormatError, PlanInvalidError
from plansmith.model import Problem

__all__: list[str] = []


DomainArg = Annotated[
    Path,
    typer.Argument(
        help="Domain file (.yaml, .yml, .json or .pddl); not a GTPyhop folder, whose actions "
        "are Python code with no preconditions or effects to check a plan against."
    ),
]


def _domain_and_problem(command: str, domain: Path, problem: Path) -> Problem:
    """The problem ``validate`` or ``explain`` reads a plan against: a domain file and a
    problem file. A GTPyhop folder is refused: a plan's steps can be replayed through its
    Python functions, but whether they carry out its tasks cannot be checked that way."""
    if domain.is_dir():
        raise InputError(
            f"{command} takes a domain file (.yaml, .yml, .json or .pddl), not a folder",
            location=Location(str(domain)),
            hint="a GTPyhop folder's actions are Python code that declares no preconditions or "
            "effects to check or explain a plan by; plan it with `plansmith plan FOLDER "
            "--problem NAME`",
        )
    return load_inputs(domain, problem, None)


@app.command(
    "plan",
    help=PLAN_HELP,
    add_help_option=False,
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def plan_command(ctx: typer.Context) -> None:
    """``plansmith plan`` through Typer: the words go to the one argparse definition."""
    raise typer.Exit(run_plan(ctx.args))


CostsOpt = Annotated[
    Literal["declared", "learned"],
    typer.Option(
        "--costs",
        help="the action costs the plan was made with: as the domain declares them, or"
        " learned from the run log of --home (as `plansmith plan --costs learned`)",
    ),
]
CostsHomeOpt = Annotated[
    Path, typer.Option("--home", help="with --costs learned: the home whose run log taught them")
]


@app.command("validate")
@guarded
def validate_command(
    domain: DomainArg,
    problem: Annotated[Path, typer.Argument(help="Problem file.")],
    plan_file: Annotated[Path, typer.Argument(metavar="PLAN_JSON", help="Plan JSON file.")],
    costs: CostsOpt = "declared",
    home: CostsHomeOpt = Path(".plansmith"),
) -> None:
    """Check a plan JSON against its domain and problem (with the costs it was made with).

    Exit codes: 0 valid; 1 invalid, or made for another domain or problem (the reason on
    stderr); 2 bad input (a file missing or malformed, or a plan JSON whose cost or hash
    does not match its steps)."""
    from plansmith.planning import validate

    inputs = _domain_and_problem("validate", domain, problem)
    if costs == "learned":
        inputs = learned_problem(inputs, home, None)
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
    costs: CostsOpt = "declared",
    home: CostsHomeOpt = Path(".plansmith"),
) -> None:
    """Say why each step of a plan is there (with --costs learned: and which costs were
    learned, from how many runs)."""
    from plansmith.planning import explain

    inputs = _domain_and_problem("explain", domain, problem)
    if costs == "learned":
        inputs = learned_problem(inputs, home, None, out=sys.stdout)
    sys.stdout.write(explain(read_plan_file(plan_file), inputs))
