"""``plansmith run | resume | replay | runs | show``: run plans durably and inspect runs."""

# The engine imports the MCP SDK (about 0.6 s of CPU); commands import it lazily so that
# `plansmith --help` and the planning commands stay fast.

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import anyio
import typer
from rich.markup import escape
from rich.table import Table

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
from plansmith.cli._printable import printable
from plansmith.errors import ApprovalRequiredError, ExecutionError, InputError, PlansmithError

if TYPE_CHECKING:
    from plansmith.engine import Engine
    from plansmith.execution import Event

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
    resumed: tuple[int, int] | None = None,
) -> object | None:
    """Run ``go`` with the JSON lines or the live view, stopped by ``interrupts``: its
    outcome, or None if a signal stopped it before the engine had the run. ``resumed``:
    the steps and those done of a run that is continued (no PlanReady comes to tell
    them)."""
    view = None if as_json else LiveView(make_console(stderr=True))
    sink: Callable[[object], None] = _json_line if view is None else view
    if view is not None:
        if resumed is not None:
            view.resume(*resumed)
        interrupts.say = lambda text: view.console.print(escape(text))
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
    cancelled (``interrupted``); else 5."""
    if state == "succeeded":
        return
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
) -> None:
    """Plan, bind, approve and run. Stops at `awaiting approval` (exit 6) unless --yes or
    the policy allows the plan.

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

    async def go(sink: Callable[[object], None]) -> object:
        return await engine.run(
            inputs,
            approve=yes,
            policy=policy,
            max_parallel=max_parallel,
            subscribe=sink,
            run_id=run_id,
        )

    with Interrupts(engine, run_id) as interrupts:  # until the log is closed
        try:
            outcome = _drive(interrupts, as_json, go)
        except ApprovalRequiredError:
            _print_plan(engine, run_id)
            raise
        finally:
            engine.close()
    _exit_for(getattr(outcome, "state", "cancelled"), interrupts.exit_code)


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
    from plansmith.execution import StepState, fold

    engine = open_engine(
        home,
        log=log,
        executor=executor,
        scheduler=scheduler,
        lease_ttl=lease_ttl,
        existing=True,
    )
    try:
        state = fold(run_id, engine.log.events(run_id))
        changed = engine.changed_inputs(run_id) if state.finished is None else ()
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
    if state.finished is not None:  # nothing to continue: say so
        engine.close()
        why = f" ({shown(state.finished_reason, run_id)})" if state.finished_reason else ""
        new = "" if state.finished == "succeeded" else "; `plansmith run` starts a new run"
        typer.echo(
            f"run {run_id} had already finished: {state.finished}{why}: nothing to resume{new}",
            err=True,
        )
        _exit_for(state.finished)
        return
    done = sum(st is StepState.SUCCEEDED for st in state.states.values())
    # the steps of the plan in force: not those a replan gave up (failed, dropped)
    live = (StepState.SUCCEEDED, StepState.PENDING, StepState.RUNNING)
    total = sum(st in live for st in state.states.values())

    async def go(sink: Callable[[object], None]) -> object:
        return await engine.resume(run_id, approve=yes, max_parallel=max_parallel, subscribe=sink)

    with Interrupts(engine, run_id) as interrupts:  # until the log is closed
        try:
            outcome = _drive(interrupts, as_json, go, (total, done))
        finally:
            engine.close()
    _exit_for(getattr(outcome, "state", "cancelled"), interrupts.exit_code)


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


