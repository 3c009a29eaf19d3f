"""The runner: one async shell around the pure state table.

It dispatches ready steps under a global limit and a limit per server, wraps
the invoker with timeout, classification and retry, writes every event to the
log before acting on it, replans when a step's retries run out, and cancels
cleanly. It resumes from any prefix of its own log (see ``_states.fold``).

Write-ahead: a step's start is durable before its call, and with it every step end
appended so far (an end is deferred: it is committed with the next start, or by the
flusher with the other events of the same turn of the event loop, and before the run
ends). A chain commits once a step.

(Over 500 lines: the per-step path, ``_attempt`` to ``_dispatch``, is tuned as a whole
against a raw SDK loop, see docs/benchmarks-archive.md, Executor; splitting it would add a call
per step.)
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

import anyio
from anyio.abc import TaskGroup

from plansmith.binding import (
    BoundPlan,
    BoundStep,
    ContextValueError,
    EnvRef,
    FactRef,
    OutputRef,
    ParamRef,
    Ref,
    RunRef,
    extract,
    is_ask_step,
    reads_json,
    ref_text,
    render,
    resolve_context,
    simple_path,
    type_mismatch,
)
from plansmith.errors import (
    AbsentInputError,
    AnswerError,
    ExecutionError,
    PlansmithError,
    ToolCallError,
)
from plansmith.execution._asking import Asker, AskRequest
from plansmith.execution._codec import bound_to_dict
from plansmith.execution._emit import Emitter, JSONish, utc_now
from plansmith.execution._event_fast import step_started, step_succeeded, tool_call
from plansmith.execution._events import (
    AnswerRecorded,
    AwaitingAnswer,
    Event,
    Replanned,
    RunCancelled,
    RunFinished,
    RunStarted,
    StepFailed,
    StepProgress,
    StepRetrying,
    StepSkipped,
    StepStarted,
    StepSucceeded,
)
from plansmith.execution._heap import frozen_heap
from plansmith.execution._invoker import ErrorClass, ToolCall, ToolInvoker, ToolResult
from plansmith.execution._log import RunLog
from plansmith.execution._messages import IN_RESULT, NOT_RECORDED, bounded_message
from plansmith.execution._replan import ReplanFn, ReplanRequest, replan_failure
from plansmith.execution._sendable import check_sendable, unset_env_error
from plansmith.execution._states import (
    RunState,
    StepState,
    apply_event,
    apply_step_started,
    apply_step_succeeded,
)
from plansmith.execution._wrappers import (
    ClassifyingInvoker,
    RetryInvoker,
    Sleep,
    TimeoutInvoker,
    classify_result,
    unasked_cancellation,
)
from plansmith.model import JSONValue, Tier, answer_schema_from_json, check_answer

__all__ = ["AWAITING_ANSWER", "Runner", "RunOutcome", "idempotency_key", "unapproved_tiers"]

#: the outcome (and the view's state) of a run whose ask steps wait for an answer
AWAITING_ANSWER = "awaiting answer"


def idempotency_key(run_id: str, step_id: str) -> str:
    """The same for every attempt of a step, and for a resumed run."""
    return f"{run_id}/{step_id}"


def unapproved_tiers(bound: BoundPlan, covered: frozenset[Tier]) -> tuple[str, ...]:
    """The tiers of ``bound``'s steps outside ``covered``, sorted (a replan's guard)."""
    return tuple(sorted({s.tier.value for s in bound.steps if s.tier not in covered}))


@dataclass(frozen=True, slots=True)
class RunOutcome:
    run_id: str
    state: str
    reason: str | None = None
    outputs: dict[str, JSONValue] = field(default_factory=dict)


class Runner:
    """Runs one run's bound plan; construct it with the run's folded ``RunState``."""

    def __init__(
        self,
        invoker: ToolInvoker,
        log: RunLog,
        state: RunState,
        *,
        max_parallel: int = 8,
        server_limits: Mapping[str, int] | None = None,
        replan: ReplanFn | None = None,
        max_replans: int = 3,
        env: Mapping[str, str] | None = None,
        run_dir: str = "",
        now: Callable[[], datetime] = utc_now,
        monotonic: Callable[[], float] = time.perf_counter,
        sleep: Sleep = anyio.sleep,
        emitter: Emitter | None = None,
        unattended_tiers: frozenset[Tier] = frozenset(),
        asker: Asker | None = None,
    ) -> None:
        if state.bound is None:
            raise ExecutionError(f"run {state.run_id} has no plan to run")
        self.invoker = invoker
        self.state = state
        self.emitter = emitter or Emitter(log, state.run_id, now=now, last_seq=state.last_seq)
        self.max_parallel = max(1, max_parallel)
        self.server_limits = {k: max(1, v) for k, v in (server_limits or {}).items()}
        self.replan = replan
        self.max_replans = max_replans
        self.unattended_tiers = unattended_tiers
        self.asker = asker
        self._waiting: list[str] = []  # ask steps left waiting for an answer
        self._answered: list[str] = []  # ask steps answered otherwise than the plan assumed
        self.env = dict(env or {})
        self.run_dir = run_dir
        self.monotonic = monotonic
        self.sleep = sleep
        self._tg: TaskGroup | None = None
        self._active: set[str] = set()
        self._dispatched: set[str] = set()
        self._queue: list[str] = []
        self._per_server: dict[str, int] = {}
        self._idle = anyio.Event()
        self._cancel_reason: str | None = None
        self._halted = False
        self._scope: anyio.CancelScope | None = None
        # stateless wrappers, shared by every step (a step adds its own RetryInvoker); a
        # step's first attempt calls ``_timed`` or ``invoker`` and classifies inline
        self._timed = TimeoutInvoker(invoker)
        self._classified = ClassifyingInvoker(self._timed)
        self._classified_untimed = ClassifyingInvoker(invoker)  # for steps with no timeout
        self._steps: dict[str, _Step] = {}
        self._flush_wanted = anyio.Event()
        self._flusher_done = False
        self._log_append = self.emitter.log.append

    def emit(self, event: Event, *, defer: bool = False) -> Event:
        """Write ``event`` (``defer``: in the same commit as the next one) and apply it."""
        stamped = self.emitter.emit(event, defer=defer)
        apply_event(self.state, stamped)
        return stamped

    def cancel(self, reason: str = "cancelled") -> None:
        """Stop the run: in-flight calls are cancelled, and the run ends ``cancelled``."""
        self._cancel_reason = reason
        if self._scope is not None:
            self._scope.cancel()

    def halt(self) -> None:
        """Stop as a killed engine stops: in-flight calls are cancelled and the run records
        nothing more (``run`` returns the state ``stopped``). For a replay of a recorded
        run whose engine stopped there."""
        self._halted = True
        if self._scope is not None:
            self._scope.cancel()

    async def run(self) -> RunOutcome:
        with frozen_heap():  # full collections during the run walk only what it made
            return await self._run()

    async def _run(self) -> RunOutcome:
        resumed = any(s is not StepState.PENDING for s in self.state.states.values())
        self.emit(RunStarted(run_id=self.state.run_id, resumed=resumed))
        for step_id, st in self.state.states.items():
            if st is StepState.RUNNING:  # started before a crash: call again, same key
                self.state.states[step_id] = StepState.PENDING
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                if self._cancel_reason is None and not self._halted:
                    await self._loop()
        except (anyio.get_cancelled_exc_class(), KeyboardInterrupt):
            with anyio.CancelScope(shield=True):
                self._finish_cancelled(self._cancel_reason or "the engine was interrupted")
            raise
        except Exception as error:
            cause = _first_cause(error)  # of the task group's group (steps in parallel)
            if isinstance(cause, PlansmithError):  # a located error (the log, a blob): its own
                where = f"{cause.location}: " if cause.location is not None else ""
                reason = where + cause.message
                self.emit(RunFinished(run_id=self.state.run_id, state="failed", reason=reason))
                raise cause from None
            reason = f"internal error: {type(cause).__name__}: {cause}"
            self.emit(RunFinished(run_id=self.state.run_id, state="failed", reason=reason))
            internal = ExecutionError(
                reason,
                hint="not a tool's failure but a fault in the code that calls the tools or"
                " watches the run (plansmith's, or an invoker or view of your own): its"
                " traceback is this error's __cause__; please report it with that",
            )
            internal.__cause__ = cause  # set too: mypyc drops what ``from`` sets
            raise internal from cause
        if self._halted:
            self.emitter.flush()  # what the steps recorded before the stop
            return RunOutcome(self.state.run_id, "stopped", None, self._outputs())
        if self._cancel_reason is not None:
            return self._finish_cancelled(self._cancel_reason)
        if self._waiting and not self.state.failed_pending:
            self.emitter.flush()
            waiting = ", ".join(self._waiting)
            reason = f"step(s) {waiting} wait for an answer"
            return RunOutcome(self.state.run_id, AWAITING_ANSWER, reason, self._outputs())
        return self._finish()

    def _finish_cancelled(self, reason: str) -> RunOutcome:
        self.emit(RunCancelled(run_id=self.state.run_id, reason=reason))
        self.emit(RunFinished(run_id=self.state.run_id, state="cancelled", reason=reason))
        return RunOutcome(self.state.run_id, "cancelled", reason, self._outputs())

    def _outputs(self) -> dict[str, JSONValue]:
        return {k: self.emitter.unpack(v) for k, v in self.state.outputs.items()}

    def _finish(self) -> RunOutcome:
        st = self.state
        if st.failed_pending:
            failed = ", ".join(st.failed_pending)
            reason = self._failure_reason or f"step(s) {failed} failed"
            self.emit(RunFinished(run_id=st.run_id, state="failed", reason=reason))
            return RunOutcome(st.run_id, "failed", reason, self._outputs())
        stuck = [i for i, state in st.states.items() if state is StepState.PENDING]
        if stuck:  # a dependency that can never succeed: not a success
            reason = self._failure_reason or (
                f"step(s) {', '.join(stuck[:5])} could not become ready"
            )
            self.emit(RunFinished(run_id=st.run_id, state="failed", reason=reason))
            return RunOutcome(st.run_id, "failed", reason, self._outputs())
        self.emit(RunFinished(run_id=st.run_id, state="succeeded"))
        return RunOutcome(st.run_id, "succeeded", None, self._outputs())

    _failure_reason: str | None = None

    def _index_plan(self) -> None:
        """Index the plan in force: live steps by id, their positions and dependents."""
        assert self.state.bound is not None
        states = self.state.states
        live = [s for s in self.state.bound.steps if states.get(s.id) is not StepState.DROPPED]
        run_id = self.state.run_id
        static: dict[int, tuple[JSONish, bool]] = {}  # by arguments object, this pass only
        self._steps = steps = {s.step.id: _Step(s, i, run_id, static) for i, s in enumerate(live)}
        for info in steps.values():
            for dep in info.after:
                if dep in steps:
                    steps[dep].dependents.append(info.id)

    def _dispatch(self, candidates: Iterable[str], *, keep_one: bool) -> _Step | None:
        """Queue the ready steps among ``candidates``, then start queued steps while the
        global limit and their server's limit allow. With ``keep_one``, the first step
        to start is returned instead, so that the calling worker runs it next (a chain
        then costs no task switch per step)."""
        st = self.state
        if st.failed_pending or self._answered:
            return None  # wait for the steps in flight, then replan
        steps = self._steps
        dispatched = self._dispatched
        states = st.states
        fresh: list[str] = []
        for c in candidates:  # ``ready_steps`` over the candidates not yet dispatched
            if c in dispatched or states.get(c, _PENDING) is not _PENDING:
                continue
            for dep in steps[c].after:
                done = states.get(dep)
                if done is not _SUCCEEDED and done is not _SKIPPED:
                    break
            else:
                fresh.append(c)
                dispatched.add(c)
        active = self._active
        per_server = self._per_server
        limits = self.server_limits
        queue = self._queue
        if not queue:
            if not fresh:
                return None
            if keep_one and len(fresh) == 1 and len(active) < self.max_parallel:
                # the next step of a chain: the loop below, for one step and no queue
                info = steps[fresh[0]]
                server = info.server
                limit = limits.get(server) if limits else None
                if limit is None or per_server.get(server, 0) < limit:
                    active.add(info.id)
                    per_server[server] = per_server.get(server, 0) + 1
                    return info
        if fresh:
            if len(fresh) > 1 or queue:
                position = self._position
                fresh.sort(key=position)
                if queue:
                    fresh = sorted([*queue, *fresh], key=position)
            self._queue = queue = fresh
        kept: _Step | None = None
        waiting: list[str] = []
        for i, step_id in enumerate(queue):
            if len(active) >= self.max_parallel:
                waiting += queue[i:]  # none of the rest can start: keep them, in order
                break
            info = steps[step_id]
            server = info.server
            limit = limits.get(server) if limits else None
            if limit is not None and per_server.get(server, 0) >= limit:
                waiting.append(step_id)
                continue
            active.add(step_id)
            per_server[server] = per_server.get(server, 0) + 1
            if keep_one and kept is None:
                kept = info
            else:
                assert self._tg is not None
                self._tg.start_soon(self._worker, info)
        self._queue = waiting
        return kept

    def _position(self, step_id: str) -> int:
        """Where ``step_id`` is in the plan (ready steps start in plan order)."""
        return self._steps[step_id].position

    def _flush_soon(self) -> None:
        """Have the flusher commit what is pending once the steps now running yield."""
        if self.emitter.pending and not self._flush_wanted.is_set():
            self._flush_wanted.set()

    async def _flusher(self) -> None:
        """Group commit: the events appended in one turn of the event loop by all the
        steps that ran in it go in one transaction, and their views hear of them."""
        while True:
            await self._flush_wanted.wait()
            if self._flusher_done:
                return
            self._flush_wanted = anyio.Event()
            self.emitter.flush()

    async def _loop(self) -> None:
        self._index_plan()
        self._flusher_done = False
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._flusher)
            try:
                await self._dispatch_rounds()
            except BaseException:
                tg.cancel_scope.cancel()  # the flusher; every worker has ended
                raise
            # Every worker has ended: the flusher returns when it wakes. (Cancelled, it
            # would keep the runner in a reference cycle through its traceback, and the
            # run's events and plan would wait for the garbage collector.)
            self._flusher_done = True
            self._flush_wanted.set()
            self.emitter.flush()

    async def _dispatch_rounds(self) -> None:
        """Run the plan in force; after a replan, run the new one."""
        while True:
            self._active = set()
            self._dispatched = set()
            self._queue = []
            self._per_server = {}
            self._idle = anyio.Event()
            self._dispatch(self._steps, keep_one=False)
            if self._active:
                await self._idle.wait()
            if self.state.failed_pending and await self._try_replan():
                self._index_plan()
                continue
            answered = self._answered and not self.state.failed_pending
            if answered and await self._replan_after_answer():
                self._index_plan()
                continue
            return

    async def _worker(self, first: _Step) -> None:
        current: _Step | None = first
        while current is not None:
            await self._attempt(current)
            self._active.discard(current.id)
            self._per_server[current.server] -= 1
            following = self._dispatch(current.dependents, keep_one=True)
            if following is None:
                self._flush_soon()
            current = following
        if not self._active:
            self._idle.set()

    async def _try_replan(self) -> bool:
        """Ask the replan hook for a new plan (in a worker thread: the event loop, its
        views, signal handlers and ``cancel`` go on while the planner searches; a cancel
        returns at once, and the request's ``should_stop`` tells the search to stop)."""
        st = self.state
        assert st.bound is not None
        failed_ids = [*st.failed_all, *st.failed_pending]
        failures = ", ".join(  # each with its cause: the outcome's reason says why
            f"{step} ({_first_line(st.failures.get(step, 'no reason recorded'))})"
            for step in st.failed_pending
        )
        if self.replan is None:
            self._failure_reason = f"step(s) {failures} failed and replanning is off"
            return False
        if st.replans - st.replans_at_retry >= self.max_replans:
            self._failure_reason = (
                f"step(s) {failures} failed after {st.replans - st.replans_at_retry} replan(s)"
            )
            return False
        what = f"step(s) {failures} failed"
        new = await self._search(failed_ids, what, f"{what} and no other plan reaches the goal")
        if new is None:
            return False
        self.emit(
            Replanned(
                run_id=st.run_id,
                failed=tuple(st.failed_pending),
                reason="; ".join(
                    f"{step} failed ({st.failures.get(step, 'no reason recorded')})"
                    for step in st.failed_pending
                ),
                plan_hash=new.plan_hash,
                bound=bound_to_dict(new),
            )
        )
        return True

    async def _ask(self, info: _Step) -> None:
        """An ask step: its recorded answer, else the asker's (``AnswerRecorded``), else
        it stays pending and the run waits (``AwaitingAnswer``). Answered, it succeeds
        with the output ``answer``; an enum or yes/no answer other than the one the plan
        assumed has the rest planned again from the state it makes (``_answered``)."""
        st = self.state
        bound = info.bound
        step_id = info.id
        arguments = bound.arguments
        if not isinstance(arguments, dict):
            raise ExecutionError(f"step {step_id}: an ask step's arguments are no object")
        schema = answer_schema_from_json(arguments.get("answer"))
        assumed = arguments.get("assumed")
        recorded = st.answers.get(step_id)
        if recorded is None:
            rendered = render(arguments.get("question", ""), self._resolve(bound))
            question = rendered if isinstance(rendered, str) else str(rendered)
            if step_id not in st.awaiting_answer:
                answer = arguments.get("answer")
                self.emit(
                    AwaitingAnswer(
                        run_id=st.run_id,
                        step=step_id,
                        action=info.action,
                        question=question,
                        answer=dict(answer) if isinstance(answer, dict) else {},
                        assumed=assumed,
                    )
                )
                self.emitter.flush()  # a face that lists waiting runs sees it now
            reply = None
            if self.asker is not None:
                request = AskRequest(
                    st.run_id, step_id, info.action, info.args, question, schema, assumed
                )
                reply = await self.asker(request)
            value: JSONValue = None
            if reply is not None:
                value = reply.answer
                if value is None and reply.declined:
                    value = schema.default
                if value is not None:
                    try:
                        value = check_answer(schema, value)
                    except AnswerError:
                        reply = None  # an asker's answer the schema refuses: ask again later
            if reply is None:
                self._waiting.append(step_id)
                return
            self.emit(
                AnswerRecorded(
                    run_id=st.run_id,
                    step=step_id,
                    answer=value,
                    by=reply.by,
                    declined=reply.declined,
                )
            )
            if value is None:
                self._ask_failed(
                    info,
                    f"the question was {reply.declined or 'not answered'} and"
                    f" {info.action} declares no default answer",
                )
                return
            recorded = value
        emitter = self.emitter
        attempt = st.attempts.get(step_id, 0) + 1
        self.emit(emitter.new(StepStarted, attempt=attempt, key=info.key, **_common(bound)))
        self.emit(
            emitter.new(
                StepSucceeded,
                attempt=attempt,
                duration_ms=0.0,
                outputs={"answer": recorded},
                **_common(bound),
            )
        )
        if schema.type in ("enum", "boolean") and recorded != assumed:
            self._answered.append(step_id)

    def _ask_failed(self, info: _Step, message: str) -> None:
        emitter = self.emitter
        attempt = self.state.attempts.get(info.id, 0) + 1
        self.emit(emitter.new(StepStarted, attempt=attempt, key=info.key, **_common(info.bound)))
        self.emit(
            emitter.new(
                StepFailed,
                attempt=attempt,
                error_class=ErrorClass.TOOL_ERROR,
                message=message,
                retryable=False,
                **_common(info.bound),
            )
        )

    async def _search(self, failed: list[str], what: str, none: str) -> BoundPlan | None:
        """The replan hook's new plan without the ground actions of the steps ``failed``,
        from the state the succeeded steps (and the answers) make (in a worker thread:
        the event loop, its views, signal handlers and ``cancel`` go on while the planner
        searches; once the run no longer waits, the request's ``should_stop`` says so),
        or None with the run's failure reason set: ``what`` happened, then why there is
        no plan (``none`` when the hook found none), or that the plan needs tiers the
        approval did not cover."""
        st = self.state
        assert st.bound is not None
        by_id = {s.id: s.step for s in st.bound.steps}
        stop = threading.Event()
        request = ReplanRequest(
            succeeded=tuple(by_id[i] for i in st.order if i in by_id),
            failed=tuple(by_id[i] for i in failed if i in by_id),
            replans=st.replans,
            should_stop=stop.is_set,
            answers=tuple(st.answers.items()),
        )
        replan = self.replan
        assert replan is not None  # the callers return before, without it
        self.emitter.flush()  # what led here is recorded before the search, however long
        try:
            new = await anyio.to_thread.run_sync(replan, request, abandon_on_cancel=True)
        except PlansmithError as error:
            why = replan_failure(error)  # the message, then each problem with its place
            self._failure_reason = f"{what}; replanning failed: {why}"
            return None
        finally:
            stop.set()
        if new is None:
            self._failure_reason = none
            return None
        widened = unapproved_tiers(new, st.plan_tiers | self.unattended_tiers)
        if widened:
            self._failure_reason = (
                f"{what}; the new plan {new.plan_hash} needs tier(s)"
                f" {', '.join(widened)}, which the approval of plan {st.plan_hash} did not"
                " cover: start a new run to approve it"
            )
            return None
        return new

    async def _replan_after_answer(self) -> bool:
        """Plan the rest again from the state the answers of ``_answered`` made (the same
        replan hook a failure uses, with no step given up; not counted in its budget)."""
        st = self.state
        assert st.bound is not None
        answered = "; ".join(f"step {s} was answered {st.answers.get(s)!r}" for s in self._answered)
        self._answered = []
        if self.replan is None:
            self._failure_reason = f"{answered}, not what the plan assumed, and replanning is off"
            return False
        none = f"{answered}, and no plan reaches the goal from there"
        new = await self._search([], answered, none)
        if new is None:
            return False
        self.emit(
            Replanned(
                run_id=st.run_id,
                failed=(),
                reason=f"{answered}, not what the plan assumed",
                plan_hash=new.plan_hash,
                bound=bound_to_dict(new),
            )
        )
        return True

    def _output_of(self, producer: str) -> object:
        """The outputs of step ``producer`` (unpacked from the run log's blobs)."""
        return self.emitter.unpack(self.state.outputs.get(producer, None))

    def _resolve(self, bound: BoundStep) -> Callable[[Ref], JSONValue]:
        # no closure between closures here: compiled (mypyc), their shared environment
        # would hold a cycle that keeps the runner alive after its run
        def resolve(ref: Ref) -> JSONish:  # a value as an output holds it (``JSONish``)
            if isinstance(ref, ParamRef):
                value = dict(bound.params)[ref.name]
                if isinstance(value, str) and "${" in value:  # GTPyhop's ${context.X}
                    found = bound.producers
                    skip = bound.policy.skip_when_absent
                    return resolve_context(
                        value, bound.step.id, found, self._output_of, null_is_absent=skip
                    )
                return value
            if isinstance(ref, EnvRef):
                value = self.env.get(ref.name)
                if value is None:
                    raise unset_env_error(bound.step.id, ref.name)
                return value
            if isinstance(ref, RunRef):
                return self.state.run_id if ref.field == "id" else self.run_dir
            assert isinstance(ref, OutputRef | FactRef)
            producers = dict(bound.producers)
            if isinstance(ref, OutputRef):
                inner = f"{ref.action}({', '.join(ref.args)}).{ref.output}"
            else:
                inner = f"fact({ref.fact()}).{ref.output}"
            producer = producers.get(inner) or _match(producers, ref)
            outputs = self.emitter.unpack(self.state.outputs.get(producer or "", None))
            if not isinstance(outputs, dict) or ref.output not in outputs:
                if producer is not None and self.state.states.get(producer) is _SKIPPED:
                    raise AbsentInputError(
                        f"${{{inner}}}: step {producer} was skipped: it has no outputs",
                        step=bound.step.id,
                        hint="`when_absent: skip` in this step's binding skips it too",
                    )
                raise ToolCallError(
                    ErrorClass.EXTRACTION_ERROR, f"no output {ref.output!r} from {inner}"
                )
            # its own name: compiled (mypyc), ``value`` above is typed as a step's argument
            got: JSONish = outputs[ref.output]
            if got is None and bound.policy.skip_when_absent:
                raise AbsentInputError(
                    f"${{{inner}}} (an output of step {producer}) is null: an optional"
                    " output that matched nothing",
                    step=bound.step.id,
                )
            return got

        return resolve

    async def _attempt(self, info: _Step) -> None:
        """Run one step: StepStarted, the call (retried by its policy), then StepSucceeded
        or StepFailed (deferred: committed with the next event that is not).

        The fast path builds the events and the call directly (not through
        ``Emitter.new`` and the dataclass constructors), applies them with the step
        events' own functions, calls the classifying invoker, and makes the retry
        wrapper (and its callback) only after a failure. What is the same in every
        attempt of the step was read from the plan once, in ``info``.
        """
        if info.ask:
            await self._ask(info)
            return
        st = self.state
        bound = info.bound
        step_id = info.id
        emitter = self.emitter
        run_id = st.run_id
        attempt = st.attempts.get(step_id, 0) + 1
        key = info.key
        emitter.seq += 1
        started = step_started(
            run_id,
            emitter.seq,
            emitter.stamp(),
            step_id,
            info.action,
            info.args,
            info.server,
            info.tool,
            attempt,
            key,
        )
        self._log_append(started)  # ``emitter.emit(started, defer=True)``, inline
        emitter.pending.append(started)
        apply_step_started(st, started)
        # Write-ahead: the start, and with it every deferred end (those of the steps this
        # call depends on among them), is durable before the call; views hear of it then.
        emitter.flush()
        t0 = self.monotonic()
        retry: RetryInvoker | None = None

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            self.emit(
                emitter.new(
                    StepProgress,
                    attempt=retry.attempt if retry is not None else attempt,
                    progress=progress,
                    total=total,
                    message=message,
                    **_common(bound),
                )
            )

        result: ToolResult | None = None
        try:
            arguments = bound.arguments
            if arguments and not info.static:
                resolve = self._resolve(bound)
                arguments = render(arguments, resolve)
                check_sendable(arguments, bound.arguments, resolve, step_id)
                if bound.type_checks:
                    wrong = type_mismatch(bound.type_checks, arguments)
                    if wrong is not None:
                        raise ToolCallError(
                            ErrorClass.PROTOCOL_ERROR,
                            f"{wrong} (tool {info.tool!r} not called)",
                            hint="the producing step's output has another type: change its"
                            " JSONPath, or write the reference inside text to send a string",
                        )
            if not isinstance(arguments, dict):
                raise ToolCallError(ErrorClass.PROTOCOL_ERROR, "tool arguments must be an object")
            timeout = info.timeout
            call = tool_call(
                info.server,
                info.tool,
                arguments,
                key,
                step_id,
                attempt,
                timeout,
                on_progress,
                _NO_META,  # shared and read-only: no new dict per call
            )
            try:
                # ``ClassifyingInvoker.invoke``, inline (one coroutine less per step)
                try:
                    first = self._timed if timeout is not None else self.invoker
                    result = await first.invoke(call)
                    if result.is_error:
                        classify_result(call, result)  # raises its tool_error
                except asyncio.CancelledError:
                    unasked = unasked_cancellation(call)
                    if unasked is None:
                        raise
                    raise unasked from None
            except ToolCallError as error:
                inner = self._classified if timeout is not None else self._classified_untimed
                retry = RetryInvoker(
                    inner, bound.policy, self._on_retry(bound), self.sleep, self.monotonic
                )
                result = await retry.after_failure(call, error)
            paths = info.paths
            outputs = _pick_result(result, paths) if paths is not None else None
            if outputs is None:  # a path that is not simple, or that matched nothing
                document = result.document(parse_json=info.reads_json)
                outputs = extract(bound.outputs, document, bound.defaults)
        except ToolCallError as error:
            if result is None and bound.policy.skip_when_absent and _absent(error):
                skipped = emitter.new(
                    StepSkipped, attempt=attempt, reason=error.message, **_common(bound)
                )
                self.emit(skipped, defer=True)
                return
            failed_result = error.result if isinstance(error.result, ToolResult) else result
            whole = IN_RESULT if failed_result and failed_result.text == error.message else None
            self.emit(
                emitter.new(
                    StepFailed,
                    attempt=retry.attempt if retry is not None else attempt,
                    duration_ms=_millis(self.monotonic() - _began(t0, retry)),
                    error_class=error.error_class,
                    message=bounded_message(error.message, whole or NOT_RECORDED),
                    retryable=error.retryable,
                    result=emitter.pack(failed_result.to_dict()) if failed_result else None,
                    **_common(bound),
                ),
                defer=True,
            )
            return
        # the last attempt's call: not the packing, nor earlier attempts and their backoff
        duration_ms = _millis(self.monotonic() - _began(t0, retry))
        # packed before the seq is taken: a blob store that fails leaves no gap in seq
        packed_outputs, packed_result = emitter.pack_step(outputs, result)
        emitter.seq += 1
        succeeded = step_succeeded(
            run_id,
            emitter.seq,
            emitter.stamp(),
            step_id,
            info.action,
            info.args,
            info.server,
            info.tool,
            retry.attempt if retry is not None else attempt,
            duration_ms,
            packed_outputs,
            packed_result,
        )
        self._log_append(succeeded)  # ``emitter.emit(succeeded, defer=True)``, inline
        emitter.pending.append(succeeded)
        apply_step_succeeded(st, succeeded)

    def _on_retry(
        self, bound: BoundStep
    ) -> Callable[[ToolCall, ToolCallError, float], Awaitable[None]]:
        """The callback of ``bound``'s retry wrapper: a ``StepRetrying`` before each retry."""
        emitter = self.emitter

        async def on_retry(call: ToolCall, error: ToolCallError, delay: float) -> None:
            self.emit(
                emitter.new(
                    StepRetrying,
                    attempt=call.attempt,
                    error_class=error.error_class,
                    message=bounded_message(error.message),
                    retryable=error.retryable,
                    delay_s=delay,
                    **_common(bound),
                )
            )

        return on_retry


class _Step:
    """A live step of the plan in force, with what every attempt of it reads, read once."""

    __slots__ = (
        "action",
        "after",
        "args",
        "ask",
        "bound",
        "dependents",
        "id",
        "key",
        "paths",
        "position",
        "reads_json",
        "server",
        "static",
        "timeout",
        "tool",
    )

    def __init__(
        self,
        bound: BoundStep,
        position: int,
        run_id: str,
        static: dict[int, tuple[JSONish, bool]] | None = None,
    ) -> None:
        step = bound.step
        self.bound = bound
        self.id = step.id
        self.action = step.action
        self.args = step.args
        self.server = bound.server
        self.tool = bound.tool
        self.after = bound.after
        self.timeout = bound.policy.timeout
        self.key = idempotency_key(run_id, step.id)
        self.ask = is_ask_step(bound.server, bound.tool)
        self.position = position  # in the plan: ready steps start in this order
        self.dependents: list[str] = []  # the live steps that wait for this one
        self.reads_json, self.paths = _read_outputs(bound.outputs)
        self.static = _is_static(bound.arguments, {} if static is None else static)


#: ``_read_outputs``'s answers, by outputs (the steps of one action share them)
_OUTPUTS_READ: dict[tuple[tuple[str, str], ...], tuple[bool, Any]] = {}


def _read_outputs(
    outputs: tuple[tuple[str, str], ...],
) -> tuple[bool, tuple[ResultPath, ...] | None]:
    """Whether ``outputs`` read the parsed text, and their ``_result_paths``."""
    known = _OUTPUTS_READ.get(outputs)
    if known is None:
        if len(_OUTPUTS_READ) >= 1024:  # a bound on what is kept
            _OUTPUTS_READ.clear()
        known = _OUTPUTS_READ[outputs] = (
            any(reads_json(path) for _, path in outputs),
            _result_paths(outputs),
        )
    return known


def _is_static(arguments: JSONish, known: dict[int, tuple[JSONish, bool]]) -> bool:
    """Whether ``arguments`` hold no reference to render (no ``${``). ``known`` keeps the
    answers by the arguments' id, with the arguments (so that the id is no other's): the
    steps of a plan often share one arguments object."""
    seen = known.get(id(arguments))
    if seen is not None and seen[0] is arguments:
        return seen[1]
    static = not _holds_reference(arguments)
    known[id(arguments)] = (arguments, static)
    return static


_NO_META: Mapping[str, str] = MappingProxyType({})
_PENDING = StepState.PENDING
_SUCCEEDED = StepState.SUCCEEDED
_SKIPPED = StepState.SKIPPED


def _absent(error: ToolCallError) -> bool:
    """Whether ``error`` says a value the step reads is absent (not a wrong one)."""
    if isinstance(error, AbsentInputError):
        return True
    return isinstance(error, ContextValueError) and error.absent


def _common(bound: BoundStep) -> dict[str, Any]:
    """The fields of ``bound``'s events that are the same in each of them."""
    step = bound.step
    return {
        "step": step.id,
        "action": step.action,
        "args": step.args,
        "server": bound.server,
        "tool": bound.tool,
    }


Keys = tuple[str | int, ...]
#: an output read straight from the result: its name, the document's field it starts
#: at (structured, text, json or is_error), the keys after it
ResultPath = tuple[str, str, Keys]
_DOCUMENT_FIELDS = frozenset({"structured", "text", "json", "is_error"})


def _result_paths(outputs: tuple[tuple[str, str], ...]) -> tuple[ResultPath, ...] | None:
    """Each output's path as the document field it starts at and the keys after it,
    when every path is a simple one (names and indices only, see ``simple_path``) below
    a field of the document; else None (``extract`` evaluates it)."""
    paths = []
    for name, expression in outputs:
        keys = simple_path(expression)
        if not keys or keys[0] not in _DOCUMENT_FIELDS:
            return None
        paths.append((name, str(keys[0]), keys[1:]))
    return tuple(paths)


def _pick_result(result: ToolResult, paths: tuple[ResultPath, ...]) -> Any:
    """``extract``'s answer over ``result.document()`` for these paths, without making
    the document (the text is parsed only for a ``json`` path); None when one matches
    nothing (then ``extract`` gives the error). A simple path's single match is its
    value."""
    values: dict[str, JSONValue] = {}
    for name, field_name, keys in paths:
        value: Any
        if field_name == "structured":
            value = result.structured
        elif field_name == "text":
            value = result.text
        elif field_name == "is_error":
            value = result.is_error
        else:
            value = result.document()["json"]
        for key in keys:
            if type(key) is int:
                if not isinstance(value, list) or key >= len(value):
                    return None
            elif not isinstance(value, dict) or key not in value:
                return None
            value = value[key]
        values[name] = value
    return values


def _first_cause(error: BaseException) -> BaseException:
    """The first exception inside nested groups (the error itself otherwise); a plansmith
    error before any other (a view that stops the run while several steps are in flight
    makes a group of its error, once for each of them)."""
    leaves: list[BaseException] = []
    stack = [error]
    while stack:
        item = stack.pop()
        if isinstance(item, BaseExceptionGroup):
            stack.extend(reversed(item.exceptions))
        else:
            leaves.append(item)
    ours = [leaf for leaf in leaves if isinstance(leaf, PlansmithError)]
    return (ours or leaves or [error])[0]


def _first_line(text: str, most: int = 200) -> str:
    """The first line of ``text``, cut to ``most`` characters."""
    line = text.split("\n", 1)[0]
    return line if len(line) <= most else line[: most - 3] + "..."


def _began(first: float, retry: RetryInvoker | None) -> float:
    """When the step's last attempt began: its first, or the last the retries made."""
    if retry is None or retry.started is None:
        return first
    return retry.started


def _millis(seconds: float) -> float:
    """``seconds`` in milliseconds, to the microsecond (``round(ms, 3)`` goes through
    decimal digits; this rounds to a whole number of microseconds)."""
    return round(seconds * 1_000_000) / 1000


def _holds_reference(value: JSONish) -> bool:
    """Whether a string in ``value`` holds ``${`` (a reference that ``render`` replaces)."""
    if isinstance(value, str):
        return "${" in value
    if isinstance(value, dict):
        return any(_holds_reference(k) or _holds_reference(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_reference(v) for v in value)
    return False


def _match(producers: Mapping[str, str], ref: OutputRef | FactRef) -> str | None:
    """The producer of ``ref`` however its reference was spaced where it is written."""
    wanted = ref_text(ref)
    for inner, producer in producers.items():
        if "".join(inner.split()) == wanted:
            return producer
    return None
