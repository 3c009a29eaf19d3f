"""The engine: composes planning, binding, servers and the runner; the one place that
picks implementations (SQLite log, MCP invoker, the classical replanner).

``Engine(home)`` keeps its run log in ``home/runs.db`` and a directory per run in
``home/runs/RUN_ID``. Every face (CLI, MCP server, web) goes through it.

Runs are leased (``execution.RunLeases``) when the log has leases: ``run`` and ``resume``
take the run's lease under the engine's id, renew it every ``lease_renew`` seconds while
the run is live, and release it when the run ends, so that engines sharing one log
(PostgreSQL) never drive the same run at once. ``take_over_expired`` and
``keep_taking_over`` resume the unfinished runs whose lease expired (a crashed engine's).

The planner and the invoker over a pool of servers are the engine's arguments
(``planner``, ``invoker_factory``), so that a test or a benchmark observes them by
passing its own, not by patching module names.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import anyio

from plansmith._run_digests import KINDS, file_digests
from plansmith.binding import Bindings
from plansmith.engine._answers import record_answer
from plansmith.engine._checking import Checking
from plansmith.engine._core import InvokerFactory
from plansmith.engine._drive import Recipe
from plansmith.engine._follow_up import AFTER_KEY, follow_up_context
from plansmith.engine._inputs import (
    ASKED_KEY,
    COSTS_KEY,
    HOLD_KEY,
    OWNER_KEY,
    POLICY_KEY,
    RunInputs,
    Subscriber,
    checked_max_parallel,
    checked_policy,
    checked_subscriber,
    file_inputs,
    json_inputs,
    made_from_files,
    recorded_policy,
    run_inputs,
)
from plansmith.engine._made import MADE_KEY, MadeRun, MakeContext, find_maker, made_by
from plansmith.engine._planning import (
    RunContext,
    make_costed_plan,
    plan_in_thread,
)
from plansmith.engine._tools import (
    ReplanFactory,
    RunTools,
)
from plansmith.errors import (
    ExecutionError,
    InputError,
    Location,
)
from plansmith.execution import (
    ApprovalPolicy,
    Emitter,
    LearnedCost,
    PlanApproved,
    RunOutcome,
    RunRetried,
    declared_costs,
    fold,
    learned_costs,
    stats_of,
    tiers_needing_approval,
)
from plansmith.model import Domain, JSONValue, Plan, Problem
from plansmith.servers import (
    ServersConfig,
)

__all__ = ["Engine", "InvokerFactory"]


class Engine(Checking):
    """Runs plans durably; see the module docstring.

    ``lease_ttl``: seconds a run's lease lasts without renewal (another engine may take
    the run over after that); ``lease_renew``: seconds between renewals (default a third
    of the ttl); ``engine_id``: the owner name of this engine's leases (default
    ``HOST:PID:RANDOM``).
    """

    # -- run, resume, replay --------------------------------------------------------------

    async def run(
        self,
        inputs: RunInputs,
        *,
        approve: bool = False,
        policy: ApprovalPolicy | None = None,
        max_parallel: int = 8,
        subscribe: Subscriber | None = None,
        run_id: str | None = None,
        owner: str = "",
        approver: str = "",
        plan: Plan | None = None,
        hold: bool = False,
        asked: Mapping[str, JSONValue] | None = None,
        costs: Mapping[str, float] | None = None,
        after: str | None = None,
    ) -> RunOutcome:
        """Plan from ``inputs``' files, then ``run_plan`` (replanning with the classical or
        HTN replanner); the inputs are stored with the run, with their contents' digests,
        so that it can be resumed (and ``changed_inputs`` can tell what changed since).

        The planner searches in a worker thread: cancelling the caller's task stops the
        search and records nothing; ``cancel(run_id)`` stops it and records the run
        cancelled, as when it is cancelled while its servers start.

        ``policy`` is recorded with the run (``POLICY_KEY`` of its inputs, as
        ``ApprovalPolicy.parse`` reads it): ``resume`` approves by it, and lets a replan
        use the tiers it lets run without a person. ``owner`` (a face's name for who
        started the run) is recorded too (``OWNER_KEY``), for the faces' run lists.

        ``plan``: the plan the caller made from these very files with this engine's
        planner (a face that shows the plan before the run is made); it is not planned
        again. ``hold``: the run stops ``AwaitingApproval`` once its plan is bound, even
        when its policy needs no person (a face that lets its user start it later:
        ``approve`` goes on with it); recorded (``HOLD_KEY``), so a resume holds it too.
        ``asked``: what the face's user asked for (request, goal, translation), recorded
        (``ASKED_KEY``) for the run's report. ``costs``: action costs to plan with
        instead of the declared ones (``learned_costs``), recorded (``COSTS_KEY``): it is
        planned, replanned and resumed with them, by ``make_costed_plan`` (A* with
        LM-cut: the costs decide), not by this engine's ``planner``. ``after``: a
        finished run of the same domain to follow up (recorded, ``AFTER_KEY``): planned
        from its final symbolic state, its outputs read by reference, its steps not
        called again (see ``plansmith.engine.follow_up_context``); a run that is not
        there, not finished or of another domain is refused before anything is written."""
        self._open()
        max_parallel = checked_max_parallel(max_parallel)
        inputs = run_inputs(inputs).resolved()  # recorded so: resume works from any directory
        run_id = self._new_run(run_id if run_id is not None else self.new_run_id())
        policy = checked_policy(policy)
        subscribe = checked_subscriber(subscribe)
        paths = inputs.to_dict()
        digests = file_digests({k: Path(paths[k]) for k in KINDS})  # before loading
        recorded = _recorded({**paths, **digests}, policy, owner, hold, asked)
        if costs:
            recorded[COSTS_KEY] = {k: float(v) for k, v in sorted(costs.items())}
        ctx = RunContext.load(inputs, costs)
        if after is not None:  # a follow-up: from its parent's final state
            ctx = follow_up_context(self.log, after, ctx)
            recorded[AFTER_KEY] = after
        planner = make_costed_plan if costs else self.planner
        self._active.add(run_id)
        try:
            with self._starting(run_id) as start:
                if plan is None:
                    plan = await plan_in_thread(ctx.problem, planner)
            if start.reason is not None:  # ``cancel`` while the planner searched

                async def cancelled() -> RunOutcome:
                    emitter, _ = self._create_run(run_id, recorded, subscribe)
                    self._cancelled_starting(emitter, start)
                    return start.outcome()

                return await self._leases.driven(run_id, cancelled)
        finally:
            self._active.discard(run_id)
        assert plan is not None  # planned, or the search was cancelled (returned above)
        first = plan
        return await self.run_plan(
            plan,
            ctx.problem.domain,
            ctx.bindings,
            ctx.config,
            inputs=recorded,
            run_id=run_id,
            approve=approve,
            approver=approver,
            policy=policy,
            max_parallel=max_parallel,
            subscribe=subscribe,
            replan=lambda catalog: ctx.replan_fn(catalog, first, planner),
            hold=hold,
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
        approver: str = "",
        hold: bool = False,
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
        recorded = json_inputs(inputs)
        max_parallel = checked_max_parallel(max_parallel)
        run_id = self._new_run(run_id if run_id is not None else self.new_run_id())
        run_policy = checked_policy(policy)
        subscribe = checked_subscriber(subscribe)
        self._active.add(run_id)
        try:
            return await self._leases.driven(
                run_id,
                lambda: self._run_plan(
                    plan,
                    domain,
                    bindings,
                    config,
                    inputs=recorded,
                    run_id=run_id,
                    approve=approve,
                    approver=approver,
                    policy=run_policy,
                    max_parallel=max_parallel,
                    subscribe=subscribe,
                    replan=replan,
                    hold=hold,
                ),
            )
        finally:
            self._done_driving(run_id)

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
        approver: str,
        policy: ApprovalPolicy,
        max_parallel: int,
        subscribe: Subscriber | None,
        replan: ReplanFactory | None,
        hold: bool = False,
    ) -> RunOutcome:
        # from here on ``cancel`` cancels the run (a view may call it on ``RunCreated``)
        with self._starting(run_id) as start:
            emitter, traced = self._create_run(run_id, inputs, subscribe)
            if self._cancelled_now(emitter, start):
                return start.outcome()
            recipe = Recipe(
                domain,
                bindings,
                config,
                None if replan is None else (lambda catalog, _first: replan(catalog)),
                plan=plan,
            )
            return await self._drive(
                emitter,
                traced,
                start,
                recipe,
                approve=approve,
                approver=approver,
                policy=policy,
                max_parallel=max_parallel,
                resumable=made_from_files(inputs) or made_by(inputs) is not None,
                hold=hold,
            )
        return start.outcome()  # cancelled by ``cancel`` before the runner ran

    def learned_costs(self, problem: Problem) -> dict[str, LearnedCost]:
        """The cost of each action of ``problem``'s domain learned from this engine's
        run log (``plansmith.execution.learned_costs`` over every run it holds)."""
        runs = [self.log.events(info.run_id) for info in self.log.runs()]
        return learned_costs(stats_of(runs), declared_costs(problem))

    async def run_made(
        self,
        maker: str,
        args: Mapping[str, JSONValue],
        *,
        approve: bool = False,
        policy: ApprovalPolicy | None = None,
        max_parallel: int = 8,
        subscribe: Subscriber | None = None,
        run_id: str | None = None,
        owner: str = "",
        approver: str = "",
        hold: bool = False,
        asked: Mapping[str, JSONValue] | None = None,
    ) -> RunOutcome:
        """Make the run of the run maker ``maker`` (see ``plansmith.engine.MADE_KEY``)
        from ``args``, then ``run_plan`` it, recording the maker's name and arguments so
        that ``approve``, ``resume``, ``retry`` and the take-overs make it again.

        A maker that is not installed, or refuses its arguments, raises before anything
        is recorded. ``policy``, ``owner``, ``hold`` and ``asked`` are recorded as by
        ``run``; the other arguments are ``run_plan``'s."""
        self._open()
        make = find_maker(maker, self.makers)
        recorded_args = json_inputs(args)
        policy = checked_policy(policy)
        run_id = self._new_run(run_id if run_id is not None else self.new_run_id())
        context = MakeContext(run_id, self.run_dir(run_id), self.log)
        made: MadeRun = await anyio.to_thread.run_sync(lambda: make(recorded_args, context))
        made_by: dict[str, JSONValue] = {MADE_KEY: {"maker": maker, "args": recorded_args}}
        recorded = _recorded(made_by, policy, owner, hold, asked)
        return await self.run_plan(
            made.plan,
            made.domain,
            made.bindings,
            made.config,
            inputs=recorded,
            run_id=run_id,
            approve=approve,
            policy=policy,
            max_parallel=max_parallel,
            subscribe=subscribe,
            replan=made.replan,
            approver=approver,
            hold=hold,
        )

    async def resume(
        self,
        run_id: str,
        *,
        approve: bool = False,
        approver: str = "",
        max_parallel: int = 8,
        subscribe: Subscriber | None = None,
    ) -> RunOutcome:
        """Continue a run from its log: succeeded steps are not called again.

        A run killed before its plan was bound (while its servers started) is planned
        and bound again from the files it was made from, then goes on as a new run.

        A run whose lease another engine holds raises ``RunLeasedError``, unless that
        engine's process is gone from this host (then a person's resume need not wait).

        The run is approved by the policy it was made with (recorded by ``run``; the
        default ``ApprovalPolicy()`` for a run recorded without one), which also gives
        the tiers a replan may use unattended; ``approve`` approves what needs a person,
        and ``approver`` names that person in the log (see ``approve``, which also
        checks the plan's hash). A bound step that references ``${env.NAME}`` with NAME
        unset here is refused before approval (``BindingError``, as ``bind`` says it at
        run).
        """
        return await self._go_on(
            run_id,
            approve=approve,
            approver=approver,
            max_parallel=max_parallel,
            subscribe=subscribe,
        )

    async def approve(
        self,
        run_id: str,
        plan_hash: str,
        *,
        by: str,
        max_parallel: int = 8,
        subscribe: Subscriber | None = None,
    ) -> RunOutcome:
        """A person (``by``: as the face names them, e.g. ``web:127.0.0.1``) approves
        the plan ``plan_hash`` of ``run_id``, which awaits approval, and the run goes on
        (as ``resume``). Any other hash is refused (``InputError``) and nothing is
        recorded: the approval is of the plan the person saw. ``PlanApproved`` records
        ``by`` as its ``approver``."""
        if not isinstance(plan_hash, str) or not plan_hash:
            raise InputError(
                f"plan_hash must be the plan's hash, not {plan_hash!r}",
                hint="give the hash the run's plan shows (sha256:...)",
            )
        return await self._go_on(
            run_id,
            approve=True,
            approver=by,
            plan_hash=plan_hash,
            max_parallel=max_parallel,
            subscribe=subscribe,
        )

    def record_approval(self, run_id: str, plan_hash: str, *, by: str) -> bool:
        """A person (``by``) approves the plan ``plan_hash`` of ``run_id``, which awaits
        approval, without going on with it: ``PlanApproved`` is recorded, and the run goes
        on when it is next approved, resumed or started (a face's ``approve_plan``, then
        its ``start_run``). Any other hash is refused (``InputError``), as is a run that
        finished or is not bound yet. False when the plan was approved already."""
        self._open()
        info = self.log.run(run_id)
        state = fold(run_id, self.log.events(run_id))
        if state.finished is not None:
            raise ExecutionError(
                f"run {run_id} has finished ({state.finished}): there is nothing to approve",
                hint="make a new plan (a new run) to do it again",
            )
        if state.bound is None or state.plan_hash != plan_hash:
            raise InputError(
                f"plan {plan_hash} is not the plan of run {run_id}"
                + (f" ({state.plan_hash})" if state.plan_hash else " (it has none yet)"),
                location=Location(argument="plan_hash"),
                hint="approve the plan the run shows: its hash is what a person saw",
            )
        if state.approved == plan_hash:
            return False
        tiers = tiers_needing_approval(state.bound, recorded_policy(info.inputs))
        Emitter(self.log, run_id, last_seq=state.last_seq).emit(
            PlanApproved(
                run_id=run_id,
                plan_hash=plan_hash,
                by="person" if tiers else "policy",
                approver=by if tiers else "",
            )
        )
        return True

    def record_answer(
        self, run_id: str, step: str, value: JSONValue, *, by: str, as_text: bool = False
    ) -> JSONValue:
        """A person (``by``) answers ask step ``step`` of ``run_id``, which waits for it
        (``awaiting answer``): ``AnswerRecorded`` is recorded under the run's lease and
        the run goes on when it is next resumed. ``as_text``: ``value`` was typed (``yes``,
        ``12``) and is read by the schema's type. An answer the step's schema refuses is
        an ``AnswerError`` with the schema's reason, and the run keeps waiting; a run
        another engine drives raises ``RunLeasedError``. The checked answer."""
        self._open()
        with self._leases.held(run_id):
            return record_answer(self.log, run_id, step, value, by=by, as_text=as_text)

    async def answer(
        self,
        run_id: str,
        step: str,
        value: JSONValue,
        *,
        by: str,
        as_text: bool = False,
        max_parallel: int = 8,
        subscribe: Subscriber | None = None,
    ) -> RunOutcome:
        """``record_answer``, then the run goes on (as ``resume``) from its answer."""
        self.record_answer(run_id, step, value, by=by, as_text=as_text)
        return await self.resume(run_id, max_parallel=max_parallel, subscribe=subscribe)

    async def retry(
        self,
        run_id: str,
        *,
        by: str = "",
        approve: bool = False,
        max_parallel: int = 8,
        subscribe: Subscriber | None = None,
    ) -> RunOutcome:
        """Go on with a run that failed or was cancelled, once its cause is fixed: its
        succeeded steps are kept (not called again), the steps that failed since its last
        replan, or were cancelled in flight, run again (with their idempotency keys), and
        it has a new replan budget (``RunRetried`` in its log, with ``by``). The servers,
        bindings and environment are those of now; the plan is the one approved. A run
        that has not finished is refused (resume it), as is a run that succeeded."""
        return await self._go_on(
            run_id,
            approve=approve,
            approver=by,
            retry=True,
            max_parallel=max_parallel,
            subscribe=subscribe,
        )

    async def _go_on(
        self,
        run_id: str,
        *,
        approve: bool,
        approver: str,
        max_parallel: int,
        subscribe: Subscriber | None,
        plan_hash: str | None = None,
        retry: bool = False,
    ) -> RunOutcome:
        self._open()
        max_parallel = checked_max_parallel(max_parallel)
        subscribe = checked_subscriber(subscribe)
        self._active.add(run_id)

        async def body() -> RunOutcome:
            if retry:
                self._retried(run_id, approver)
            return await self._resume(
                run_id,
                approve,
                max_parallel,
                subscribe,
                plan_hash=plan_hash,
                approver=approver,
            )

        try:
            return await self._leases.driven(run_id, body, explicit=True)
        finally:
            self._done_driving(run_id)

    def _retried(self, run_id: str, by: str) -> None:
        """Record that ``run_id`` goes on (``RunRetried``), if it failed or was cancelled."""
        state = fold(run_id, self.log.events(run_id))
        if state.finished is None:
            raise ExecutionError(
                f"run {run_id} has not finished: there is nothing to retry",
                hint=f"resume it: `plansmith resume {run_id}`",
            )
        if state.finished == "succeeded":
            raise ExecutionError(
                f"run {run_id} succeeded: there is nothing to retry",
                hint="start a new run to do it again",
            )
        inputs = self.log.run(run_id).inputs
        if made_by(inputs) is None:
            file_inputs(run_id, inputs)  # one made from files, or by a run maker, only
        Emitter(self.log, run_id, last_seq=state.last_seq).emit(RunRetried(run_id=run_id, by=by))


def _recorded(
    base: Mapping[str, JSONValue],
    policy: ApprovalPolicy,
    owner: str,
    hold: bool,
    asked: Mapping[str, JSONValue] | None,
) -> dict[str, JSONValue]:
    """A new run's recorded ``inputs``: ``base`` (its files and their digests, or its
    maker), its policy, and who made it, whether it is held and what was asked, if so."""
    recorded: dict[str, JSONValue] = {**base, POLICY_KEY: policy.text()}
    if owner:
        recorded[OWNER_KEY] = owner
    if hold:
        recorded[HOLD_KEY] = True
    if asked:
        recorded[ASKED_KEY] = json_inputs(asked)
    return recorded
