"""``plansmith runs | show``: the runs of a log, and one run as its view tells it."""

# The engine imports the MCP SDK (about 0.6 s of CPU); commands import it lazily so that
# `plansmith --help` and the planning commands stay fast.

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from plansmith.cli._app import app, guarded
from plansmith.cli._check import HomeOpt
from plansmith.cli._engine_options import (
    LogOpt,
    open_engine,
)
from plansmith.cli._live import make_console
from plansmith.cli._printable import printable
from plansmith.errors import PlansmithError

if TYPE_CHECKING:
    from plansmith.execution import RunView, StepView
    from plansmith.model import JSONValue

from plansmith.cli._run import _compact

__all__: list[str] = []


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
    from plansmith.execution import RunView

    engine = open_engine(home, log=log, existing=True, read_only=True)
    rows: list[dict[str, str | int | None]] = []
    unreadable: list[str] = []
    try:
        infos = engine.log.runs()
        shown = infos[-limit:] if limit else infos
        for info in shown:
            row: dict[str, str | int | None] = {"run_id": info.run_id, "created": info.created}
            try:
                view = RunView.fold(engine.log.events(info.run_id), info.run_id)
                what = view.log_errors[0] if view.log_errors else None
            except PlansmithError as error:  # one damaged run: the others are listed
                what = str(error).splitlines()[0]  # located, without the hint
            if what is not None:
                row |= {"state": "unreadable", "steps_done": None, "error": what}
                unreadable.append(f"run {info.run_id} is unreadable: {printable(what)}")
            else:
                awaiting = view.plan_hash is not None and view.approved is None
                status = view.finished or (
                    "awaiting approval"
                    if awaiting
                    else "awaiting answer"
                    if view.state == "awaiting answer"
                    else "unfinished"
                )
                counts = view.counts()  # done: succeeded, or skipped (a value was absent)
                row |= {"state": status, "steps_done": counts["succeeded"] + counts["skipped"]}
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
    as_view: Annotated[
        bool,
        typer.Option(
            "--view",
            help="The run view (every face's one fold of the events: docs/events.md) as one"
            " JSON line on stdout, with outputs kept in the blob store given in full.",
        ),
    ] = False,
) -> None:
    """What ran, timings, outputs, failures and replans of one run, and the steps it
    left without an end (in flight when it was cancelled, or when its engine stopped).

    Exit codes: 0 shown; 2 no such run or run log; 5 the run's events cannot be read, or
    (--json, --view) a value in the blob store is missing."""
    from plansmith.execution import RunView, StepState, unpack

    engine = open_engine(home, log=log, existing=True, read_only=True)
    try:
        events = engine.log.events(run_id)
        if as_json:  # every line made before any is written: a missing blob writes none
            lines = [
                _compact({k: unpack(engine.log, v) for k, v in e.to_dict().items()}) for e in events
            ]
            sys.stdout.writelines(lines)
            return
        view = RunView.fold(events, run_id)
        if as_view:
            data = view.to_dict()
            for step in data["steps"]:
                step["outputs"] = unpack(engine.log, step["outputs"])
            sys.stdout.write(_compact(data))
            return
    finally:
        engine.close()
    table = Table("step", "action", "server/tool", "attempt", "ms", "outcome")
    for _, cells in sorted(_show_rows(view), key=lambda row: row[0]):
        table.add_row(*cells)
    for step in view.steps.values():
        if step.state in (StepState.RUNNING, StepState.CANCELLED):
            table.add_row(*_open_row(step, view))
    console = make_console()
    for line in _lineage(view):
        console.print(escape(line))
    console.print(table)
    console.print(escape(_how_it_stands(view)))


def _lineage(view: RunView) -> list[str]:
    """A follow-up run's first lines: the run it follows up (``after: RUN``), and the
    outputs of earlier runs its steps read (not called again)."""
    from plansmith.engine import after_of, inherited_reads

    after = after_of(view.inputs)
    if after is None:
        return []
    lines = [f"after: {after} (a follow-up: planned from the final state of run {after})"]
    for producer, readers in inherited_reads(view.run.bound).items():
        lines.append(f"  inherited: {producer}, read by {', '.join(readers)} (not called again)")
    return lines


