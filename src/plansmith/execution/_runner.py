"""The runner: one async shell around the pure state table.

It dispatches ready steps under a global limit and a limit per server, wraps
the invoker with timeout, classification and retry, writes every event to the
log before acting on it, replans when a step's retries run out, and cancels
cleanly. It resumes from any prefix of its own log (see ``_states.fold``).

Write-ahead, with group commit: a step's end is durable before any call that
depends on it and before the run ends; a step's start is committed with the
events of the other steps that ran in the same turn of the event loop (one
transaction), or before its call when views listen. A chain commits once a step.

(Over 500 lines: the per-step path, ``_attempt`` to ``_dispatch``, is tuned as a whole
against a raw SDK loop, see docs/benchmarks.md, Executor; splitting it would add a call
per step.)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

import anyio
from anyio.abc import TaskGroup

from plansmith.binding import (
    BoundPlan,
    BoundStep,
    EnvRef,
    OutputRef,
    ParamRef,
    Ref,
    RunRef,
    extract,
    render,
)
from plansmith.errors import ExecutionError, PlansmithError, ToolCallError
from plansmith.execution._codec import bound_to_dict
from plansmith.execution._emit import Emitter, utc_now
from plansmith.execution._event_fast import step_started, step_succeeded
from plansmith.execution._events import (
    Event,
    Replanned,
    RunCancelled,
    RunFinished,
    RunStarted,
    StepFailed,
    StepProgress,
    StepRetrying,
)
from plansmith.execution._invoker import ErrorClass, ToolCall, ToolInvoker, ToolResult
from plansmith.execution._log import RunLog
from plansmith.execution._replan import ReplanFn, ReplanRequest
from plansmith.execution._states import RunState, StepState, apply_event, ready_steps
from plansmith.execution._wrappers import ClassifyingInvoker, RetryInvoker, Sleep, TimeoutInvoker
from plansmith.model import JSONValue, Tier

__all__ = ["Runner", "RunOutcome", "idempotency_key", "unapproved_tiers"]


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
        self._scope: anyio.CancelScope | None = None
        # stateless wrappers, shared by every step (a step adds its own RetryInvoker)
        self._classified = ClassifyingInvoker(TimeoutInvoker(invoker))
        self._classified_untimed = ClassifyingInvoker(invoker)  # for steps with no timeout
        self._reads_json: dict[str, bool] = {}
        self._done_seq: dict[str, int] = {}  # the seq of each step's StepSucceeded
        self._flush_wanted = anyio.Event()
        self._static: dict[str, bool] = {}

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

    async def run(self) -> RunOutcome:
        resumed = any(s is not StepState.PENDING for s in self.state.states.values())
        self.emit(RunStarted(run_id=self.state.run_id, resumed=resumed))
        for step_id, st in self.state.states.items():
            if st is StepState.RUNNING:  # started before a crash: call again, same key
                self.state.states[step_id] = StepState.PENDING
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                if self._cancel_reason is None:
                    await self._loop()
        except (anyio.get_cancelled_exc_class(), KeyboardInterrupt):
            with anyio.CancelScope(shield=True):
                self._finish_cancelled(self._cancel_reason or "the engine was interrupted")
            raise
        except Exception as error:
            reason = f"internal error: {type(error).__name__}: {error}"
            self.emit(RunFinished(run_id=self.state.run_id, state="failed", reason=reason))
            raise
        if self._cancel_reason is not None:
            return self._finish_cancelled(self._cancel_reason)
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
            reason = f"step(s) {', '.join(stuck[:5])} could not become ready"
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
        self._steps = {}
        self._position = {}
        self._dependents: dict[str, list[str]] = {}
        # per step, once: whether extractors read ``json``, whether arguments hold a reference
        self._reads_json = {}
        self._static = {}
        for i, s in enumerate(live):
            step_id = s.step.id
            self._steps[step_id] = s
            self._position[step_id] = i
            for dep in s.after:
                self._dependents.setdefault(dep, []).append(step_id)
            self._reads_json[step_id] = any("json" in path for _, path in s.outputs)
            self._static[step_id] = not _holds_reference(s.arguments)

    def _dispatch(self, candidates: Iterable[str], *, keep_one: bool) -> BoundStep | None:
        """Queue the ready steps among ``candidates``, then start queued steps while the
        global limit and their server's limit allow. With ``keep_one``, the first step
        to start is returned instead, so that the calling worker runs it next (a chain
        then costs no task switch per step)."""
        if self.state.failed_pending:
            return None  # wait for the steps in flight, then replan
        steps = self._steps
        dispatched = self._dispatched
        after = {c: steps[c].after for c in candidates if c not in dispatched}
        fresh = ready_steps(after, self.state.states)
        if fresh:
            position = self._position.__getitem__
            if len(fresh) > 1:
                fresh.sort(key=position)
            dispatched.update(fresh)
            self._queue = sorted([*self._queue, *fresh], key=position) if self._queue else fresh
        elif not self._queue:
            return None
        kept: BoundStep | None = None
        waiting: list[str] = []
        active = self._active
        per_server = self._per_server
        limits = self.server_limits
        for step_id in self._queue:
            bound = steps[step_id]
            server = bound.server
            limit = limits.get(server) if limits else None
            if len(active) >= self.max_parallel or (
                limit is not None and per_server.get(server, 0) >= limit
            ):
                waiting.append(step_id)
                continue
            active.add(step_id)
            per_server[server] = per_server.get(server, 0) + 1
            if keep_one and kept is None:
                kept = bound
            else:
                assert self._tg is not None
                self._tg.start_soon(self._worker, bound)
        self._queue = waiting
        return kept

    def _flush_soon(self) -> None:
        """Have the flusher commit what is pending once the steps now running yield."""
        if self.emitter.pending and not self._flush_wanted.is_set():
            self._flush_wanted.set()

    async def _flusher(self) -> None:
        """Group commit: the events appended in one turn of the event loop by all the
        steps that ran in it go in one transaction, and their views hear of them."""
        while True:
            await self._flush_wanted.wait()
            self._flush_wanted = anyio.Event()
            self.emitter.flush()

    async def _loop(self) -> None:
        self._index_plan()
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._flusher)
            try:
                await self._dispatch_rounds()
            finally:
                tg.cancel_scope.cancel()  # the flusher; every worker has ended
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
            if self.state.failed_pending and self._try_replan():
                self._index_plan()
                continue
            return

    async def _worker(self, first: BoundStep) -> None:
        current: BoundStep | None = first
        while current is not None:
            await self._attempt(current)
            self._active.discard(current.id)
            self._per_server[current.server] -= 1
            following = self._dispatch(self._dependents.get(current.id, ()), keep_one=True)
            if following is None:
                self._flush_soon()
            current = following
        if not self._active:
            self._idle.set()

    def _try_replan(self) -> bool:
        st = self.state
        assert st.bound is not None
        failed_ids = [*st.failed_all, *st.failed_pending]
        failures = ", ".join(st.failed_pending)
        if self.replan is None:
            self._failure_reason = f"step(s) {failures} failed and replanning is off"
            return False
        if st.replans >= self.max_replans:
            self._failure_reason = f"step(s) {failures} failed after {st.replans} replan(s)"
            return False
        by_id = {s.id: s.step for s in st.bound.steps}
        request = ReplanRequest(
            succeeded=tuple(by_id[i] for i in st.order if i in by_id),
            failed=tuple(by_id[i] for i in failed_ids if i in by_id),
            replans=st.replans,
        )
        try:
            new = self.replan(request)
        except PlansmithError as error:
            self._failure_reason = f"step(s) {failures} failed; replanning failed: {error.message}"
            return False
        if new is None:
            self._failure_reason = f"step(s) {failures} failed and no other plan reaches the goal"
            return False
        widened = unapproved_tiers(new, st.plan_tiers | self.unattended_tiers)
        if widened:
            self._failure_reason = (
                f"step(s) {failures} failed; the new plan {new.plan_hash} needs tier(s)"
                f" {', '.join(widened)}, which the approval of plan {st.plan_hash} did not"
                " cover: start a new run to approve it"
            )
            return False
        self.emit(
            Replanned(
                run_id=st.run_id,
                failed=tuple(st.failed_pending),
                reason=f"retries ran out for {failures}",
                plan_hash=new.plan_hash,
                bound=bound_to_dict(new),
            )
        )
        return True

    def _resolve(self, bound: BoundStep) -> Callable[[Ref], JSONValue]:
        def resolve(ref: Ref) -> JSONValue:
            if isinstance(ref, ParamRef):
                return dict(bound.params)[ref.name]
            if isinstance(ref, EnvRef):
                return self.env.get(ref.name, "")
            if isinstance(ref, RunRef):
                return self.state.run_id if ref.field == "id" else self.run_dir
            assert isinstance(ref, OutputRef)
            producers = dict(bound.producers)
            inner = f"{ref.action}({', '.join(ref.args)}).{ref.output}"
            producer = producers.get(inner) or _match(producers, ref)
            outputs = self.emitter.unpack(self.state.outputs.get(producer or "", None))
            if not isinstance(outputs, dict) or ref.output not in outputs:
                raise ToolCallError(
                    ErrorClass.EXTRACTION_ERROR, f"no output {ref.output!r} from {inner}"
                )
            return outputs[ref.output]

        return resolve

    async def _attempt(self, bound: BoundStep) -> None:
        """Run one step: StepStarted, the call (retried by its policy), then StepSucceeded
        or StepFailed (deferred: committed with the next event that is not).

        The fast path builds the events directly (not through ``Emitter.new``), calls
        the classifying invoker, and makes the retry wrapper only after a failure.
        """
        st = self.state
        step = bound.step
        step_id = step.id
        emitter = self.emitter
        run_id = st.run_id
        attempt = st.attempts.get(step_id, 0) + 1
        key = idempotency_key(run_id, step_id)
        emitter.seq += 1
        started = step_started(
            run_id,
            emitter.seq,
            emitter.stamp(),
            step_id,
            step.action,
            step.args,
            bound.server,
            bound.tool,
            attempt,
            key,
        )
        emitter.emit(started, defer=True)
        apply_event(st, started)
        # Write-ahead: the ends of the steps this call depends on are durable before it.
        # The start itself need not be (the key does not depend on it; see the docs),
        # so it waits for the flusher's group commit, unless views listen: they hear of
        # the start before the call (the trace view opens the attempt's span on it), and
        # views hear only of durable events.
        for dep in bound.after:
            if self._done_seq.get(dep, 0) > emitter.durable_seq:
                emitter.flush()
                break
        else:
            if emitter.subscribers:
                emitter.flush()
            else:
                self._flush_soon()
        t0 = self.monotonic()
        retry: RetryInvoker | None = None

        def common() -> dict[str, Any]:
            return {
                "step": step_id,
                "action": step.action,
                "args": step.args,
                "server": bound.server,
                "tool": bound.tool,
            }

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            self.emit(
                emitter.new(
                    StepProgress,
                    attempt=retry.attempt if retry is not None else attempt,
                    progress=progress,
                    total=total,
                    message=message,
                    **common(),
                )
            )

        async def on_retry(call: ToolCall, error: ToolCallError, delay: float) -> None:
            self.emit(
                emitter.new(
                    StepRetrying,
                    attempt=call.attempt,
                    error_class=error.error_class,
                    message=error.message,
                    retryable=error.retryable,
                    delay_s=delay,
                    **common(),
                )
            )

        result: ToolResult | None = None
        try:
            arguments = bound.arguments
            if arguments and not self._static.get(step_id, False):
                arguments = render(arguments, self._resolve(bound))
            if not isinstance(arguments, dict):
                raise ToolCallError(ErrorClass.PROTOCOL_ERROR, "tool arguments must be an object")
            timeout = bound.policy.timeout
            call = ToolCall(
                server=bound.server,
                tool=bound.tool,
                arguments=arguments,
                key=key,
                step=step_id,
                attempt=attempt,
                timeout=timeout,
                on_progress=on_progress,
                meta=_NO_META,  # shared and read-only: no new dict per call
            )
            inner = self._classified if timeout is not None else self._classified_untimed
            try:
                result = await inner.invoke(call)
            except ToolCallError as error:
                retry = RetryInvoker(inner, bound.policy, on_retry, self.sleep)
                result = await retry.after_failure(call, error)
            document = result.document(parse_json=self._reads_json.get(step_id, True))
            outputs = extract(bound.outputs, document)
        except ToolCallError as error:
            failed_result = error.result if isinstance(error.result, ToolResult) else result
            self.emit(
                emitter.new(
                    StepFailed,
                    attempt=retry.attempt if retry is not None else attempt,
                    duration_ms=round((self.monotonic() - t0) * 1000, 3),
                    error_class=error.error_class,
                    message=error.message,
                    retryable=error.retryable,
                    result=emitter.pack(failed_result.to_dict()) if failed_result else None,
                    **common(),
                ),
                defer=True,
            )
            return
        emitter.seq += 1
        succeeded = step_succeeded(
            run_id,
            emitter.seq,
            emitter.stamp(),
            step_id,
            step.action,
            step.args,
            bound.server,
            bound.tool,
            retry.attempt if retry is not None else attempt,
            round((self.monotonic() - t0) * 1000, 3),
            emitter.pack(outputs),
            emitter.pack(result.to_dict()),
        )
        emitter.emit(succeeded, defer=True)
        apply_event(st, succeeded)
        self._done_seq[step_id] = succeeded.seq


_NO_META: Mapping[str, str] = MappingProxyType({})


def _holds_reference(value: JSONValue) -> bool:
    """Whether a string in ``value`` holds ``${`` (a reference that ``render`` replaces)."""
    if isinstance(value, str):
        return "${" in value
    if isinstance(value, dict):
        return any(_holds_reference(k) or _holds_reference(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_reference(v) for v in value)
    return False


def _match(producers: Mapping[str, str], ref: OutputRef) -> str | None:
    for inner, producer in producers.items():
        if inner.replace(" ", "") == f"{ref.action}({','.join(ref.args)}).{ref.output}":
            return producer
    return None
