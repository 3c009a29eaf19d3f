"""The engine: composes planning, binding, servers and the runner; the one place that
picks implementations (SQLite log, MCP invoker, the classical replanner).

``Engine(home)`` keeps its run log in ``home/runs.db`` and a directory per run in
``home/runs/RUN_ID``. Every face (CLI, MCP server, web) goes through it.

Runs are leased (``execution.RunLeases``) when the log has leases: ``run`` and ``resume``
take the run's lease under the engine's id, renew it every ``lease_renew`` seconds while
the run is live, and release it when the run ends, so that engines sharing one log
(PostgreSQL) never drive the same run at once. ``take_over_expired`` and
``keep_taking_over`` resume the unfinished runs whose lease expired (a crashed engine's).

(Over 500 lines: ``Engine`` is the one object every face calls, for run, resume, cancel,
check, replay and take-over, and they share its start-up, lease and cancellation paths;
tests and benchmarks observe a run by patching this module's names, such as
``McpInvoker`` and ``tracing_from_env``, which a split over several modules would
silently bypass.)
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, contextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import TextIO

import anyio

from plansmith._run_digests import KINDS, ChangedInput, changed_inputs, file_digests
from plansmith.binding import (
    Bindings,
    BoundPlan,
    EnvRef,
    ToolCatalog,
    bind,
    find_refs,
    load_bindings,
    merge_across_steps,
)
from plansmith.errors import (
    ApprovalRequiredError,
    BindingError,
    ExecutionError,
    InputError,
    Location,
    PlansmithError,
    RunLeasedError,
    RunNotFoundError,
    ServerConfigError,
    ServerStartError,
)
from plansmith.execution import (
    ApprovalPolicy,
    AwaitingApproval,
    Emitter,
    Event,
    MemoryRunLog,
    PartEnd,
    PlanApproved,
    PlanReady,
    RecordedPart,
    ReplanFn,
    Replanned,
    Replanner,
    ReplanRequest,
    ReplayInvoker,
    RunCancelled,
    RunCreated,
    RunFinished,
    RunLeases,
    RunLog,
    Runner,
    RunOutcome,
    RunState,
    SqliteRunLog,
    StepKey,
    ToolCall,
    ToolInvoker,
    TraceSetup,
    apply_event,
    bound_to_dict,
    check_view,
    fold,
    iso_time,
    make_replan,
    new_engine_id,
    open_run_log,
    owner_gone,
    recorded_parts,
    replay_env,
    replay_replan,
    tiers_needing_approval,
    tracing_from_env,
    unpack,
    utc_now,
)
from plansmith.execution._run_log import run_exists  # not exported: the logs raise it too
from plansmith.formats import load_domain, load_problem, parse_plan_json
from plansmith.model import (
    Atom,
    DecompositionNode,
    Domain,
    JSONValue,
    Literal,
    Plan,
    Predicate,
    Problem,
    State,
    TaskCall,
    Tier,
    TypedName,
)

# The planner's one entry point; switch to ``plansmith.planning.plan`` once it is exported.
from plansmith.planning._planner import plan as plan_problem
from plansmith.servers import (
    McpInvoker,
    PoolFactory,
    ServerPool,
    ServersConfig,
    ToolPool,
    dask_pool_factory,
    load_servers,
)

__all__ = [
    "Engine",
    "open_engine",
    "RunInputs",
    "ChangedInput",
    "RunTools",
    "ReplanFactory",
    "load_problem_files",
    "make_plan",
    "make_replanner",
    "ban_failed",
    "remaining_tasks",
    "made_from_files",
    "check_run_id",
    "recorded_policy",
    "POLICY_KEY",
]

Subscriber = Callable[[Event], None]


@dataclass(frozen=True, slots=True, init=False)
class RunInputs:
    """The files a run was made from (stored with the run, so that resume can reload them).

    Each is given as a ``Path`` or as text, and read back as a ``Path``."""

    domain: Path
    problem: Path
    servers: Path
    bindings: Path

    def __init__(
        self, domain: str | Path, problem: str | Path, servers: str | Path, bindings: str | Path
    ) -> None:
        # frozen: the dataclass's own ``__init__`` sets its fields this way too
        object.__setattr__(self, "domain", Path(domain))
        object.__setattr__(self, "problem", Path(problem))
        object.__setattr__(self, "servers", Path(servers))
        object.__setattr__(self, "bindings", Path(bindings))

    def to_dict(self) -> dict[str, str]:
        return {k: str(getattr(self, k)) for k in ("domain", "problem", "servers", "bindings")}

    def resolved(self) -> RunInputs:
        """The same files named by absolute paths (what a run records, so that it can be
        resumed from any directory)."""
        return RunInputs(
            self.domain.resolve(),
            self.problem.resolve(),
            self.servers.resolve(),
            self.bindings.resolve(),
        )

    @staticmethod
    def from_dict(data: Mapping[str, object]) -> RunInputs:
        return RunInputs(
            *(Path(str(data[k])) for k in ("domain", "problem", "servers", "bindings"))
        )


def load_problem_files(domain: Path, problem: Path) -> Problem:
    return load_problem(problem, load_domain(domain))


def make_plan(problem: Problem, *, should_stop: Callable[[], bool] | None = None) -> Plan:
    """The planner's one entry point (classical or HTN); the search stops (with
    ``LimitReachedError``) once ``should_stop`` returns true."""
    return plan_problem(problem, should_stop=should_stop)


async def _plan_in_thread(problem: Problem) -> Plan:
    """``make_plan(problem)`` in a worker thread, so that the event loop (its signal
    handlers, the other runs of a service) goes on while the planner searches. A cancel
    returns at once and stops the abandoned search at its next check point: no search
    outlives it, burning a CPU and holding up the process's exit."""
    stop = threading.Event()
    try:
        return await anyio.to_thread.run_sync(
            lambda: make_plan(problem, should_stop=stop.is_set), abandon_on_cancel=True
        )
    finally:
        stop.set()