def _show_rows(view: RunView) -> list[tuple[int, list[str]]]:
    """``show``'s rows of what ended, by the seq of their event: each attempt that ended
    (outputs or error), each retry, each replan."""
    from plansmith.execution import StepState, is_blob_ref

    rows: list[tuple[int, list[str]]] = []
    for step in view.steps.values():
        where = f"{step.server}/{step.tool}"
        for retry in step.retries:  # the next attempt follows, with no start event
            cells = _cells(step.id, step.call, where, str(retry.attempt))
            outcome = f"[yellow]retry[/] {_cell(retry.error_class)}: {_detail(retry.message)}"
            rows.append((retry.seq, [*cells, "", outcome]))
        if step.ended_seq is None or step.state is StepState.CANCELLED:
            continue  # no end of its own (a damaged log's end is shown all the same)
        if step.error_class is not None:
            outcome = f"[red]{_cell(step.error_class or '')}[/]: {_detail(step.message or '')}"
        elif step.state is StepState.SKIPPED:  # no call: a value it reads is absent
            outcome = f"[cyan]skipped[/]: {_detail(step.message or '')}"
        elif is_blob_ref(step.outputs):
            outcome = escape("in the blob store (show --json gives them in full)")
        else:
            outputs = json.dumps(step.outputs, ensure_ascii=False)
            outcome = escape(printable(outputs, _OUTPUTS, whole=_WHOLE))
        cells = _cells(step.id, step.call, where, str(step.attempts))
        ms = "" if step.state is StepState.SKIPPED else f"{step.duration_ms or 0.0:.1f}"
        rows.append((step.ended_seq, [*cells, ms, outcome]))
    for replan in view.replans:
        without = f"without {_cell(', '.join(replan.failed))}"
        rows.append((replan.seq, ["", "[cyan]replanned[/]", "", "", "", without]))
    return rows


def _open_row(step: StepView, view: RunView) -> list[str]:
    """A step started (or to be tried again after a retry) with no end of its own."""
    from plansmith.execution import StepState, elapsed_ms

    stopped = step.ended if step.state is StepState.CANCELLED else view.ended
    ms = elapsed_ms(step.attempt_started, stopped) if stopped is not None else None
    if step.state is StepState.CANCELLED:
        outcome = "[yellow]cancelled[/] with the run"
    elif view.finished is not None:
        outcome = "[yellow]no end recorded[/]"
    else:
        outcome = "[yellow]started, no end yet[/]"
    attempt = step.attempts + 1 if step.retrying else step.attempts
    return [
        *_cells(step.id, step.call, f"{step.server}/{step.tool}", str(attempt)),
        "" if ms is None else f"{ms:.1f}",
        outcome,
    ]


def _described(answer: dict[str, JSONValue]) -> str:
    """An answer schema's JSON as people read it (``one of: all, top5``)."""
    from plansmith.model import answer_schema_from_json

    try:
        return answer_schema_from_json(answer).describe()
    except PlansmithError:
        return "see the run's AwaitingAnswer event"


def _how_it_stands(view: RunView) -> str:
    """``show``'s last line: how the run ended, or what it waits for."""
    from plansmith.engine import made_from_files

    run_id = view.run_id
    if view.finished is not None:
        first, _, rest = (view.reason or "").partition("\n")
        reason = f" ({printable(first.removesuffix(':'), whole=_WHOLE)})" if first else ""
        if rest:  # the lines below it: each problem of a failed replan, say
            rest = ":\n" + printable(rest, _REASON_REST, lines=_REASON_LINES, whole=_WHOLE)
        return f"run {run_id}: {view.finished}{reason}{rest}"
    if view.state == "awaiting answer":
        waiting = view.run.awaiting_answer.values()
        return "\n".join(
            f"run {run_id}: step {a.step} ({a.action}) waits for an answer: "
            + printable(a.question, whole=_WHOLE)
            + f"\n  answer it: plansmith answer {run_id} {a.step} VALUE"
            + f" ({_described(a.answer)})"
            for a in waiting
        )
    if view.state == "awaiting approval":
        if view.created is not None and not made_from_files(view.inputs):
            return (
                f"run {run_id}: awaiting approval of plan {view.plan_hash}; it was made"
                " from a plan (Engine.run_plan), not from files, and cannot be resumed: run"
                " the plan again with approve=True"
            )
        return (
            f"run {run_id}: awaiting approval of plan {view.plan_hash}: approve with"
            f" `plansmith resume {run_id} --yes`"
        )
    if view.state == "created" and not view.steps and view.cancelled is None:
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
