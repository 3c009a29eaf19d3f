"""``plansmith run | resume | replay``: run plans durably (``runs`` and ``show``: ``_show``)."""

# The engine imports the MCP SDK (about 0.6 s of CPU); commands import it lazily so that
# `plansmith --help` and the planning commands stay fast.

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import anyio
import typer
from rich.markup import escape

from plansmith.cli._app import app, guarded
from plansmith.cli._check import BindingsOpt, HomeOpt, ServersOpt
from plansmith.cli._engine_options import (
    ExecutorOpt,
    LeaseTtlOpt,
    LogOpt,
    SchedulerOpt,
    open_engine,
)
from plansmith.cli._interrupts import Interrupts
from plansmith.cli._live import LiveView, make_console, shown
from plansmith.cli._person import cli_person
from plansmith.errors import ApprovalRequiredError, ExecutionError, InputError

if TYPE_CHECKING:
    from plansmith.engine import Engine
    from plansmith.execution import RunView

__all__: list[str] = []

YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Approve the plan's hash now.")]
ParallelOpt = Annotated[int, typer.Option("--max-parallel", min=1, help="Steps in flight at most.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="One JSON line per event on stdout.")]
PolicyOpt = Annotated[
    str,
    typer.Option(
        "--approve-tiers", help="Tiers that need a person: e.g. write,execute | none | all."
    ),
]


def _json_line(event: object) -> None:
    from plansmith.execution import Event

    assert isinstance(event, Event)
    sys.stdout.write(_compact(event.to_dict()))
    sys.stdout.flush()


def _compact(value: object) -> str:
    """One line of compact JSON, as every ``--json`` output writes it."""
    return json.dumps(value, separators=(",", ":")) + "\n"


def _drive(
    interrupts: Interrupts,
    as_json: bool,
    go: Callable[[Callable[[object], None]], Awaitable[object]],
    resumed: RunView | None = None,
) -> object | None:
    """Run ``go`` with the JSON lines or the live view, stopped by ``interrupts``: its
    outcome, or None if a signal stopped it before the engine had the run. ``resumed``:
    the view of a run that is continued, from its log (no PlanReady comes to tell its
    steps); the live view moves it on."""
    view = None if as_json else LiveView(make_console(stderr=True), resumed)
    sink: Callable[[object], None] = _json_line if view is None else view
    if view is not None:
        interrupts.say = lambda text: view.console.print(escape(text))
        from plansmith.cli._ask import can_ask_here, terminal_asker

        if interrupts.engine.asker is None and can_ask_here():
            interrupts.engine.asker = terminal_asker(view.console, view.pause, view.go_on)
    try:
        outcome = anyio.run(interrupts.drive, lambda: go(interrupts.watch(sink)))
    finally:
        if view is not None:
            view.stop()
    if outcome is None and interrupts.caught:
        interrupts.say(f"interrupted before run {interrupts.run_id} started: nothing recorded")
    return outcome


def _print_plan(engine: Engine, run_id: str) -> None:
    """The plan that awaits approval, and its hash, on stderr."""
    from plansmith.execution import PlanReady
    from plansmith.formats import parse_plan_json, render_text

    for event in engine.log.events(run_id):
        if isinstance(event, PlanReady):
            plan = parse_plan_json(json.dumps(event.plan))
            sys.stderr.write(render_text(plan) + "\n")
            sys.stderr.write(f"plan hash: {event.plan_hash}\n")


def _exit_for(state: str, interrupted: int | None = None) -> None:
    """Exit 0 for a run that succeeded; 128 + the signal's number for one a signal
    cancelled (``interrupted``); 8 for one that waits for an answer; else 5."""
    if state == "succeeded":
        return
    if state == "awaiting answer":
        raise typer.Exit(8)
    if interrupted is not None and state == "cancelled":
        raise typer.Exit(interrupted)
    raise typer.Exit(5)


@app.command("run")
@guarded
def run_command(
    domain: Annotated[Path, typer.Argument(help="Domain file.")],
    problem: Annotated[Path, typer.Argument(help="Problem file.")],
    *,
    servers: ServersOpt,
    bindings: BindingsOpt,
    yes: YesOpt = False,
    max_parallel: ParallelOpt = 8,
    as_json: JsonOpt = False,
    approve_tiers: PolicyOpt = "write,execute",
    home: HomeOpt = Path(".plansmith"),
    log: LogOpt = None,
    executor: ExecutorOpt = "local",
    scheduler: SchedulerOpt = None,
    lease_ttl: LeaseTtlOpt = 30.0,
    costs: Annotated[
        Literal["declared", "learned"],
        typer.Option(
            "--costs",
            help="action costs: as the domain declares them, or learned from the run log"
            " of --home (expected duration over success rate; the declared cost until an"
            " action has calls). The run records them: its resume and replans use them.",
        ),
    ] = "declared",
    after: Annotated[
        str | None,
        typer.Option(
            "--after",
            metavar="RUN_ID",
            help="follow up this finished run (of the same domain): plan from its final"
            " state; the steps read its outputs by reference, and its steps are not"
            " called again. The new run records it (`plansmith show` says `after:`).",
        ),
    ] = None,
) -> None:
    """Plan, bind, approve and run. Stops at `awaiting approval` (exit 6) unless --yes or
    the policy allows the plan. With --after RUN_ID, a follow-up of that run.

    Ctrl-C (SIGINT) or SIGTERM cancels the run: it is recorded cancelled and its tool
    servers are stopped; a second one says what it waits for, a third quits at once.

    Exit codes: 0 succeeded; 2 bad input; 3 no plan exists; 4 a planning limit was
    reached; 5 the run failed, or could not be carried out (a server did not start, the
    run log or --home cannot be written); 6 awaiting approval; 7 another engine drives the
    run; 130 cancelled by Ctrl-C (SIGINT); 143 cancelled by SIGTERM."""
    from plansmith.engine import RunInputs
    from plansmith.execution import ApprovalPolicy

    try:  # before the run log is opened: a bad option leaves nothing behind
        policy = ApprovalPolicy.parse(approve_tiers)
    except InputError as error:  # it names the unknown words, with a hint
        raise InputError(f"--approve-tiers: {error.message}", hint=error.hint) from None
    engine = open_engine(home, log=log, executor=executor, scheduler=scheduler, lease_ttl=lease_ttl)
    inputs = RunInputs(domain, problem, servers, bindings)
    run_id = engine.new_run_id()
    learned: dict[str, float] | None = None
    if costs == "learned":
        from plansmith.cli._costs import cost_lines
        from plansmith.engine import load_problem_files
        from plansmith.execution import learned_cost_table

        found = engine.learned_costs(load_problem_files(domain, problem))
        for line in cost_lines(found):
            sys.stderr.write(line + "\n")
        learned = learned_cost_table(found)

    async def go(sink: Callable[[object], None]) -> object:
        return await engine.run(
            inputs,
            approve=yes,
            approver=cli_person() if yes else "",
            policy=policy,
            max_parallel=max_parallel,
            subscribe=sink,
            run_id=run_id,
            costs=learned,
            after=after,
        )

    go_on(engine, run_id, as_json, go, show_plan=True)


@app.command("resume")
@guarded
def resume_command(
    run_id: Annotated[str, typer.Argument(help="The run to continue.")],
    yes: YesOpt = False,
    max_parallel: ParallelOpt = 8,
    as_json: JsonOpt = False,
    home: HomeOpt = Path(".plansmith"),
    log: LogOpt = None,
    executor: ExecutorOpt = "local",
    scheduler: SchedulerOpt = None,
    lease_ttl: LeaseTtlOpt = 30.0,
) -> None:
    """Continue a run after a crash or an approval: finished steps are not called again.
    A run that has finished is not run again (exit 0 if it succeeded, else 5).

    Ctrl-C (SIGINT) or SIGTERM cancels the run, as in `plansmith run`.

    Exit codes: 0 succeeded; 2 bad input (no such run, no run log, its files missing);
    5 the run failed or was cancelled, or could not be carried out (a server did not
    start, no plan bound); 6 awaiting approval (add --yes); 7 another engine drives the
    run; 130 cancelled by Ctrl-C (SIGINT); 143 cancelled by SIGTERM."""
    engine, view = existing_run(
        run_id, home=home, log=log, executor=executor, scheduler=scheduler, lease_ttl=lease_ttl
    )
    try:
        changed = engine.changed_inputs(run_id) if view.finished is None else ()
    except BaseException:
        engine.close()
        raise
    for file in changed:  # a file that is gone: the resume says so (exit 2)
        if file.now is not None:
            typer.echo(
                f"warning: run {run_id}: its {file.kind} file {file.path} changed since the"
                f" run began: {file.meaning}",
                err=True,
            )
    if view.finished is not None:  # nothing to continue: say so
        engine.close()
        why = f" ({shown(view.reason, run_id)})" if view.reason else ""
        new = "" if view.finished == "succeeded" else "; `plansmith run` starts a new run"
        typer.echo(
            f"run {run_id} had already finished: {view.finished}{why}: nothing to resume{new}",
            err=True,
        )
        _exit_for(view.finished)
        return

    async def go(sink: Callable[[object], None]) -> object:
        return await engine.resume(
            run_id,
            approve=yes,
            approver=cli_person() if yes else "",
            max_parallel=max_parallel,
            subscribe=sink,
        )

    go_on(engine, run_id, as_json, go, view)


def existing_run(
    run_id: str,
    *,
    home: Path,
    log: str | None,
    executor: str,
    scheduler: str | None,
    lease_ttl: float,
) -> tuple[Engine, RunView]:
    """The engine of an existing run log, and the run's view from it (the engine closed
    if the run cannot be read)."""
    from plansmith.execution import RunView

    engine = open_engine(
        home, log=log, executor=executor, scheduler=scheduler, lease_ttl=lease_ttl, existing=True
    )
    try:
        return engine, RunView.fold(engine.log.events(run_id), run_id)
    except BaseException:
        engine.close()
        raise


def go_on(
    engine: Engine,
    run_id: str,
    as_json: bool,
    go: Callable[[Callable[[object], None]], Awaitable[object]],
    view: RunView | None = None,
    *,
    show_plan: bool = False,
) -> None:
    """Drive ``go`` (a run, or a resume, retry or approval of ``run_id`` with its
    ``view``) with the live view or JSON lines, stopped by signals; close the engine and
    exit as the run ended. ``show_plan``: a plan that awaits approval is printed."""
    with Interrupts(engine, run_id) as interrupts:  # until the log is closed
        try:
            outcome = _drive(interrupts, as_json, go, view)
        except ApprovalRequiredError:
            if show_plan:
                _print_plan(engine, run_id)
            raise
        finally:
            engine.close()
    state = getattr(outcome, "state", "cancelled")
    if state == "awaiting answer":
        waiting = getattr(outcome, "run_id", run_id)
        sys.stderr.write(
            f"run {waiting}: {getattr(outcome, 'reason', '')}; answer with"
            f" `plansmith answer {waiting} STEP VALUE` (`plansmith show {waiting}` shows"
            " the question)\n"
        )
    _exit_for(state, interrupts.exit_code)


@app.command("replay")
@guarded
def replay_command(
    run_id: Annotated[str, typer.Argument(help="The run to replay offline.")],
    home: HomeOpt = Path(".plansmith"),
    log: LogOpt = None,
) -> None:
    """Re-run a recorded run offline against its recorded outputs; prints its events,
    then says on stderr whether each step's events are the recorded ones.

    Exit codes: 0 as recorded; 2 no such run or run log; 5 the replay differs from the
    record, or cannot be made."""
    from plansmith.execution import step_histories

    engine = open_engine(home, log=log, existing=True, read_only=True)
    try:
        replayed = anyio.run(lambda: engine.replay(run_id, subscribe=_json_line))
        recorded = step_histories(engine.log.events(run_id))
    finally:
        engine.close()
    again = step_histories(replayed)
    parts = sum(e.type == "RunStarted" for e in replayed)
    if again != recorded:
        keys = recorded.keys() | again.keys()
        steps = sorted(s for s in keys if s and recorded.get(s) != again.get(s))
        where = f"step(s) {', '.join(steps)}" if steps else "the run's own events"
        raise ExecutionError(
            f"the replay of run {run_id} differs from its record in {where}",
            hint=f"compare `plansmith show {run_id}` with the events printed above",
        )
    said = (
        f"in {parts} part(s); each step's events as recorded"
        if parts
        else "; no step ran (the run never started), as recorded"
    )
    typer.echo(
        f"replayed run {run_id}: {len(replayed)} events{' ' if parts else ''}{said}", err=True
    )


# ``runs`` and ``show`` live in their own module; importing this one registers them too
from plansmith.cli import _show  # noqa: E402, F401
