"""Child process for the journal tests: a writer of the SQLite run log whose catch-up
thresholds are set here, so that the test can kill it between a flush and a catch-up.

  log DB RUN_ID N OWNER      take RUN_ID's lease as OWNER, flush N events one at a time
                             (never caught up), print ``flushed SEQ`` after each, then
                             wait on stdin (the test kills it)
  churn DB RUNS EVENTS ROWS BYTES EVERY
                             RUNS runs ``c-0`` ... of EVENTS events (the last RunFinished),
                             one flush each, caught up every ROWS rows, the journal renewed
                             past BYTES; after every EVERY events, print ``paused RUN SEQ``
                             and wait for a line on stdin; print ``done``
  engine HOME RUN_ID FILES   run a plan with the engine, never caught up before its end,
                             and print one JSON line per event
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio

import plansmith.execution._log as log_module
from plansmith.engine import Engine, RunInputs
from plansmith.execution import (
    Emitter,
    Event,
    PlanReady,
    RunFinished,
    SqliteRunLog,
    StepSucceeded,
)


def log_mode(db: str, run_id: str, n: int, owner: str) -> None:
    log_module.CATCH_UP_ROWS = 10**9
    log_module.CATCH_UP_SECONDS = 1e9
    log = SqliteRunLog(db)
    lease = log.acquire(run_id, owner, 600.0)
    assert lease is not None
    assert lease.owner == owner
    log.create_run(run_id, "2026-01-01T00:00:00.000Z", {})
    emitter = Emitter(log, run_id)
    emitter.emit(PlanReady(run_id=run_id, plan_hash="h"))
    print("flushed 1", flush=True)
    for k in range(2, n + 1):
        emitter.emit(StepSucceeded(run_id=run_id, step=f"s{k}", action="work", args=(f"i{k}",)))
        print(f"flushed {k}", flush=True)
    sys.stdin.readline()  # killed here


def churn_mode(db: str, runs: int, events: int, rows: int, size: int, every: int) -> None:  # noqa: PLR0917
    log_module.CATCH_UP_ROWS = rows
    log_module.ROTATE_BYTES = size
    log_module.CATCH_UP_SECONDS = 1e9
    log = SqliteRunLog(db)
    for r in range(runs):
        run_id = f"c-{r}"
        log.create_run(run_id, f"2026-01-01T00:00:{r:02d}.000Z", {})
        emitter = Emitter(log, run_id)
        emitter.emit(PlanReady(run_id=run_id, plan_hash="h"))
        for k in range(2, events):
            emitter.emit(StepSucceeded(run_id=run_id, step=f"s{k}", action="work"))
            if k % every == 0:
                print(f"paused {run_id} {k}", flush=True)
                sys.stdin.readline()
        emitter.emit(RunFinished(run_id=run_id, state="succeeded"))
    log.close()
    print("done", flush=True)


def engine_mode(home: str, run_id: str, files: list[str]) -> None:
    log_module.CATCH_UP_ROWS = 10**9
    log_module.CATCH_UP_SECONDS = 1e9
    engine = Engine(home)
    inputs = RunInputs(*(Path(f) for f in files))

    def show(event: Event) -> None:
        sys.stdout.write(json.dumps(event.to_dict()) + "\n")
        sys.stdout.flush()

    async def go() -> None:
        await engine.run(inputs, approve=True, subscribe=show, run_id=run_id, max_parallel=1)

    anyio.run(go)


def main() -> None:
    mode, *args = sys.argv[1:]
    if mode == "log":
        log_mode(args[0], args[1], int(args[2]), args[3])
    elif mode == "churn":
        churn_mode(*args[:1], *(int(a) for a in args[1:6]))  # type: ignore[arg-type]
    else:
        engine_mode(args[0], args[1], args[2:])


if __name__ == "__main__":
    main()
