"""Follow-up runs: a new goal planned from the final symbolic state of a finished run.

A follow-up run records its parent's id (``AFTER_KEY`` of its inputs). Its problem is
its own files' with the initial state replaced by the parent's final state (the parent's
initial state, itself its parent's final state for a follow-up of a follow-up, plus the
effects of its succeeded steps, in the order they ran, replans included). Its plan is
bound with the parent's succeeded steps available as producers, so that its steps read
earlier outputs by reference (``${action(args).output}``, ``${fact(...).output}``)
without calling those tools again: an inherited producer is named ``RUN/STEP`` (the run
that produced it and its step there), and the runner of the follow-up finds its outputs,
read from the parent's log, under that name (``inherit``). Nothing is copied into the
follow-up's log: its views and report name the parent and the inherited producers its
steps read (``inherited_reads``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from plansmith.binding import BoundPlan, BoundStep, StepKey, step_key
from plansmith.engine._inputs import RunInputs, made_from_files
from plansmith.engine._planning import RunContext, load_problem_files
from plansmith.errors import InputError, Location, RunNotFoundError
from plansmith.execution import RunLog, RunState, StepState, current_state, fold
from plansmith.model import JSONValue, State

__all__ = [
    "AFTER_KEY",
    "Inheritance",
    "after_of",
    "inheritance",
    "follow_up_context",
    "recorded_context",
    "inherited_producers",
    "inherit",
    "inherited_reads",
    "producer_id",
    "is_inherited",
]

#: the key of a run's recorded ``inputs`` that names the run it follows up (``Engine.run``'s
#: ``after``): it was planned from that run's final state, and reads its outputs
AFTER_KEY = "after"

#: how many runs a chain of follow-ups may go back (a log edited into a cycle stops here)
_MAX_DEPTH = 1000


def producer_id(run_id: str, step_id: str) -> str:
    """The name of step ``step_id`` of run ``run_id`` as a producer of a follow-up."""
    return f"{run_id}/{step_id}"


def is_inherited(producer: str) -> bool:
    """Whether ``producer`` (a bound step's producer id) is a step of an earlier run."""
    return "/" in producer


def after_of(inputs: Mapping[str, JSONValue]) -> str | None:
    """The run a run's recorded ``inputs`` follow up, or None."""
    after = inputs.get(AFTER_KEY)
    return after if isinstance(after, str) and after else None


@dataclass(frozen=True, slots=True)
class Inheritance:
    """What a follow-up of ``parent`` has of it (and of the runs it follows up).

    ``state``: the parent's final symbolic state; ``available``: each ground action that
    succeeded in the chain, by its ``step_key``, and its producer id (``RUN/STEP``), in
    the order they ran (the last of the same ground action wins); ``outputs``: each such
    producer's outputs as its run's log holds them (blob references unresolved);
    ``domain``: the name of the domain the parent was planned in."""

    parent: str
    state: State
    available: dict[StepKey, str]
    outputs: dict[str, JSONValue]
    domain: str


def inheritance(
    log: RunLog, parent: str, *, domain: str | None = None, with_state: bool = True
) -> Inheritance:
    """What a follow-up of ``parent`` inherits; ``InputError`` when there is no such
    run, it was not made from files, it has not finished, or (``domain`` given) it was
    planned in another domain. Nothing is written. Without ``with_state``, the files
    of the runs are not read: ``state`` is empty and ``domain`` "" (what a follow-up's
    runner needs, the producers and outputs, is all in the log)."""
    return _inheritance(log, parent, domain, 0, with_state)


def _inheritance(
    log: RunLog, parent: str, domain: str | None, depth: int, with_state: bool
) -> Inheritance:
    where = Location(argument="after")
    if not isinstance(parent, str) or not parent:
        raise InputError(
            f"after must be a run id, not {parent!r}",
            location=where,
            hint="name a finished run: `plansmith runs` lists them",
        )
    try:
        info = log.run(parent)
    except RunNotFoundError:
        raise InputError(
            f"run {parent} is not in the run log: there is nothing to follow up",
            location=where,
            hint="name a finished run of this home: `plansmith runs` lists them",
        ) from None
    if not made_from_files(info.inputs):
        raise InputError(
            f"run {parent} was not made from files (a plan or a run maker made it): its"
            " final state cannot be worked out",
            location=where,
            hint="follow up a run started with `plansmith run DOMAIN PROBLEM`",
        )
    state = fold(parent, log.events(parent))
    if state.finished is None:
        raise InputError(
            f"run {parent} has not finished: it has no final state to plan from",
            location=where,
            hint=f"wait for it to end, or go on with it (`plansmith resume {parent}`)",
        )
    if not with_state:
        problem = None
    else:
        files = RunInputs.from_dict(info.inputs)
        problem = load_problem_files(files.domain, files.problem)
    if problem is not None and domain is not None and problem.domain.name != domain:
        raise InputError(
            f"run {parent} is of domain {problem.domain.name!r}, not {domain!r}: a"
            " follow-up plans in its parent's domain",
            location=where,
            hint="name a run of the same domain, or start a new run without --after",
        )
    available: dict[StepKey, str] = {}
    outputs: dict[str, JSONValue] = {}
    grand = after_of(info.inputs)
    if grand is not None:
        if depth >= _MAX_DEPTH:
            raise InputError(
                f"run {parent} follows up more than {_MAX_DEPTH} runs",
                location=where,
                hint="the run log's `after` links make a cycle: start a new run",
            )
        before = _inheritance(log, grand, None, depth + 1, with_state)
        if problem is not None:
            problem = replace(problem, init=before.state)
        available.update(before.available)
        outputs.update(before.outputs)
    succeeded = _succeeded(state)
    for step in succeeded:
        key, pid = step_key(step.step), producer_id(parent, step.id)
        available.pop(key, None)  # the last to run of the same ground action wins
        available[key] = pid
        outputs[pid] = state.outputs.get(step.id)
    if problem is None:
        return Inheritance(parent, frozenset(), available, outputs, "")
    # an ask step's effects are those of its recorded answer
    final = current_state(problem, [s.step for s in succeeded], state.answers)
    return Inheritance(parent, final, available, outputs, problem.domain.name)


def _succeeded(state: RunState) -> list[BoundStep]:
    by_id = {s.id: s for s in state.bound.steps} if state.bound is not None else {}
    return [
        by_id[i] for i in state.order if i in by_id and state.states.get(i) is StepState.SUCCEEDED
    ]


def follow_up_context(log: RunLog, parent: str, ctx: RunContext) -> RunContext:
    """``ctx`` (a follow-up's files loaded) planned from ``parent``'s final state, and
    bound (and rebound by its replans) with ``parent``'s producers available."""
    got = inheritance(log, parent, domain=ctx.problem.domain.name)
    return replace(ctx, problem=replace(ctx.problem, init=got.state), available=got.available)


def recorded_context(log: RunLog, inputs: Mapping[str, JSONValue], ctx: RunContext) -> RunContext:
    """``ctx`` of a run made from files, as a follow-up when its inputs say it is one."""
    parent = after_of(inputs)
    return ctx if parent is None else follow_up_context(log, parent, ctx)


def inherited_producers(log: RunLog, run_id: str) -> dict[StepKey, str]:
    """The producers a follow-up run's plan is bound with ({} for another run)."""
    parent = after_of(log.run(run_id).inputs)
    return {} if parent is None else inheritance(log, parent, with_state=False).available


def inherit(log: RunLog, state: RunState) -> None:
    """Give a follow-up run's state (before its runner runs) the outputs of the earlier
    runs' steps its plan may read, under their producer ids; a run that follows up no
    run is left as it is."""
    parent = after_of(log.run(state.run_id).inputs)
    if parent is None:
        return
    for producer, value in inheritance(log, parent, with_state=False).outputs.items():
        state.outputs.setdefault(producer, value)


def inherited_reads(bound: BoundPlan | None) -> dict[str, list[str]]:
    """The inherited producers a plan's steps read: ``{producer id: [step ids]}``."""
    reads: dict[str, list[str]] = {}
    for step in bound.steps if bound is not None else ():
        for _, producer in step.producers:
            if is_inherited(producer):
                readers = reads.setdefault(producer, [])
                if step.id not in readers:
                    readers.append(step.id)
    return reads
