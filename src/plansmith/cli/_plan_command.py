"""``plansmith plan``: the hottest command, defined once with argparse.

It runs without importing Typer, Click or Rich (``main`` calls :func:`run_plan`
directly), so planning a small task costs little more than Python's own start-up;
Typer hosts the same command as a pass-through for ``plansmith --help``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from plansmith.cli._inputs import load_inputs, plan_gtpyhop_folder, write_atomically
from plansmith.errors import PlansmithError
from plansmith.planning import HEURISTIC_NAMES, SEARCH_NAMES, PlanOptions

if TYPE_CHECKING:
    from typing import TextIO

    from plansmith.model import Problem

__all__ = ["PLAN_HELP", "build_parser", "learned_problem", "run_plan"]

PLAN_HELP = (
    "Plan a problem and print the plan. Exit codes: 0 plan found, 2 bad input, "
    "3 proved unsolvable, 4 limit reached, 130 interrupted (Ctrl-C)."
)
FORMATS = ("text", "json", "mermaid", "dot")


def _positive(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    def parse(text: str) -> int | float:
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be > 0, not {text}")
        return value

    parse.__name__ = kind.__name__
    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="plansmith plan", description=PLAN_HELP)
    parser.add_argument(
        "domain", type=Path, help="domain file (.yaml, .json, .pddl) or GTPyhop folder"
    )
    parser.add_argument(
        "problem", type=Path, nargs="?", help="problem file; omit for a GTPyhop folder"
    )
    parser.add_argument("--problem", dest="problem_name", help="problem name in a GTPyhop folder")
    parser.add_argument("--search", choices=SEARCH_NAMES, default="lazy-gbfs")
    parser.add_argument("--heuristic", choices=HEURISTIC_NAMES, default="ff")
    parser.add_argument("--weight", type=_positive(int), default=2, help="weight for wastar")
    parser.add_argument(
        "--preferred",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="use preferred operators (gbfs, lazy-gbfs)",
    )
    parser.add_argument(
        "--novelty",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="add a queue of novel successors, which make a fact true for the first"
        " time among states of the same heuristic value (gbfs, lazy-gbfs)",
    )
    parser.add_argument("--time-limit", type=_positive(float), help="seconds of CPU time")
    parser.add_argument("--node-limit", type=_positive(int), help="expanded nodes")
    parser.add_argument(
        "--costs",
        choices=("declared", "learned"),
        default="declared",
        help="action costs: as the domain declares them, or learned from the run log of"
        " --home (plansmith stats): slower and failing actions cost more",
    )
    parser.add_argument(
        "--home", type=Path, default=Path(".plansmith"), help="with --costs learned: the home"
    )
    parser.add_argument("--log", help="with --costs learned: the run log (default HOME/runs.db)")
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format")
    parser.add_argument("--output", "-o", type=Path, help="write the plan to this file")
    return parser


def run_plan(argv: Sequence[str], *, replace_process: bool = False) -> int:
    """Run ``plansmith plan`` with ``argv`` (the words after ``plan``); the exit code.

    A GTPyhop folder is planned under ``PYTHONHASHSEED=0``: if this process has
    another seed, the command runs again in one that has it (see ``_hash_seed``),
    replacing this process if ``replace_process`` (it is the ``plansmith`` program).
    """
    args = build_parser().parse_args(list(argv))  # exits 2 on bad usage
    if args.domain.is_dir():
        from plansmith.cli._hash_seed import must_fix_seed, rerun_with_fixed_seed

        if must_fix_seed():
            return rerun_with_fixed_seed(argv, replace_process=replace_process)
    options = PlanOptions(
        search=args.search,
        heuristic=args.heuristic,
        weight=args.weight,
        preferred_operators=args.preferred,
        novelty=args.novelty,
        time_limit=args.time_limit,
        node_limit=args.node_limit,
    )
    try:
        text = _plan_text(args, options)
        if args.output is None:
            sys.stdout.write(text)
        else:
            write_atomically(args.output, text)
    except PlansmithError as error:
        sys.stderr.write(f"error: {error}\n")
        return error.exit_code
    except KeyboardInterrupt:  # Ctrl-C while it loads or searches: no traceback
        sys.stderr.write("plan: interrupted\n")
        return 130
    return 0


def _plan_text(args: argparse.Namespace, options: PlanOptions) -> str:
    from plansmith import formats

    if args.domain.is_dir():
        result = plan_gtpyhop_folder(args.domain, args.problem, args.problem_name, options)
    else:
        from plansmith.planning import plan  # the classical planner: not for a GTPyhop folder

        problem = load_inputs(args.domain, args.problem, args.problem_name)
        if args.costs == "learned":
            problem = learned_problem(problem, args.home, args.log)
        result = plan(problem, options, clock=time.process_time)
    render = {
        "text": formats.render_text,
        "json": formats.plan_to_json,
        "mermaid": formats.render_mermaid,
        "dot": formats.render_dot,
    }[args.format]
    text = render(result)
    return text if text.endswith("\n") else text + "\n"


def learned_problem(
    problem: Problem, home: Path, log: str | None, *, out: TextIO | None = None
) -> Problem:
    """``problem`` with its actions' costs learned from the run log; says which on
    ``out`` (default stderr), each with how many calls and runs taught it."""
    from plansmith.cli._costs import cost_lines
    from plansmith.engine import open_engine
    from plansmith.execution import with_costs

    engine = open_engine(home, log=log, existing=True, read_only=True)
    try:
        costs = engine.learned_costs(problem)
    finally:
        engine.close()
    for line in cost_lines(costs):
        (out or sys.stderr).write(line + "\n")
    return with_costs(problem, costs)