@app.command("runs")
@guarded
def runs_command(
    home: HomeOpt = Path(".plansmith"),
    log: LogOpt = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=0, help="The newest runs to list; 0: all.")
    ] = 20,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="One JSON line per run on stdout: run_id, created, state, steps_done"
            " (and error, for a run whose events cannot be read).",
        ),
    ] = False,
) -> None:
    """List the newest runs in the run log, oldest of them first.

    Exit codes: 0 listed (a run whose events cannot be read is listed as unreadable); 2 no
    run log there."""
    from plansmith.execution import fold

    engine = open_engine(home, log=log, existing=True, read_only=True)
    rows: list[dict[str, str | int | None]] = []
    unreadable: list[str] = []
    try:
        infos = engine.log.runs()
        shown = infos[-limit:] if limit else infos
        for info in shown:
            row: dict[str, str | int | None] = {"run_id": info.run_id, "created": info.created}
            try:
                state = fold(info.run_id, engine.log.events(info.run_id))
            except PlansmithError as error:  # one damaged run: the others are listed
                what = str(error).splitlines()[0]  # located, without the hint
                row |= {"state": "unreadable", "steps_done": None, "error": what}
                unreadable.append(f"run {info.run_id} is unreadable: {printable(what)}")
            else:
                awaiting = state.bound is not None and state.approved is None
                status = state.finished or ("awaiting approval" if awaiting else "unfinished")
                row |= {"state": status, "steps_done": len(state.order)}
            rows.append(row)
    finally:
        engine.close()
    if not rows:
        typer.echo("no runs in the run log yet", err=True)
        return
    if as_json:
        sys.stdout.writelines(_compact(row) for row in rows)
    else:
        table = Table("run", "created", "state", "steps done")
        for row in rows:
            cells = (row["run_id"], row["created"], row["state"], row["steps_done"])
            table.add_row(*_cells(*("" if cell is None else str(cell) for cell in cells)))
        make_console().print(table)
    for line in unreadable:
        typer.echo(line, err=True)
    if len(shown) < len(infos):
        older = len(infos) - len(shown)
        typer.echo(f"{older} older run(s) not listed: --limit 0 lists all", err=True)


@app.command("show")
@guarded
def show_command(
    run_id: Annotated[str, typer.Argument(help="The run to show.")],
    home: HomeOpt = Path(".plansmith"),
    log: LogOpt = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="The run's recorded events, one JSON line each on stdout (as `run --json`"
            " prints them), with values kept in the blob store given in full.",
        ),
    ] = False,
) -> None:
    """What ran, timings, outputs, failures and replans of one run, and the steps it
    left without an end (in flight when it was cancelled, or when its engine stopped).

    Exit codes: 0 shown; 2 no such run or run log; 5 the run's events cannot be read, or
    (--json) a value in the blob store is missing."""
    from plansmith.execution import (
        Replanned,
        RunCancelled,
        RunFinished,
        StepFailed,
        StepRetrying,
        StepStarted,
        StepSucceeded,
        elapsed_ms,
        is_blob_ref,
        unpack,
    )

    engine = open_engine(home, log=log, existing=True, read_only=True)
    try:
        events = engine.log.events(run_id)
        if as_json:  # every line made before any is written: a missing blob writes none
            lines = [
                _compact({k: unpack(engine.log, v) for k, v in e.to_dict().items()}) for e in events
            ]
            sys.stdout.writelines(lines)
            return
    finally:
        engine.close()
    console = make_console()
    table = Table("step", "action", "server/tool", "attempt", "ms", "outcome")
    # started (or to be tried again after a retry), no end yet: the event, the attempt
    open_steps: dict[str, tuple[StepStarted | StepRetrying, int]] = {}
    stopped: RunCancelled | RunFinished | None = None  # what ended the run
    for e in events:
        if isinstance(e, StepStarted):
            open_steps[e.step] = (e, e.attempt)
        elif isinstance(e, StepSucceeded):
            open_steps.pop(e.step, None)
            if is_blob_ref(e.outputs):
                short = "in the blob store (show --json gives them in full)"
            else:
                outputs = json.dumps(e.outputs, ensure_ascii=False)
                short = printable(outputs, _OUTPUTS, whole=_WHOLE)
            table.add_row(
                *_cells(e.step, e.call, f"{e.server}/{e.tool}", str(e.attempt)),
                f"{e.duration_ms:.1f}",
                escape(short),
            )
        elif isinstance(e, StepFailed):
            open_steps.pop(e.step, None)
            table.add_row(
                *_cells(e.step, e.call, f"{e.server}/{e.tool}", str(e.attempt)),
                f"{e.duration_ms:.1f}",
                f"[red]{_cell(e.error_class)}[/]: {_detail(e.message)}",
            )
        elif isinstance(e, StepRetrying):  # the next attempt follows, with no start event
            open_steps[e.step] = (e, e.attempt + 1)
            table.add_row(
                *_cells(e.step, e.call, f"{e.server}/{e.tool}", str(e.attempt)),
                "",
                f"[yellow]retry[/] {_cell(e.error_class)}: {_detail(e.message)}",
            )
        elif isinstance(e, Replanned):
            table.add_row(
                "", "[cyan]replanned[/]", "", "", "", f"without {_cell(', '.join(e.failed))}"
            )
        elif isinstance(e, RunCancelled | RunFinished) and stopped is None:
            stopped = e
    for e, attempt in open_steps.values():
        ms = elapsed_ms(e.time, stopped.time) if stopped is not None else None
        if isinstance(stopped, RunCancelled):
            outcome = "[yellow]cancelled[/] with the run"
        elif stopped is not None:
            outcome = "[yellow]no end recorded[/]"
        else:
            outcome = "[yellow]started, no end yet[/]"
        table.add_row(
            *_cells(e.step, e.call, f"{e.server}/{e.tool}", str(attempt)),
            "" if ms is None else f"{ms:.1f}",
            outcome,
        )
    console.print(table)
    console.print(escape(_how_it_stands(run_id, events)))


