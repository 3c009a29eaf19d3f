"""Replay: a recorded run again, offline, against its recorded outcomes."""

from __future__ import annotations

from collections.abc import Callable

from plansmith.engine._inputs import Subscriber
from plansmith.errors import ExecutionError, Location
from plansmith.execution import (
    ApprovalPolicy,
    Emitter,
    Event,
    MemoryRunLog,
    PartEnd,
    RecordedPart,
    ReplayInvoker,
    RunLog,
    Runner,
    ToolCall,
    fold,
    recorded_asker,
    recorded_parts,
    replay_env,
    replay_replan,
)

__all__ = ["replay_run"]


async def replay_run(
    log: RunLog,
    run_id: str,
    make_runner: Callable[..., Runner],
    subscribe: Subscriber | None = None,
) -> list[Event]:
    """Run the recorded run again offline against its recorded outcomes: each part of
    it (one per engine that drove it: the first run, each resume or take-over) from
    the log as that engine found it, ended where the record ends it (a killed
    engine's part stops there, a cancelled one is cancelled with its reason). It does
    not depend on this process's environment: ``${env.NAME}`` is rendered as its own
    text (``replay_env``), as no tool is called. Raises
    ``ExecutionError`` when the replay calls an attempt the record has no outcome
    for in a part that finished (the log is not this plan's, or is damaged)."""
    events = log.events(run_id)
    memory = MemoryRunLog()
    memory.create_run(run_id, "", {})
    emitter = Emitter(memory, run_id)
    if subscribe is not None:
        emitter.subscribe(subscribe)
    for part in recorded_parts(events):
        for event in part.before:
            emitter.emit(event)
        if part.events:
            await _replay_part(
                log, run_id, events, part=part, emitter=emitter, make_runner=make_runner
            )
    return memory.events(run_id)


async def _replay_part(
    log: RunLog,
    run_id: str,
    events: list[Event],
    *,
    part: RecordedPart,
    emitter: Emitter,
    make_runner: Callable[..., Runner],
) -> None:
    state = fold(run_id, part.prefix)  # the log as the part's engine found it
    if state.bound is None:
        raise ExecutionError(f"run {run_id} has no plan to replay")
    strays: list[ToolCall] = []
    finished = part.ending == "finished"

    def unrecorded(call: ToolCall) -> None:
        if finished:  # every call of a finished part ended: this one is not the record's
            strays.append(call)
            runner.halt()

    runner = make_runner(  # offline: the recorded replans, whatever their tiers
        state,
        emitter,
        ReplayInvoker(log, part.events, unrecorded=unrecorded),
        max_parallel=part.peak,  # as many in flight as the part had, no more
        replan=replay_replan(events),
        policy=ApprovalPolicy(frozenset()),
        env=replay_env(events),  # not this machine's: the replay calls no tool
        asker=recorded_asker(part.events),  # the answers recorded: nobody is asked
    )
    if not finished:
        reason = part.reason
        stop = runner.halt if part.ending == "stopped" else lambda: runner.cancel(reason)
        end = PartEnd(part, stop)
        emitter.subscribe(end)
    try:
        await runner.run()
    finally:
        if not finished:
            emitter.subscribers.remove(end)
    if strays:
        call = strays[0]
        raise ExecutionError(
            f"cannot replay run {run_id}: the replay called attempt {call.attempt} of"
            f" step {call.step}, which the recorded run has no outcome for",
            location=Location(step=call.step),
            hint="the run log does not hold this run's whole history (damaged, or"
            " written by another version of plansmith)",
        )
