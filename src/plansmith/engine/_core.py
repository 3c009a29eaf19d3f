"""The engine's core: its log, leases, tracing and the runs it drives now, and the one
way a run is cancelled (``cancel``). ``Engine`` (``_engine``, whose docstring says what
the engine does) builds on it: ``Driving`` (``_drive``, the run sequence), then
``TakingOver`` (``_takeover``), then the public calls."""

from __future__ import annotations

import builtins
import os
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, contextmanager, suppress
from pathlib import Path
from types import TracebackType
from typing import Self, TextIO

import anyio

from plansmith._run_digests import ChangedInput, changed_inputs
from plansmith.engine._inputs import (
    OWNER_KEY,
    Subscriber,
    check_run_id,
)
from plansmith.engine._leases import LeaseKeeper
from plansmith.engine._made import RunMaker
from plansmith.engine._planning import (
    Planner,
    make_plan,
)
from plansmith.engine._starting import INTERRUPTED, Starting
from plansmith.engine._tools import (
    local_pool,
)
from plansmith.errors import (
    ApprovalRequiredError,
    ExecutionError,
    Location,
    PlansmithError,
    RunLeasedError,
    RunNotFoundError,
)
from plansmith.execution import (
    Asker,
    Emitter,
    RunCancelled,
    RunFinished,
    RunInfo,
    RunLeases,
    RunLog,
    Runner,
    RunOutcome,
    RunState,
    SqliteRunLog,
    ToolInvoker,
    TraceSetup,
    fold,
    new_engine_id,
    run_exists,
    tracing_from_env,
)
from plansmith.servers import (
    McpInvoker,
    PoolFactory,
    ServersConfig,
    ToolPool,
)

__all__ = ["EngineCore", "InvokerFactory"]

#: the invoker of a run's tools over its pool (``McpInvoker`` by default)
InvokerFactory = Callable[[ToolPool], ToolInvoker]