def ban_failed(problem: Problem, state: State, failed: frozenset[StepKey]) -> Problem:
    """``problem`` from ``state``, where no ground action in ``failed`` is applicable.

    Each failed ground action gets a fresh predicate that its schema must not
    have true for those arguments; the planner itself is unchanged.
    """
    domain = problem.domain
    banned_init: set[Atom] = set()
    actions = []
    predicates = list(domain.predicates)
    for schema in domain.actions:
        bans = [args for name, args in failed if name == schema.name]
        if bans:
            pred = f"plansmith-banned-{schema.name}"
            params = tuple(p.name for p in schema.parameters)
            typed = tuple(TypedName(p.name, p.type) for p in schema.parameters)
            predicates.append(Predicate(pred, typed))
            guard = Literal(Atom(pred, params), positive=False)
            schema = replace(schema, precondition=(*schema.precondition, guard))
            banned_init.update(Atom(pred, args) for args in bans)
        actions.append(schema)
    new_domain = replace(domain, predicates=tuple(predicates), actions=tuple(actions))
    return replace(problem, domain=new_domain, init=frozenset(state) | banned_init)


def _leaf_steps(node: DecompositionNode) -> list[str]:
    if node.step is not None:
        return [node.step]
    return [leaf for child in node.children for leaf in _leaf_steps(child)]


def remaining_tasks(plan: Plan, done: frozenset[StepKey]) -> tuple[TaskCall, ...]:
    """The top-level tasks of an HTN plan with a primitive step not yet done, in order."""
    keys = {s.id: (s.action, s.args) for s in plan.steps}
    return tuple(
        TaskCall(node.task, node.args)
        for node in plan.decomposition
        if not all(keys[leaf] in done for leaf in _leaf_steps(node) if leaf in keys)
    )