def _how_it_stands(run_id: str, events: list[Event]) -> str:
    """``show``'s last line: how the run ended, or what it waits for."""
    from plansmith.engine import made_from_files
    from plansmith.execution import AwaitingApproval, PlanApproved, RunCreated, RunFinished

    finished = [e for e in events if isinstance(e, RunFinished)]
    if finished:
        last = finished[-1]
        first, _, rest = (last.reason or "").partition("\n")
        reason = f" ({printable(first.removesuffix(':'), whole=_WHOLE)})" if first else ""
        if rest:  # the lines below it: each problem of a failed replan, say
            rest = ":\n" + printable(rest, _REASON_REST, lines=_REASON_LINES, whole=_WHOLE)
        return f"run {run_id}: {last.state}{reason}{rest}"
    asked = [e for e in events if isinstance(e, AwaitingApproval | PlanApproved)]
    if asked and isinstance(asked[-1], AwaitingApproval):
        created = next((e for e in events if isinstance(e, RunCreated)), None)
        if created is not None and not made_from_files(created.inputs):
            return (
                f"run {run_id}: awaiting approval of plan {asked[-1].plan_hash}; it was made"
                " from a plan (Engine.run_plan), not from files, and cannot be resumed: run"
                " the plan again with approve=True"
            )
        return (
            f"run {run_id}: awaiting approval of plan {asked[-1].plan_hash}: approve with"
            f" `plansmith resume {run_id} --yes`"
        )
    if all(isinstance(e, RunCreated) for e in events):
        return (
            f"run {run_id}: not finished, and no plan bound yet (its engine is starting its"
            " tool servers, or stopped before it could: then `plansmith run` starts a new run)"
        )
    return (
        f"run {run_id}: not finished (if its engine stopped, `plansmith resume {run_id}`"
        " continues it)"
    )


# what ``show`` prints of a tool's or a server's text: the rest is in ``show --json``
_WHOLE = "show --json gives it in full"
#: of the lines of a run's reason below its first (a failed replan's problems, two lines each)
_REASON_REST, _REASON_LINES = 8000, 40
_OUTPUTS = 60  # the characters of a step's outputs (as JSON) in their cell
_DETAIL, _DETAIL_LINES = 500, 5  # of a failure's message in its cell


def _cells(*values: str) -> list[str]:
    """Table cells that show ``values`` (from the plan, or from tools: an argument can be
    a tool's output) as they are: shortened, their control characters escaped, and not
    read as markup."""
    return [_cell(value) for value in values]


def _cell(value: str) -> str:
    return escape(printable(value))


def _detail(message: str) -> str:
    """A failure's message in its cell: its first lines."""
    return escape(printable(message, _DETAIL, lines=_DETAIL_LINES, whole=_WHOLE))
