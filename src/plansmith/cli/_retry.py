"""``plansmith retry | approve | answer``: go on with a failed run, approve a plan by its
hash, answer the question an ask step waits on."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from plansmith.cli._app import app, guarded
from plansmith.cli._check import HomeOpt
from plansmith.cli._engine_options import (
    ExecutorOpt,
    LeaseTtlOpt,
    LogOpt,
    SchedulerOpt,
)
from plansmith.cli._person import cli_person
from plansmith.cli._run import JsonOpt, ParallelOpt, YesOpt, existing_run, go_on

__all__: list[str] = []


@app.command("retry")
@guarded
def retry_command(
    run_id: Annotated[str, typer.Argument(help="The failed or cancelled run to go on with.")],
    yes: YesOpt = False,
    max_parallel: ParallelOpt = 8,
    as_json: JsonOpt = False,
    home: HomeOpt = Path(".plansmith"),
    log: LogOpt = None,
    executor: ExecutorOpt = "local",
    scheduler: SchedulerOpt = None,
    lease_ttl: LeaseTtlOpt = 30.0,
) -> None:
    """Go on with a run that failed or was cancelled, once its cause is fixed: the steps
    that succeeded are not called again; those that failed (or were cancelled in flight)
    run again with their idempotency keys, with the servers, bindings and environment of
    now. The plan is the one approved. `RunRetried` in the log says who retried it.

    Exit codes: 0 succeeded; 2 bad input (no such run, its files missing); 5 the run
    failed again or was cancelled, or cannot be retried (it has not finished: resume
    it; it succeeded); 6 awaiting approval (add --yes); 7 another engine drives the run;
    130/143 cancelled by SIGINT/SIGTERM."""
    engine, view = existing_run(
        run_id, home=home, log=log, executor=executor, scheduler=scheduler, lease_ttl=lease_ttl
    )
    by = cli_person()

    async def go(sink: Callable[[object], None]) -> object:
        return await engine.retry(
            run_id, by=by, approve=yes, max_parallel=max_parallel, subscribe=sink
        )

    go_on(engine, run_id, as_json, go, view)


@app.command("approve")
@guarded
def approve_command(
    run_id: Annotated[str, typer.Argument(help="The run that awaits approval.")],
    plan_hash: Annotated[
        str, typer.Argument(help="The hash of the plan you approve (`plansmith show RUN_ID`).")
    ],
    max_parallel: ParallelOpt = 8,
    as_json: JsonOpt = False,
    home: HomeOpt = Path(".plansmith"),
    log: LogOpt = None,
    executor: ExecutorOpt = "local",
    scheduler: SchedulerOpt = None,
    lease_ttl: LeaseTtlOpt = 30.0,
) -> None:
    """Approve the plan of a run by its hash, and run it: any other hash is refused
    (exit 2) and nothing is recorded. The log records you (`cli:LOGIN`) as the approver.

    Exit codes as `plansmith resume`."""
    engine, view = existing_run(
        run_id, home=home, log=log, executor=executor, scheduler=scheduler, lease_ttl=lease_ttl
    )
    by = cli_person()

    async def go(sink: Callable[[object], None]) -> object:
        return await engine.approve(
            run_id, plan_hash, by=by, max_parallel=max_parallel, subscribe=sink
        )

    go_on(engine, run_id, as_json, go, view)


@app.command("answer")
@guarded
def answer_command(
    run_id: Annotated[str, typer.Argument(help="The run that waits for an answer.")],
    step: Annotated[str, typer.Argument(help="The ask step that waits (`plansmith show RUN`).")],
    value: Annotated[str, typer.Argument(help="Your answer: a choice, yes/no, a number or text.")],
    record_only: Annotated[
        bool,
        typer.Option("--record-only", help="Record the answer; the run goes on when next resumed."),
    ] = False,
    max_parallel: ParallelOpt = 8,
    as_json: JsonOpt = False,
    home: HomeOpt = Path(".plansmith"),
    log: LogOpt = None,
    executor: ExecutorOpt = "local",
    scheduler: SchedulerOpt = None,
    lease_ttl: LeaseTtlOpt = 30.0,
) -> None:
    """Answer the question an ask step of a run waits on (`awaiting answer`), and go on
    with the run from it. The answer is read by the question's type (`yes`/`no`, a
    number, one of the choices) and checked against its schema: one it refuses is exit 2,
    with the reason, and the run keeps waiting. The log records the answer, you
    (`cli:LOGIN`) and the time.

    Exit codes as `plansmith resume`; 8 the run waits for another answer."""
    engine, _ = existing_run(
        run_id, home=home, log=log, executor=executor, scheduler=scheduler, lease_ttl=lease_ttl
    )
    try:
        answer = engine.record_answer(run_id, step, value, by=cli_person(), as_text=True)
    except BaseException:
        engine.close()
        raise
    if not as_json:
        typer.echo(f"run {run_id}: step {step} answered {answer!r}", err=True)
    if record_only:
        engine.close()
        return
    from plansmith.execution import RunView

    view = RunView.fold(engine.log.events(run_id), run_id)

    async def go(sink: Callable[[object], None]) -> object:
        return await engine.resume(run_id, max_parallel=max_parallel, subscribe=sink)

    go_on(engine, run_id, as_json, go, view)