def make_replanner(problem: Problem, first: Plan) -> Replanner:
    """Plan again from a state, never using a failed ground action.

    Classical problems search again for their goal. HTN problems decompose again
    the tasks of the plan in force that are not done yet: a method whose
    subtasks need a failed action fails, so the next method is tried.
    """
    in_force = [first]

    def replanner(
        state: State,
        failed: frozenset[StepKey],
        done: frozenset[StepKey],
        /,
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> Plan | None:
        banned = ban_failed(problem, state, failed)
        if problem.tasks:
            tasks = remaining_tasks(in_force[0], done)
            if not tasks:
                return None
            banned = replace(banned, tasks=tasks)
        elif not problem.goal:
            return None
        try:
            new_plan = make_plan(banned, should_stop=should_stop)
        except PlansmithError:  # none found, or stopped: the run was cancelled meanwhile
            return None
        in_force[0] = new_plan
        return new_plan

    return replanner


@dataclass(frozen=True, slots=True)
class RunTools:
    """Tools at hand for ``Engine.run_plan``, instead of servers for it to start.

    ``catalog``: what the plan is bound against; ``invoker``: what calls them (the engine
    wraps it for tracing); ``limits``: the runner's calls in flight per server (None:
    none); ``route``: a change to the bound plan before it is recorded (e.g. giving
    steps the server named by one of their arguments).
    """

    catalog: ToolCatalog
    invoker: ToolInvoker
    limits: Mapping[str, int] | None = None
    route: Callable[[BoundPlan], BoundPlan] | None = None


# ``Engine.run_plan``'s ``replan``: the runner's replan hook, made once the catalog is known
ReplanFactory = Callable[[ToolCatalog], ReplanFn | None]


def _limits(config: ServersConfig) -> dict[str, int]:
    return {s.name: s.max_in_flight for s in config.servers}


def load_run_files(bindings: Path, servers: Path) -> tuple[Bindings, ServersConfig]:
    """The bindings and the servers file, both read: the problems of both are reported
    at once (one ``InputError`` whose ``problems`` are each file's error)."""
    found: list[PlansmithError] = []
    read_bindings: Bindings | None = None
    config: ServersConfig | None = None
    try:
        read_bindings = load_bindings(bindings)
    except InputError as error:
        found.append(error)
    try:
        config = load_servers(servers)
    except InputError as error:
        found.append(error)
    if len(found) == 1:
        raise found[0]
    if found:
        raise InputError(
            "the bindings and the servers file both have problems",
            hint="fix every listed problem",
            problems=tuple(found),
        )
    assert read_bindings is not None
    assert config is not None
    return read_bindings, config


@dataclass(frozen=True, slots=True)
class _Context:
    """What a run made from files needs besides its log: the problem, bindings, servers."""

    problem: Problem
    bindings: Bindings
    config: ServersConfig

    @staticmethod
    def load(inputs: RunInputs) -> _Context:
        problem = load_problem_files(inputs.domain, inputs.problem)
        return _Context(problem, *load_run_files(inputs.bindings, inputs.servers))

    def replan_fn(self, catalog: ToolCatalog, first: Plan) -> ReplanFn:
        domain, bindings = self.problem.domain, self.bindings

        def rebind(new: Plan, available: Mapping[StepKey, str]) -> BoundPlan:
            return bind(
                new,
                domain,
                bindings,
                catalog,
                env=os.environ,
                available=available,
                configured=self.config.names,
            )

        return make_replan(self.problem, make_replanner(self.problem, first), rebind)


def made_from_files(inputs: Mapping[str, JSONValue]) -> bool:
    """Whether a run's recorded ``inputs`` name the files it was made from (``Engine.run``),
    so that it can be resumed; a run made by ``Engine.run_plan`` from a plan cannot."""
    return all(isinstance(inputs.get(k), str) for k in ("domain", "problem", "servers", "bindings"))


#: the key of a run's recorded ``inputs`` (``Engine.run``) that holds its approval policy,
#: as ``ApprovalPolicy.parse`` reads it; a run recorded without it has the default policy
POLICY_KEY = "approval_policy"


def recorded_policy(inputs: Mapping[str, JSONValue]) -> ApprovalPolicy:
    """The approval policy a run was made with (``Engine.run`` records it under
    ``POLICY_KEY``); the default ``ApprovalPolicy()`` for a run recorded without one."""
    text = inputs.get(POLICY_KEY)
    return ApprovalPolicy.parse(text) if isinstance(text, str) else ApprovalPolicy()


_RUN_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")
_RUN_ID_FORM = "1 to 128 characters of letters, digits, '-', '_' and '.', not starting with '.'"


def check_run_id(run_id: object) -> str:
    """``run_id`` if it is a run id a new run may have (it names the run's directory, so
    it is one path component); else ``InputError`` naming the allowed form."""
    if not isinstance(run_id, str) or _RUN_ID.fullmatch(run_id) is None:
        raise InputError(
            f"{run_id!r} is not a run id: a run id is {_RUN_ID_FORM}",
            hint="choose such an id, or give none (the engine makes one: r-HEX)",
        )
    return run_id


def _json_inputs(inputs: object) -> dict[str, JSONValue]:
    """``inputs`` as the JSON object ``RunCreated`` holds; ``InputError`` when it is not
    one (a ``Path``, a set, a NaN: nothing would be written, or JSON that is not)."""
    if not isinstance(inputs, Mapping) or not all(isinstance(k, str) for k in inputs):
        raise InputError(
            f"inputs must be a JSON object with text keys, not {type(inputs).__name__}",
            hint="pass a dict of str to JSON values (text, numbers, booleans, None, lists, dicts)",
        )
    try:
        text = json.dumps(dict(inputs), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise InputError(
            f"inputs are not JSON: {error}",
            hint="give JSON values only (e.g. str(path) for a Path, a finite number for"
            " a float; NaN and infinities are not JSON)",
        ) from None
    value = json.loads(text)
    assert isinstance(value, dict)
    return value


def _strings_at(template: JSONValue, at: str = "") -> list[tuple[str, str]]:
    """``(JSON Pointer, text)`` of each string of ``template``."""
    if isinstance(template, str):
        return [(at, template)]
    if isinstance(template, dict):
        pairs = template.items()
    elif isinstance(template, list):
        pairs = ((str(i), v) for i, v in enumerate(template))  # type: ignore[assignment]
    else:
        return []
    found: list[tuple[str, str]] = []
    for key, value in pairs:
        part = str(key).replace("~", "~0").replace("/", "~1")
        found.extend(_strings_at(value, f"{at}/{part}"))
    return found


def check_env(bound: BoundPlan, bindings: Bindings, env: Mapping[str, str]) -> None:
    """The ``${env.NAME}`` references of ``bound``'s steps whose variable ``env`` does not
    set: ``BindingError`` as ``bind`` says it (located at the binding's argument, if the
    bindings still name the action), one problem per reference, those of one binding
    that several steps meet merged into one naming the steps (``merge_across_steps``)."""
    problems: list[BindingError] = []
    for step in bound.steps:
        binding = bindings.get(step.step.action)
        for pointer, text in _strings_at(step.arguments):
            for inner, ref in find_refs(text):
                if not isinstance(ref, EnvRef) or ref.name in env:
                    continue
                where = None
                if binding is not None:
                    where = binding.where_argument(pointer) or binding.where("arguments")
                problems.append(
                    BindingError(
                        f"${{{inner}}}: environment variable {ref.name} is not set",
                        location=replace(where or Location(), step=step.id),
                        hint=f"export {ref.name}=... before running plansmith",
                    )
                )
    merged = merge_across_steps(problems)
    if len(merged) == 1:
        raise merged[0]
    if merged:
        raise BindingError(
            f"{len(merged)} binding problem(s)",
            location=Location(bindings.source),
            hint="export each variable named before resuming",
            problems=merged,
        )


def _run_inputs(inputs: object) -> RunInputs:
    """``inputs`` if it is a ``RunInputs``; else ``InputError`` (a path given alone)."""
    if not isinstance(inputs, RunInputs):
        raise InputError(
            f"a run's inputs are a RunInputs, not {type(inputs).__name__}",
            hint="give RunInputs(domain, problem, servers, bindings): the four files' paths",
        )
    return inputs


def _policy(policy: object) -> ApprovalPolicy:
    """``policy``, or the default ``ApprovalPolicy()`` for None; else ``InputError``."""
    if policy is None:
        return ApprovalPolicy()
    if not isinstance(policy, ApprovalPolicy):
        raise InputError(
            f"policy must be an ApprovalPolicy, not {type(policy).__name__}",
            hint='give ApprovalPolicy(frozenset({Tier.WRITE})) or ApprovalPolicy.parse("write")',
        )
    return policy


def _max_parallel(max_parallel: object) -> int:
    """``max_parallel``, checked before anything of the run is written: an ``int`` of 1
    or more (not a bool); else ``InputError``, rather than a runner that clamps it."""
    if isinstance(max_parallel, bool) or not isinstance(max_parallel, int) or max_parallel < 1:
        raise InputError(
            f"max_parallel must be an integer of 1 or more, not {max_parallel!r}",
            hint="max_parallel is the number of steps in flight at most: 1 or more",
        )
    return max_parallel


def _subscriber(subscribe: Subscriber | None) -> Subscriber | None:
    """``subscribe``, checked (``check_view``) before anything of the run is written."""
    return None if subscribe is None else check_view(subscribe)


def _file_inputs(run_id: str, inputs: Mapping[str, JSONValue]) -> RunInputs:
    """The files ``run_id`` was made from; a run made by ``Engine.run_plan`` from a plan
    (no domain and problem file to load) cannot be resumed."""
    if not made_from_files(inputs):
        raise ExecutionError(
            f"run {run_id} was run from a plan made elsewhere, not from files: "
            "it cannot be resumed",
            hint="start a new run (with Engine.run_plan: run the plan again)",
        )
    files = RunInputs.from_dict(inputs)
    for path in (files.domain, files.problem, files.servers, files.bindings):
        if not path.is_absolute() and not path.exists():  # recorded by an older plansmith
            raise InputError(
                f"run {run_id} names its files relative to the directory it was started"
                f" in, and {path} is not in {Path.cwd()}",
                location=Location(str(path)),
                hint=f"run `plansmith resume {run_id}` from the directory where"
                " `plansmith run` started it",
            )
    return files


def _as_recorded(replan: ReplanFn, events: list[Event], problem: Problem) -> ReplanFn:
    """``replan``, brought to where the run's recorded replans left it.

    An HTN replanner decomposes the tasks that remain of the plan in force, which it
    keeps between calls; a resumed run's replanner starts from the first plan. The
    planner is deterministic, so each recorded replan is made again, from the state the
    run had then (its requests are folded from the log as the runner made them), and the
    replanner's plan in force is the run's again. A classical replanner keeps nothing.
    """
    if not problem.tasks:
        return replan
    state = RunState(events[0].run_id if events else "")
    for event in events:
        if isinstance(event, Replanned) and state.bound is not None:
            by_id = {s.id: s.step for s in state.bound.steps}
            failed = [*state.failed_all, *state.failed_pending]
            replan(
                ReplanRequest(
                    succeeded=tuple(by_id[i] for i in state.order if i in by_id),
                    failed=tuple(by_id[i] for i in failed if i in by_id),
                    replans=state.replans,
                )
            )
        apply_event(state, event)
    return replan


def _local_pool(config: ServersConfig, errlog: TextIO | None) -> ServerPool:
    return ServerPool(config, errlog=errlog)


#: the reason of a run cancelled by an interrupt, not by ``Engine.cancel`` (the runner's)
INTERRUPTED = "the engine was interrupted"


class _Starting:
    """A run being planned, or whose servers start (or whose plan is bound), in ``starts``
    while entered: ``Engine.cancel`` sets ``reason`` and cancels ``scope``, which the
    ``with`` block then ends (the run is recorded cancelled, see
    ``Engine._cancelled_starting``)."""

    def __init__(self, run_id: str, starts: dict[str, _Starting]) -> None:
        self.run_id = run_id
        self.starts = starts
        self.scope = anyio.CancelScope()
        self.reason: str | None = None

    def __enter__(self) -> _Starting:
        self.starts[self.run_id] = self
        self.scope.__enter__()
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> bool:
        try:
            return self.scope.__exit__(et, e, tb)
        finally:
            if self.starts.get(self.run_id) is self:
                del self.starts[self.run_id]

    def outcome(self) -> RunOutcome:
        return RunOutcome(self.run_id, "cancelled", self.reason or INTERRUPTED, {})


class Engine:
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
    ) -> None:
        # absolute: ``${run.dir}`` and the run's files are the same from any directory
        # (a stdio server with its own cwd gets a path it can use)
        self.home = Path(home).absolute()
        # OpenTelemetry only when asked for (OTEL_* variables): nothing is wrapped otherwise
        self.tracing = tracing if tracing is not None else tracing_from_env(os.environ)
        self.log: RunLog = log if log is not None else SqliteRunLog(self.home / "runs.db")
        self.pool_factory: PoolFactory = pool_factory or _local_pool
        self.leases: RunLeases | None = self.log if isinstance(self.log, RunLeases) else None
        self.engine_id = engine_id or new_engine_id()
        self._runners: dict[str, Runner] = {}  # the runs whose steps this engine runs now
        self.lease_ttl = lease_ttl
        self.lease_renew = lease_renew if lease_renew is not None else lease_ttl / 3
        self._driving: set[str] = set()
        self._starts: dict[str, _Starting] = {}  # runs whose servers start here now
        self._leases_lost: set[str] = set()
        self._active: set[str] = set()  # the runs a run, run_plan or resume call drives now
        self._closed = False

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
        active = sorted(self._active | set(self._starts) | set(self._runners) | self._driving)
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

    def __enter__(self) -> Engine:
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def __aenter__(self) -> Engine:
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

    # -- check and bind -------------------------------------------------------------------

    @staticmethod
    def servers_used(bindings: Bindings, plan: Plan, config: ServersConfig) -> tuple[str, ...]:
        actions = {s.action for s in plan.steps}
        wanted = {b.server for b in bindings.bindings if b.action in actions}
        return tuple(n for n in config.names if n in wanted)

    async def check(self, inputs: RunInputs) -> tuple[Plan, BoundPlan, ToolCatalog]:
        """Plan, start the servers the bindings use, and bind: raises with every problem."""
        self._open()
        inputs = _run_inputs(inputs)
        problem = load_problem_files(inputs.domain, inputs.problem)
        plan = await _plan_in_thread(problem)
        bindings, config = load_run_files(inputs.bindings, inputs.servers)
        used = self.servers_used(bindings, plan, config)
        failed: ServerStartError | None = None
        # The servers' error output goes to a file, not the terminal: kept when a server
        # did not start and wrote something (the error's hint names it), else removed.
        fd, errlog_path = tempfile.mkstemp(prefix="plansmith-check-", suffix=".servers.log")
        os.close(fd)
        try:
            with open(errlog_path, "w", encoding="utf-8") as errlog:
                async with self.open_pool(config, errlog) as pool:
                    try:
                        catalog = await pool.start(used)
                    except ServerStartError as error:  # the others' bindings are checked
                        own = pool.catalog() if isinstance(pool, ServerPool) else None
                        catalog, failed = own or ToolCatalog(), error
        finally:
            with suppress(OSError):
                if failed is None or not os.path.getsize(errlog_path):
                    os.unlink(errlog_path)
        try:
            bound = bind(
                plan,
                problem.domain,
                bindings,
                catalog,
                env=os.environ,
                configured=config.names,
                unavailable=[n for n in used if not catalog.has_server(n)],
            )
        except BindingError as error:
            if failed is None:
                raise
            raise ServerStartError(
                failed.message, location=failed.location, hint=failed.hint, problems=(error,)
            ) from None
        if failed is not None:
            raise failed
        return plan, bound, catalog

    # -- run, resume, replay --------------------------------------------------------------

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

    async def run(
        self,
        inputs: RunInputs,
        *,
        approve: bool = False,
        policy: ApprovalPolicy | None = None,
        max_parallel: int = 8,
        subscribe: Subscriber | None = None,
        run_id: str | None = None,
    ) -> RunOutcome:
        """Plan from ``inputs``' files, then ``run_plan`` (replanning with the classical or
        HTN replanner); the inputs are stored with the run, with their contents' digests,
        so that it can be resumed (and ``changed_inputs`` can tell what changed since).

        The planner searches in a worker thread: cancelling the caller's task stops the
        search and records nothing; ``cancel(run_id)`` stops it and records the run
        cancelled, as when it is cancelled while its servers start.

        ``policy`` is recorded with the run (``POLICY_KEY`` of its inputs, as
        ``ApprovalPolicy.parse`` reads it): ``resume`` approves by it, and lets a replan
        use the tiers it lets run without a person."""
        self._open()
        max_parallel = _max_parallel(max_parallel)
        inputs = _run_inputs(inputs).resolved()  # recorded so: resume works from any directory
        run_id = self._new_run(run_id if run_id is not None else self.new_run_id())
        policy = _policy(policy)
        subscribe = _subscriber(subscribe)
        paths = inputs.to_dict()
        digests = file_digests({k: Path(paths[k]) for k in KINDS})  # before loading
        recorded: dict[str, JSONValue] = {**paths, **digests, POLICY_KEY: policy.text()}
        ctx = _Context.load(inputs)
        self._active.add(run_id)
        try:
            with self._starting(run_id) as start:
                plan = await _plan_in_thread(ctx.problem)
            if start.reason is not None:  # ``cancel`` while the planner searched

                async def cancelled() -> RunOutcome:
                    emitter, _ = self._create_run(run_id, recorded, subscribe)
                    self._cancelled_starting(emitter, start)
                    return start.outcome()

                return await self._driven(run_id, cancelled)
        finally:
            self._active.discard(run_id)
        return await self.run_plan(
            plan,
            ctx.problem.domain,
            ctx.bindings,
            ctx.config,
            inputs=recorded,
            run_id=run_id,
            approve=approve,
            policy=policy,
            max_parallel=max_parallel,
            subscribe=subscribe,
            replan=lambda catalog: ctx.replan_fn(catalog, plan),
        )

    async def run_plan(
        self,
        plan: Plan,
        domain: Domain,
        bindings: Bindings,
        config: ServersConfig | RunTools,
        *,
        inputs: Mapping[str, JSONValue],
        run_id: str | None = None,
        approve: bool = False,
        policy: ApprovalPolicy | None = None,
        max_parallel: int = 8,
        subscribe: Subscriber | None = None,
        replan: ReplanFactory | None = None,
    ) -> RunOutcome:
        """Run ``plan``, made elsewhere, under the run's lease and traced like ``run``.

        Records the run (``inputs`` in its ``RunCreated``), starts the servers of
        ``config`` that the plan's bindings use (or takes the tools at hand of a
        ``RunTools``), binds, approves by ``policy`` (default ``ApprovalPolicy()``; a plan
        with a tier that needs a person stops ``AwaitingApproval`` unless ``approve``),
        and runs it. ``replan(catalog)`` makes the runner's replan hook once the tools
        are known (None, or returning None: no replanning). A server that does not
        start or a plan that does not bind ends the run ``failed`` and raises; so does a
        view that stops the run (raises a ``PlansmithError``) before its runner runs.

        A ``run_id`` the log holds already is refused (``InputError``: run X already
        exists) before anything is written, as are a ``run_id`` not of the allowed form
        (see ``check_run_id``), ``inputs`` that are not JSON, a ``config`` of another
        type, a ``max_parallel`` that is not an int of 1 or more (as by ``run``, ``resume``
        and the take-overs) and an async ``subscribe`` (a view is called synchronously).
        """
        self._open()
        if not isinstance(config, ServersConfig | RunTools):
            raise InputError(
                f"config must be a ServersConfig or RunTools, not {type(config).__name__}",
                hint="read an mcpServers file with plansmith.servers.load_servers, or give"
                " tools at hand as RunTools(catalog, invoker)",
            )
        recorded = _json_inputs(inputs)
        max_parallel = _max_parallel(max_parallel)
        run_id = self._new_run(run_id if run_id is not None else self.new_run_id())
        checked_policy = _policy(policy)
        subscribe = _subscriber(subscribe)
        self._active.add(run_id)
        try:
            return await self._driven(
                run_id,
                lambda: self._run_plan(
                    plan,
                    domain,
                    bindings,
                    config,
                    inputs=recorded,
                    run_id=run_id,
                    approve=approve,
                    policy=checked_policy,
                    max_parallel=max_parallel,
                    subscribe=subscribe,
                    replan=replan,
                ),
            )
        finally:
            self._active.discard(run_id)

    async def _run_plan(
        self,
        plan: Plan,
        domain: Domain,
        bindings: Bindings,
        config: ServersConfig | RunTools,
        *,
        inputs: dict[str, JSONValue],
        run_id: str,
        approve: bool,
        policy: ApprovalPolicy,
        max_parallel: int,
        subscribe: Subscriber | None,
        replan: ReplanFactory | None,
    ) -> RunOutcome:
        # from here on ``cancel`` cancels the run (a view may call it on ``RunCreated``)
        with self._starting(run_id) as start:
            emitter, traced = self._create_run(run_id, inputs, subscribe)
            if self._cancelled_now(emitter, start):
                return start.outcome()
            async with AsyncExitStack() as stack:
                try:
                    tools = await self._tools(stack, run_id, config, bindings, plan)
                    bound = bind(
                        plan,
                        domain,
                        bindings,
                        tools.catalog,
                        env=os.environ,
                        configured=config.names if isinstance(config, ServersConfig) else None,
                    )
                    if tools.route is not None:
                        bound = tools.route(bound)
                except (ServerStartError, BindingError) as error:
                    emitter.emit(RunFinished(run_id=run_id, state="failed", reason=error.message))
                    raise
                except (anyio.get_cancelled_exc_class(), KeyboardInterrupt):
                    self._cancelled_starting(emitter, start)
                    raise
                with self._stopped_by_view(emitter):
                    emitter.emit(
                        PlanReady(
                            run_id=run_id,
                            plan_hash=plan.hash,
                            plan=plan.to_dict(),
                            bound=bound_to_dict(bound),
                        )
                    )
                    if self._cancelled_now(emitter, start):
                        return start.outcome()
                    self._approve(
                        emitter,
                        start,
                        bound,
                        policy,
                        approve=approve,
                        resumable=made_from_files(inputs),
                    )
                if self._cancelled_now(emitter, start):
                    return start.outcome()
                state = fold(run_id, self.log.events(run_id))
                runner = self._runner(
                    state,
                    emitter,
                    traced(tools.invoker),
                    max_parallel=max_parallel,
                    limits=tools.limits,
                    replan=replan(tools.catalog) if replan is not None else None,
                    policy=policy,
                )
                try:
                    return await self._run_runner(runner)
                finally:
                    await self._flush_traces()
        return start.outcome()  # cancelled by ``cancel`` before the runner ran

    async def _tools(
        self,
        stack: AsyncExitStack,
        run_id: str,
        config: ServersConfig | RunTools,
        bindings: Bindings,
        plan: Plan,
    ) -> RunTools:
        """The run's tools: ``config`` itself, or the servers it lists that the plan uses,
        started in a pool that ``stack`` closes (their stderr in the run's servers.log)."""
        if isinstance(config, RunTools):
            return config
        errlog = stack.enter_context((self.run_dir(run_id) / "servers.log").open("a"))
        pool = await stack.enter_async_context(self.open_pool(config, errlog))
        catalog = await pool.start(self.servers_used(bindings, plan, config))
        return RunTools(catalog, McpInvoker(pool), _limits(config))

    def _create_run(
        self, run_id: str, inputs: dict[str, JSONValue], subscribe: Subscriber | None
    ) -> tuple[Emitter, Callable[[ToolInvoker], ToolInvoker]]:
        """Record ``run_id`` (``RunCreated``); its emitter, and how to trace its invoker."""
        self.run_dir(run_id)  # before the run is recorded: a home it cannot write makes none
        self.log.create_run(run_id, iso_time(utc_now()), inputs)
        emitter = self._emitter(run_id, 0, subscribe)
        traced = self._trace(emitter)
        with self._stopped_by_view(emitter):
            emitter.emit(RunCreated(run_id=run_id, inputs=dict(inputs)))
        return emitter, traced

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

    def _cancelled_now(self, emitter: Emitter, start: _Starting) -> bool:
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

    def _approve(
        self,
        emitter: Emitter,
        start: _Starting,
        bound: BoundPlan,
        policy: ApprovalPolicy,
        *,
        approve: bool,
        resumable: bool = True,
    ) -> None:
        """``PlanApproved``, or ``AwaitingApproval`` and ``ApprovalRequiredError`` when the
        plan needs a person and ``approve`` is false. A view that cancels the run on
        ``AwaitingApproval`` wins: no error, and the caller records the run cancelled
        (``_cancelled_now``), as for a cancel on ``PlanReady`` or ``PlanApproved``."""
        tiers = tiers_needing_approval(bound, policy)
        if tiers and not approve:
            emitter.emit(
                AwaitingApproval(run_id=emitter.run_id, plan_hash=bound.plan_hash, tiers=tiers)
            )
            if start.reason is not None:  # cancelled by a view of ``AwaitingApproval``
                return
            raise ApprovalRequiredError(
                f"run {emitter.run_id} awaits approval of plan {bound.plan_hash} "
                f"(tiers: {', '.join(tiers)})",
                hint=f"approve with `plansmith resume {emitter.run_id} --yes`"
                if resumable
                else "a run made from a plan (Engine.run_plan), not from files, cannot be"
                " resumed: once a person approved this hash, run the plan again with"
                " approve=True as a new run (another run_id, or none)",
            )
        by = "person" if tiers else "policy"
        emitter.emit(PlanApproved(run_id=emitter.run_id, plan_hash=bound.plan_hash, by=by))

    def _runner(
        self,
        state: RunState,
        emitter: Emitter,
        invoker: ToolInvoker,
        *,
        max_parallel: int,
        limits: Mapping[str, int] | None = None,
        replan: ReplanFn | None = None,
        policy: ApprovalPolicy | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Runner:
        """The runner for ``state``; a replan may use the tiers of the approved plan and
        those that ``policy`` (default: the default policy) lets run without a person.
        ``${env.NAME}`` is rendered from ``env`` (default: this process's environment)."""
        return Runner(
            invoker,
            self.log,
            state,
            max_parallel=max_parallel,
            server_limits=limits,
            replan=replan,
            env=os.environ if env is None else env,
            run_dir=str(self.run_dir(state.run_id)),
            emitter=emitter,
            unattended_tiers=frozenset(Tier) - (policy or ApprovalPolicy()).needs_person,
        )

    async def _run_runner(self, runner: Runner) -> RunOutcome:
        run_id = runner.state.run_id
        self._starts.pop(run_id, None)  # from here on the runner takes a cancel
        self._runners[run_id] = runner
        try:
            return await runner.run()
        finally:
            self._runners.pop(run_id, None)

    def _starting(self, run_id: str) -> _Starting:
        """While ``run_id`` is planned, or its servers start and its plan is bound:
        ``cancel`` cancels ``start.scope`` (the run is then recorded cancelled, see
        ``_cancelled_starting``)."""
        return _Starting(run_id, self._starts)

    def _cancelled_starting(self, emitter: Emitter, start: _Starting) -> None:
        """Record a run cancelled before its runner ran (planning, servers starting,
        binding), as the runner records one cancelled later: by ``cancel`` with its reason,
        else (the task was cancelled, Ctrl-C) "the engine was interrupted". Not when its
        lease was lost: the run is another engine's now."""
        if start.run_id in self._leases_lost:
            return
        reason = start.reason or INTERRUPTED
        emitter.emit(RunCancelled(run_id=start.run_id, reason=reason))
        emitter.emit(RunFinished(run_id=start.run_id, state="cancelled", reason=reason))

    def cancel(self, run_id: str, reason: str = "cancelled") -> bool:
        """Cancel ``run_id`` if this engine is starting or running it: its planner's
        search, its servers' start-up or its calls in flight are cancelled and it ends
        ``cancelled`` with ``reason`` (``RunCancelled`` and ``RunFinished`` in its log); its
        ``run`` or ``resume`` then returns. Called from a view at any point once the run is
        recorded (``RunCreated``, ``PlanReady``, ``AwaitingApproval``, ``PlanApproved``), no
        step of it starts (and a run awaiting approval ends cancelled, not awaiting it).
        False when this engine is not driving it (not
        started yet, or finished): the caller stops it otherwise, e.g. by cancelling the task
        that runs it."""
        runner = self._runners.get(run_id)
        if runner is not None:
            runner.cancel(reason)
            return True
        start = self._starts.get(run_id)
        if start is not None and start.reason is None:
            start.reason = reason
            start.scope.cancel()
            return True
        return start is not None  # cancelled already

    def changed_inputs(self, run_id: str) -> tuple[ChangedInput, ...]:
        """The input files of ``run_id`` whose contents are not those the run was made
        from (each with what that means for a resume: the recorded plan goes on, a replan
        or the servers use the file as it is now), or gone. Empty for a run recorded
        without digests (by an older plansmith) or made from a plan (``run_plan``)."""
        self._open()
        return changed_inputs(self.log.run(run_id).inputs)

    async def resume(
        self,
        run_id: str,
        *,
        approve: bool = False,
        max_parallel: int = 8,
        subscribe: Subscriber | None = None,
    ) -> RunOutcome:
        """Continue a run from its log: succeeded steps are not called again.

        A run whose lease another engine holds raises ``RunLeasedError``, unless that
        engine's process is gone from this host (then a person's resume need not wait).

        The run is approved by the policy it was made with (recorded by ``run``; the
        default ``ApprovalPolicy()`` for a run recorded without one), which also gives
        the tiers a replan may use unattended. A bound step that references
        ``${env.NAME}`` with NAME unset here is refused before approval (``BindingError``,
        as ``bind`` says it at run).
        """
        self._open()
        max_parallel = _max_parallel(max_parallel)
        subscribe = _subscriber(subscribe)
        self._active.add(run_id)
        try:
            return await self._driven(
                run_id,
                lambda: self._resume(run_id, approve, max_parallel, subscribe),
                explicit=True,
            )
        finally:
            self._active.discard(run_id)

    async def _resume(
        self, run_id: str, approve: bool, max_parallel: int, subscribe: Subscriber | None
    ) -> RunOutcome:
        info = self.log.run(run_id)
        state = fold(run_id, self.log.events(run_id))
        if state.finished is not None:
            outputs = {k: unpack(self.log, v) for k, v in state.outputs.items()}
            return RunOutcome(run_id, state.finished, state.finished_reason, outputs)
        bound = state.bound
        if bound is None:
            raise ExecutionError(
                f"run {run_id} stopped before its plan was bound", hint="start a new run"
            )
        ctx = _Context.load(_file_inputs(run_id, info.inputs))
        # the run's first plan; the replans recorded after it are made again (below), so
        # that an HTN replanner decomposes what remains of the plan in force
        first = parse_plan_json(json.dumps(state.plan))
        errlog_path = self.run_dir(run_id) / "servers.log"
        missing = sorted({s.server for s in bound.steps} - set(ctx.config.names))
        if missing:  # before it is approved: a servers file edited since the run began
            raise ServerConfigError(
                f"run {run_id} calls server(s) {', '.join(map(repr, missing))}, which the"
                f" servers file no longer names",
                location=Location(str(ctx.config.source)) if ctx.config.source else None,
                hint=f"put them back in {ctx.config.source or 'the servers file'} (the run"
                " goes on with the plan it recorded), or start a new run",
            )
        # a bound step's ${env.X} with X unset here: as ``bind`` says it at run
        check_env(bound, ctx.bindings, os.environ)
        policy = recorded_policy(info.inputs)  # the run's own (default for older runs)
        emitter = self._emitter(run_id, state.last_seq, subscribe)
        used = tuple(n for n in ctx.config.names if n in {s.server for s in bound.steps})
        with self._starting(run_id) as start:
            if state.approved is None or state.approved != state.plan_hash:
                with self._stopped_by_view(emitter):
                    self._approve(emitter, start, bound, policy, approve=approve)
                state = fold(run_id, self.log.events(run_id))
            if self._cancelled_now(emitter, start):
                return start.outcome()
            async with AsyncExitStack() as stack:
                try:
                    errlog = stack.enter_context(errlog_path.open("a"))
                    pool = await stack.enter_async_context(self.open_pool(ctx.config, errlog))
                    catalog = await pool.start(used)
                except (anyio.get_cancelled_exc_class(), KeyboardInterrupt):
                    self._cancelled_starting(emitter, start)
                    raise
                invoker = self._trace(emitter, state)(McpInvoker(pool))
                runner = self._runner(
                    state,
                    emitter,
                    invoker,
                    max_parallel=max_parallel,
                    limits=_limits(ctx.config),
                    replan=_as_recorded(
                        ctx.replan_fn(catalog, first), self.log.events(run_id), ctx.problem
                    ),
                    policy=policy,
                )
                try:
                    return await self._run_runner(runner)
                finally:
                    await self._flush_traces()
        return start.outcome()  # cancelled by ``cancel`` before the runner ran

    # -- leases: one engine drives a run ------------------------------------------------

    def _acquire(self, leases: RunLeases, run_id: str, *, explicit: bool) -> None:
        if run_id in self._driving:
            raise RunLeasedError(
                f"run {run_id} is already driven by this engine ({self.engine_id})",
                hint="wait for that run to end",
            )
        for _ in range(3):  # None: the holder released it between our two statements
            lease = leases.acquire(run_id, self.engine_id, self.lease_ttl)
            # a person's resume need not wait for a lease whose process died on this host
            held = lease is not None and lease.owner != self.engine_id
            if explicit and held and lease is not None and owner_gone(lease.owner):
                lease = leases.acquire(
                    run_id, self.engine_id, self.lease_ttl, replacing=lease.owner
                )
            if lease is None:
                continue
            if lease.owner == self.engine_id:
                return
            until = iso_time(lease.expires)
            raise RunLeasedError(
                f"run {run_id} is driven by engine {lease.owner} until {until}",
                hint="wait for it to finish; if that engine is gone, another engine takes"
                f" the run over after {until} (or `plansmith resume {run_id}` then)",
            )
        raise RunLeasedError(f"run {run_id}: its lease changed hands while it was taken")

    async def _keep_lease(
        self, leases: RunLeases, run_id: str, scope: anyio.CancelScope, lost: list[str]
    ) -> None:
        """Renew the lease until cancelled; when it is lost, cancel the run (``scope``)."""
        renewed = time.monotonic()
        while True:
            await anyio.sleep(self.lease_renew)  # a period, not a synchronisation
            try:
                if leases.renew(run_id, self.engine_id, self.lease_ttl):
                    renewed = time.monotonic()
                    continue
                reason = "another engine took its lease"
            except PlansmithError as error:  # the log is unreachable: retry until expiry
                if time.monotonic() - renewed < self.lease_ttl:
                    continue
                reason = f"its lease could not be renewed: {error.message}"
            lost.append(reason)
            self._leases_lost.add(run_id)  # the run is not this engine's to record
            scope.cancel()
            return

    async def _driven(
        self, run_id: str, body: Callable[[], Awaitable[RunOutcome]], *, explicit: bool = False
    ) -> RunOutcome:
        """``body()`` under the run's lease, renewed in a background task meanwhile."""
        leases = self.leases
        if leases is None:
            return await body()
        self._acquire(leases, run_id, explicit=explicit)
        self._driving.add(run_id)
        lost: list[str] = []
        outcome: RunOutcome | None = None
        caught: BaseException | None = None
        scope = anyio.CancelScope()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._keep_lease, leases, run_id, scope, lost)
                try:
                    with scope:
                        outcome = await body()
                except BaseException as error:  # raised below, outside the task group
                    caught = error
                tg.cancel_scope.cancel()
        finally:
            self._driving.discard(run_id)
            self._leases_lost.discard(run_id)
            leases.release(run_id, self.engine_id)
        if lost:
            raise RunLeasedError(
                f"run {run_id} stopped: engine {self.engine_id} lost its lease ({lost[0]})",
                hint="another engine drives the run now; raise the lease time if engines"
                " stall for longer than it",
            ) from caught
        if caught is not None:
            raise caught
        assert outcome is not None
        return outcome

    async def take_over_expired(
        self, *, max_parallel: int = 8, subscribe: Subscriber | None = None
    ) -> list[RunOutcome]:
        """Resume, side by side, every unfinished run whose lease expired (a crashed
        engine's) and return the outcomes of those this engine took. A run another
        engine took first is skipped; one that cannot be resumed gives a ``failed``
        outcome whose reason says why (its log is left as it was)."""
        max_parallel = _max_parallel(max_parallel)
        subscribe = _subscriber(subscribe)
        leases = self.leases
        if leases is None:
            return []
        outcomes: list[RunOutcome] = []

        async def take(run_id: str) -> None:
            outcome = await self._take_over(run_id, max_parallel, subscribe)
            if outcome is not None:
                outcomes.append(outcome)

        async with anyio.create_task_group() as tg:
            for run_id in leases.expired_unfinished():
                if run_id not in self._driving:
                    tg.start_soon(take, run_id)
        return outcomes

    async def _take_over(
        self, run_id: str, max_parallel: int, subscribe: Subscriber | None
    ) -> RunOutcome | None:
        try:
            return await self._driven(
                run_id, lambda: self._resume(run_id, False, max_parallel, subscribe)
            )
        except RunLeasedError:
            return None  # another engine was first (or this one drives it already)
        except PlansmithError as error:
            return RunOutcome(run_id, "failed", f"could not take the run over: {error.message}")

    async def keep_taking_over(
        self,
        *,
        every: float | None = None,
        max_parallel: int = 8,
        subscribe: Subscriber | None = None,
        on_outcome: Callable[[RunOutcome], None] | None = None,
    ) -> None:
        """Until cancelled: every ``every`` seconds (default half the lease ttl), take over
        each unfinished run whose lease expired. Each taken run goes on in the
        background, so a long one does not hold up the next scan. For services that
        share their log with other engines (``plansmith serve`` / ``mcp``)."""
        max_parallel = _max_parallel(max_parallel)
        subscribe = _subscriber(subscribe)
        leases = self.leases
        if leases is None:
            return
        period = every if every is not None else self.lease_ttl / 2
        starting: set[str] = set()

        async def take(run_id: str) -> None:
            try:
                outcome = await self._take_over(run_id, max_parallel, subscribe)
            finally:
                starting.discard(run_id)
            if outcome is not None and on_outcome is not None:
                on_outcome(outcome)

        async with anyio.create_task_group() as tg:
            while True:
                for run_id in leases.expired_unfinished():
                    if run_id not in self._driving and run_id not in starting:
                        starting.add(run_id)
                        tg.start_soon(take, run_id)
                await anyio.sleep(period)  # a polling period, not a synchronisation

    async def replay(self, run_id: str, *, subscribe: Subscriber | None = None) -> list[Event]:
        """Run the recorded run again offline against its recorded outcomes: each part of
        it (one per engine that drove it: the first run, each resume or take-over) from
        the log as that engine found it, ended where the record ends it (a killed
        engine's part stops there, a cancelled one is cancelled with its reason). It does
        not depend on this process's environment: ``${env.NAME}`` is rendered as its own
        text (``replay_env``), as no tool is called. Raises
        ``ExecutionError`` when the replay calls an attempt the record has no outcome
        for in a part that finished (the log is not this plan's, or is damaged)."""
        self._open()
        events = self.log.events(run_id)
        memory = MemoryRunLog()
        memory.create_run(run_id, "", {})
        emitter = Emitter(memory, run_id)
        if subscribe is not None:
            emitter.subscribe(subscribe)
        for part in recorded_parts(events):
            for event in part.before:
                emitter.emit(event)
            if part.events:
                await self._replay_part(run_id, events, part, emitter)
        return memory.events(run_id)

    async def _replay_part(
        self, run_id: str, events: list[Event], part: RecordedPart, emitter: Emitter
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

        runner = self._runner(  # offline: the recorded replans, whatever their tiers
            state,
            emitter,
            ReplayInvoker(self.log, part.events, unrecorded=unrecorded),
            max_parallel=part.peak,  # as many in flight as the part had, no more
            replan=replay_replan(events),
            policy=ApprovalPolicy(frozenset()),
            env=replay_env(events),  # not this machine's: the replay calls no tool
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


def open_engine(
    home: Path | str,
    *,
    log: str | Path | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    lease_ttl: float = 30.0,
    existing: bool = False,
    read_only: bool = False,
) -> Engine:
    """An engine whose run log is ``log`` (a SQLite file, default ``home/runs.db``, or a
    ``postgresql://`` URL) and whose steps run locally or on a Dask cluster (``executor``
    ``dask`` with the ``scheduler`` address). Bad combinations are ``InputError``s; with
    ``existing``, so is a SQLite run log that is not there; with ``read_only``, a SQLite
    run log is only read (see ``open_run_log``)."""
    if executor not in ("local", "dask"):
        raise InputError(f"--executor {executor!r}: unknown", hint="use local or dask")
    if executor == "local" and scheduler:
        raise InputError(
            "--scheduler is only for --executor dask", hint="add --executor dask, or drop it"
        )
    pool_factory: PoolFactory | None = None
    if executor == "dask":
        if not scheduler:
            raise InputError(
                "--executor dask needs the cluster's scheduler address",
                hint="add --scheduler tcp://HOST:PORT (or set PLANSMITH_DASK_SCHEDULER)",
            )
        pool_factory = dask_pool_factory(scheduler)
    try:
        run_log = open_run_log(log, Path(home), existing=existing, read_only=read_only)
    except OSError as error:  # e.g. a file where the home's directory should be
        raise ExecutionError(
            f"cannot make the run log's directory: {error.strerror or error}",
            location=Location(str(error.filename or home)),
            hint="runs are kept under --home (or PLANSMITH_HOME): give a directory plansmith"
            " can write",
        ) from None
    return Engine(home, log=run_log, pool_factory=pool_factory, lease_ttl=lease_ttl)