class EngineCore:
    """Runs plans durably; see the module docstring.

    ``lease_ttl``: seconds a run's lease lasts without renewal (another engine may take
    the run over after that); ``lease_renew``: seconds between renewals (default a third
    of the ttl); ``engine_id``: the owner name of this engine's leases (default
    ``HOST:PID:RANDOM``).
    """

    def __init__(
        self,
        home: Path | str = ".plansmith",
        *,
        log: RunLog | None = None,
        pool_factory: PoolFactory | None = None,
        engine_id: str | None = None,
        lease_ttl: float = 30.0,
        lease_renew: float | None = None,
        tracing: TraceSetup | None = None,
        planner: Planner | None = None,
        invoker_factory: InvokerFactory | None = None,
        makers: Mapping[str, RunMaker] | None = None,
        asker: Asker | None = None,
    ) -> None:
        # absolute: ``${run.dir}`` and the run's files are the same from any directory
        # (a stdio server with its own cwd gets a path it can use)
        self.home = Path(home).absolute()
        # OpenTelemetry only when asked for (OTEL_* variables): nothing is wrapped otherwise
        self.tracing = tracing if tracing is not None else tracing_from_env(os.environ)
        self.log: RunLog = log if log is not None else SqliteRunLog(self.home / "runs.db")
        self.pool_factory: PoolFactory = pool_factory or local_pool
        self.planner: Planner = planner or make_plan
        #: run makers by name (``Engine.run_made``), before the installed entry points
        self.makers: dict[str, RunMaker] = dict(makers or {})
        self.invoker_factory: InvokerFactory = invoker_factory or McpInvoker
        self.leases: RunLeases | None = self.log if isinstance(self.log, RunLeases) else None
        self.engine_id = engine_id or new_engine_id()
        self._runners: dict[str, Runner] = {}  # the runs whose steps this engine runs now
        self.lease_ttl = lease_ttl
        self.lease_renew = lease_renew if lease_renew is not None else lease_ttl / 3
        self._leases = LeaseKeeper(self.leases, self.engine_id, self.lease_ttl, self.lease_renew)
        self._starts: dict[str, Starting] = {}  # runs whose servers start here now
        self._cancel_pending: dict[str, str] = {}  # runs cancelled before they began here
        self._active: set[str] = set()  # the runs a run, run_plan or resume call drives now
        self._closed = False
        #: how the runs this engine drives ask a person (the terminal, MCP elicitation);
        #: None: an ask step waits (``awaiting answer``) until ``answer`` is given
        self.asker: Asker | None = asker

    def open_pool(
        self, config: ServersConfig, errlog: TextIO | None = None
    ) -> AbstractAsyncContextManager[ToolPool]:
        """The tool pool for one run: local processes, or a cluster's (``pool_factory``)."""
        return self.pool_factory(config, errlog)

    def close(self) -> None:
        """Close the run log (and flush the traces). Refused (``ExecutionError``, nothing
        closed) while a ``run``, ``run_plan`` or ``resume`` of this engine is active: cancel
        those runs (``cancel``) and let their calls return first, so that each is recorded
        and its lease released. Closing twice is closing once. A closed engine refuses
        every run, resume, check and replay (``ExecutionError``: the engine is closed)."""
        if self._closed:
            return
        active = sorted(
            self._active | set(self._starts) | set(self._runners) | self._leases.driving
        )
        if active:
            raise ExecutionError(
                f"cannot close the engine: run(s) {', '.join(active)} are active",
                hint="cancel them (Engine.cancel) and let their run or resume return, then"
                " close the engine",
            )
        self._closed = True
        if self.tracing is not None:
            self.tracing.shutdown()
        self.log.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _open(self) -> None:
        """Raise ``ExecutionError`` when this engine is closed."""
        if self._closed:
            raise ExecutionError(
                "the engine is closed", hint="make a new Engine (or open_engine) for more runs"
            )

    def _new_run(self, run_id: object) -> str:
        """``run_id`` checked for a new run: its form, and that the log does not hold it
        (before anything is written)."""
        checked = check_run_id(run_id)
        try:
            self.log.run(checked)
        except RunNotFoundError:
            return checked
        raise run_exists(checked)

    def _trace(
        self, emitter: Emitter, state: RunState | None = None
    ) -> Callable[[ToolInvoker], ToolInvoker]:
        """When tracing is on, subscribe a span view to ``emitter`` now (a resumed run's
        view is primed with its DAG) and return how to wrap the invoker; else identity."""
        if self.tracing is None:
            return lambda invoker: invoker
        tracing, view = self.tracing, self.tracing.view()
        if state is not None:
            view.prime(state)
        emitter.subscribe(view)
        return lambda invoker: tracing.wrap(invoker, view)

    async def _flush_traces(self) -> None:
        if self.tracing is not None:
            await anyio.to_thread.run_sync(self.tracing.flush)

    def new_run_id(self) -> str:
        return "r-" + uuid.uuid4().hex[:12]

    def run_dir(self, run_id: str) -> Path:
        """``home/runs/RUN_ID``, made if need be; ``ExecutionError`` naming it if it cannot
        be (a file where a directory is needed, no permission)."""
        if Path(run_id).name != run_id or run_id in ("", ".", ".."):  # one path component
            check_run_id(run_id)
        path = self.home / "runs" / run_id
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ExecutionError(
                f"cannot make the run's directory: {error.strerror or error}",
                location=Location(str(path)),
                hint="runs are kept under --home (or PLANSMITH_HOME): give a directory"
                " plansmith can write",
            ) from None
        return path

    @contextmanager
    def _stopped_by_view(self, emitter: Emitter) -> Iterator[None]:
        """A view that stops the run (raises a ``PlansmithError``; the engine service does
        when the plan is not the approved one) before its runner runs ends it ``failed``
        with the view's error as the reason (the error is raised on). Not an
        ``ApprovalRequiredError``: a run awaiting approval is not finished."""
        try:
            yield
        except ApprovalRequiredError:
            raise
        except PlansmithError as error:
            # recorded even if a view raises again (events are durable before views hear)
            with suppress(PlansmithError):
                emitter.emit(
                    RunFinished(run_id=emitter.run_id, state="failed", reason=error.message)
                )
            raise

    def _cancelled_now(self, emitter: Emitter, start: Starting) -> bool:
        """Whether ``cancel`` was called for the run (e.g. by a view) before its runner
        ran; if so it is recorded cancelled now, before anything more of it happens."""
        if start.reason is None:
            return False
        self._cancelled_starting(emitter, start)
        return True

    def _emitter(self, run_id: str, last_seq: int, subscribe: Subscriber | None) -> Emitter:
        emitter = Emitter(self.log, run_id, last_seq=last_seq)
        if subscribe is not None:
            emitter.subscribe(subscribe)
        return emitter

    async def _run_runner(self, runner: Runner) -> RunOutcome:
        run_id = runner.state.run_id
        self._starts.pop(run_id, None)  # from here on the runner takes a cancel
        self._runners[run_id] = runner
        try:
            return await runner.run()
        finally:
            self._runners.pop(run_id, None)

    def _starting(self, run_id: str) -> Starting:
        """While ``run_id`` is planned, or its servers start and its plan is bound:
        ``cancel`` cancels ``start.scope`` (the run is then recorded cancelled, see
        ``_cancelled_starting``)."""
        return Starting(run_id, self._starts, self._cancel_pending)

    def _cancelled_starting(self, emitter: Emitter, start: Starting) -> None:
        """Record a run cancelled before its runner ran (planning, servers starting,
        binding), as the runner records one cancelled later: by ``cancel`` with its reason,
        else (the task was cancelled, Ctrl-C) "the engine was interrupted". Not when its
        lease was lost: the run is another engine's now."""
        if start.run_id in self._leases.lost:
            return
        reason = start.reason or INTERRUPTED
        emitter.emit(RunCancelled(run_id=start.run_id, reason=reason))
        emitter.emit(RunFinished(run_id=start.run_id, state="cancelled", reason=reason))

    def cancel(self, run_id: str, reason: str = "cancelled") -> bool:
        """Cancel ``run_id``; the one way every face cancels a run. The run ends
        ``cancelled`` with ``reason`` (``RunCancelled`` and ``RunFinished`` in its log),
        whatever it was doing:

        - driven here: its planner's search, its servers' start-up or its calls in flight
          are cancelled (no step of it starts after), and its ``run`` or ``resume``
          returns; a call made before it began here cancels it as it begins;
        - driven by no engine (awaiting approval, or its engine gone): recorded at once,
          under its lease.

        False when there is no such run, it has finished, or another engine drives it
        (its lease is live)."""
        runner = self._runners.get(run_id)
        if runner is not None:
            runner.cancel(reason)
            return True
        start = self._starts.get(run_id)
        if start is not None:
            start.cancel(reason)
            return True
        if run_id in self._active:  # about to begin here: cancelled as it begins
            self._cancel_pending.setdefault(run_id, reason)
            return True
        return self._cancel_idle(run_id, reason)

    def drives(self, run_id: str) -> bool:
        """Whether this engine drives ``run_id`` now (plans, starts, binds or runs it, or
        is about to): ``cancel`` then stops it where it is."""
        return (
            run_id in self._runners
            or run_id in self._starts
            or run_id in self._active
            or run_id in self._leases.driving
        )

    def _done_driving(self, run_id: str) -> None:
        """A run, run_plan, resume or retry call ends: a cancel that came before the run
        began here and was not taken (the call failed first) is recorded now."""
        self._active.discard(run_id)
        reason = self._cancel_pending.pop(run_id, None)
        if reason is not None:
            self._cancel_idle(run_id, reason)

    def _cancel_idle(self, run_id: str, reason: str) -> bool:
        """Record an unfinished run that no engine drives cancelled, under its lease."""
        try:
            state = fold(run_id, self.log.events(run_id))
        except RunNotFoundError:
            return False
        if state.finished is not None:
            return False
        try:
            with self._leases.held(run_id):
                state = fold(run_id, self.log.events(run_id))  # as it is under the lease
                if state.finished is not None:
                    return False
                emitter = Emitter(self.log, run_id, last_seq=state.last_seq)
                emitter.emit(RunCancelled(run_id=run_id, reason=reason))
                emitter.emit(RunFinished(run_id=run_id, state="cancelled", reason=reason))
        except RunLeasedError:
            return False
        return True

    def list(self, *, owner: str | None = None) -> builtins.list[RunInfo]:
        """Every run of the log, newest first, whichever face made it (those ``owner``
        started, when given: ``Engine.run``'s ``owner``)."""
        infos = list(reversed(self.log.runs()))
        if owner is None:
            return infos
        return [i for i in infos if i.inputs.get(OWNER_KEY, "") == owner]

    def changed_inputs(self, run_id: str) -> tuple[ChangedInput, ...]:
        """The input files of ``run_id`` whose contents are not those the run was made
        from (each with what that means for a resume: the recorded plan goes on, a replan
        or the servers use the file as it is now), or gone. Empty for a run recorded
        without digests (by an older plansmith) or made from a plan (``run_plan``)."""
        self._open()
        return changed_inputs(self.log.run(run_id).inputs)
