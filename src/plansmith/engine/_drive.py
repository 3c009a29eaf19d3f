"""How a run goes on: the one sequence (``Driving._drive``) that plans a run with no
plan, starts its servers, binds, approves and runs it, whether it is new, resumed,
retried or taken over."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass

import anyio

from plansmith.binding import ASK_SERVER, Bindings, BoundPlan, ToolCatalog, bind
from plansmith.engine._core import EngineCore
from plansmith.engine._follow_up import inherit, inherited_producers, recorded_context
from plansmith.engine._inputs import (
    HOLD_KEY,
    Subscriber,
    check_env,
    file_inputs,
    recorded_costs,
    recorded_policy,
)
from plansmith.engine._made import MakeContext, find_maker, made_by
from plansmith.engine._planning import (
    Planner,
    RunContext,
    as_recorded,
    make_costed_plan,
    plan_in_thread,
)
from plansmith.engine._starting import Starting
from plansmith.engine._tools import (
    RunTools,
    server_limits,
)
from plansmith.errors import (
    ApprovalRequiredError,
    InputError,
    Location,
    PlansmithError,
    ServerConfigError,
)
from plansmith.execution import (
    ApprovalPolicy,
    Asker,
    AwaitingApproval,
    Emitter,
    PlanApproved,
    PlanReady,
    ReplanFn,
    RunCreated,
    RunFinished,
    Runner,
    RunOutcome,
    RunState,
    ToolInvoker,
    bound_to_dict,
    fold,
    iso_time,
    tiers_needing_approval,
    unpack,
    utc_now,
)
from plansmith.formats import parse_plan_json
from plansmith.model import Domain, JSONValue, Plan, Problem, Tier
from plansmith.servers import (
    ServersConfig,
)

__all__ = ["Driving", "Recipe"]


@dataclass(frozen=True, slots=True)
class Recipe:
    """What a run is driven from: its domain, bindings and tools (a servers file, or tools
    at hand); its plan, or the problem to plan when it has none yet (a run resumed before
    its plan was bound); ``replan(catalog, first plan)``: its replan hook (None: none)."""

    domain: Domain
    bindings: Bindings
    config: ServersConfig | RunTools
    replan: Callable[[ToolCatalog, Plan], ReplanFn | None] | None
    plan: Plan | None = None
    problem: Problem | None = None
    #: the planner of ``problem`` (None: the engine's; a run with learned costs has its own)
    planner: Planner | None = None


class Driving(EngineCore):
    """The engine's run sequence; see the module docstring."""

    async def _drive(
        self,
        emitter: Emitter,
        traced: Callable[[ToolInvoker], ToolInvoker],
        start: Starting,
        recipe: Recipe,
        *,
        approve: bool,
        approver: str,
        policy: ApprovalPolicy,
        max_parallel: int,
        resumable: bool = True,
        hold: bool = False,
    ) -> RunOutcome:
        """The one sequence every run goes on by, new, resumed, retried or taken over: a
        run with no bound plan is planned (unless its plan is given), its servers start
        and its plan is bound (``PlanReady``); then it is approved (unless it is) and its
        servers start (unless they did), and the runner runs what remains of it."""
        run_id = emitter.run_id
        state = fold(run_id, self.log.events(run_id))
        async with AsyncExitStack() as stack:
            tools: RunTools | None = None
            if state.bound is None:
                tools, plan = await self._plan_and_bind(stack, emitter, start, recipe)
                if self._cancelled_now(emitter, start):
                    return start.outcome()
                state = fold(run_id, self.log.events(run_id))
            else:
                # the run's first plan; the replans recorded after it are made again (see
                # ``as_recorded``), so that an HTN replanner decomposes what remains
                plan = parse_plan_json(json.dumps(state.plan))
                self._check_runnable(run_id, state, recipe)  # before it is approved
            bound = state.bound
            assert bound is not None
            if state.approved is None or state.approved != state.plan_hash:
                with self._stopped_by_view(emitter), start.views():
                    self._approve(
                        emitter,
                        start,
                        bound,
                        policy,
                        approve=approve,
                        approver=approver,
                        resumable=resumable,
                        hold=hold,
                    )
                state = fold(run_id, self.log.events(run_id))
            if self._cancelled_now(emitter, start):
                return start.outcome()
            if tools is None:
                try:
                    used = {s.server for s in bound.steps} - {ASK_SERVER}
                    tools = await self._tools(stack, run_id, recipe.config, used)
                except (anyio.get_cancelled_exc_class(), KeyboardInterrupt):
                    self._cancelled_starting(emitter, start)
                    raise
            runner = self._runner(
                state,
                emitter,
                traced(tools.invoker),
                max_parallel=max_parallel,
                limits=tools.limits,
                replan=recipe.replan(tools.catalog, plan) if recipe.replan else None,
                policy=policy,
            )
            try:
                return await self._run_runner(runner)
            finally:
                await self._flush_traces()

    async def _plan_and_bind(
        self, stack: AsyncExitStack, emitter: Emitter, start: Starting, recipe: Recipe
    ) -> tuple[RunTools, Plan]:
        """Plan (unless the recipe has the plan), start the servers the plan uses, bind,
        and record the bound plan (``PlanReady``). A plan not found, a server that does
        not start or a plan that does not bind ends the run ``failed`` and raises."""
        run_id = emitter.run_id
        try:
            plan = recipe.plan
            if plan is None:
                assert recipe.problem is not None
                plan = await plan_in_thread(recipe.problem, recipe.planner or self.planner)
            used = set(self._servers_wanted(recipe.bindings, plan))
            tools = await self._tools(stack, run_id, recipe.config, used)
            config = recipe.config
            bound = bind(
                plan,
                recipe.domain,
                recipe.bindings,
                tools.catalog,
                env=os.environ,
                available=inherited_producers(self.log, run_id),  # a follow-up's parent's
                configured=config.names if isinstance(config, ServersConfig) else None,
            )
            if tools.route is not None:
                bound = tools.route(bound)
        except PlansmithError as error:
            emitter.emit(RunFinished(run_id=run_id, state="failed", reason=error.message))
            raise
        except (anyio.get_cancelled_exc_class(), KeyboardInterrupt):
            self._cancelled_starting(emitter, start)
            raise
        with self._stopped_by_view(emitter), start.views():
            emitter.emit(
                PlanReady(
                    run_id=run_id,
                    plan_hash=plan.hash,
                    plan=plan.to_dict(),
                    bound=bound_to_dict(bound),
                )
            )
        return tools, plan

    @staticmethod
    def _servers_wanted(bindings: Bindings, plan: Plan) -> set[str]:
        actions = {s.action for s in plan.steps}
        return {b.server for b in bindings.bindings if b.action in actions} - {ASK_SERVER}

    def _check_runnable(self, run_id: str, state: RunState, recipe: Recipe) -> None:
        """A bound run the servers file or the environment can no longer run is refused
        before it is approved: a server its steps call that the file no longer names, a
        bound step's ``${env.X}`` with X unset here (as ``bind`` says it at run)."""
        config = recipe.config
        if state.bound is None or not isinstance(config, ServersConfig):
            return
        missing = sorted({s.server for s in state.bound.steps} - {*config.names, ASK_SERVER})
        if missing:  # a servers file edited since the run began
            raise ServerConfigError(
                f"run {run_id} calls server(s) {', '.join(map(repr, missing))}, which the"
                f" servers file no longer names",
                location=Location(str(config.source)) if config.source else None,
                hint=f"put them back in {config.source or 'the servers file'} (the run"
                " goes on with the plan it recorded), or start a new run",
            )
        check_env(state.bound, recipe.bindings, os.environ)

    async def _tools(
        self,
        stack: AsyncExitStack,
        run_id: str,
        config: ServersConfig | RunTools,
        used: set[str],
    ) -> RunTools:
        """The run's tools: ``config`` itself, or the servers it lists in ``used``,
        started in a pool that ``stack`` closes (their stderr in the run's servers.log)."""
        if isinstance(config, RunTools):
            return config
        errlog = stack.enter_context((self.run_dir(run_id) / "servers.log").open("a"))
        pool = await stack.enter_async_context(self.open_pool(config, errlog))
        catalog = await pool.start(tuple(n for n in config.names if n in used))
        return RunTools(catalog, self.invoker_factory(pool), server_limits(config))

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

    def _approve(
        self,
        emitter: Emitter,
        start: Starting,
        bound: BoundPlan,
        policy: ApprovalPolicy,
        *,
        approve: bool,
        approver: str = "",
        resumable: bool = True,
        hold: bool = False,
    ) -> None:
        """``PlanApproved``, or ``AwaitingApproval`` and ``ApprovalRequiredError`` when the
        plan needs a person and ``approve`` is false. A view that cancels the run on
        ``AwaitingApproval`` wins: no error, and the caller records the run cancelled
        (``_cancelled_now``), as for a cancel on ``PlanReady`` or ``PlanApproved``. A run
        made with ``hold`` awaits approval whatever its tiers."""
        tiers = tiers_needing_approval(bound, policy)
        if (tiers or hold) and not approve:
            emitter.emit(
                AwaitingApproval(run_id=emitter.run_id, plan_hash=bound.plan_hash, tiers=tiers)
            )
            if start.reason is not None:  # cancelled by a view of ``AwaitingApproval``
                return
            raise ApprovalRequiredError(
                f"run {emitter.run_id} awaits approval of plan {bound.plan_hash} "
                f"({'tiers: ' + ', '.join(tiers) if tiers else 'held for approval'})",
                hint=f"approve with `plansmith resume {emitter.run_id} --yes`"
                if resumable
                else "a run made from a plan (Engine.run_plan), not from files, cannot be"
                " resumed: once a person approved this hash, run the plan again with"
                " approve=True as a new run (another run_id, or none)",
            )
        by = "person" if tiers else "policy"
        emitter.emit(
            PlanApproved(
                run_id=emitter.run_id,
                plan_hash=bound.plan_hash,
                by=by,
                approver=approver if tiers else "",
            )
        )

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
        asker: Asker | None = None,
    ) -> Runner:
        """The runner for ``state``; a replan may use the tiers of the approved plan and
        those that ``policy`` (default: the default policy) lets run without a person.
        ``${env.NAME}`` is rendered from ``env`` (default: this process's environment)."""
        inherit(self.log, state)  # a follow-up run reads its parent's outputs
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
            asker=asker if asker is not None else self.asker,
        )

    def _file_recipe(self, run_id: str, inputs: Mapping[str, JSONValue]) -> Recipe:
        """The recipe of a run made from files: loaded from them, its replans as
        recorded (a resumed run replans as it did)."""
        costs = recorded_costs(inputs)
        ctx = RunContext.load(file_inputs(run_id, inputs), costs)
        ctx = recorded_context(self.log, inputs, ctx)  # a follow-up: from its parent's end
        planner = make_costed_plan if costs else self.planner
        return Recipe(
            ctx.problem.domain,
            ctx.bindings,
            ctx.config,
            lambda catalog, first: as_recorded(
                ctx.replan_fn(catalog, first, planner),
                self.log.events(run_id),
                ctx.problem,
            ),
            problem=ctx.problem,
            planner=planner,
        )

    def _made_recipe(self, run_id: str, maker: str, args: Mapping[str, JSONValue]) -> Recipe:
        """The recipe of a run a run maker made, made again from its recorded arguments
        (its plan is bound already, unless the run stopped before it was)."""
        made = find_maker(maker, self.makers)(
            args, MakeContext(run_id, self.run_dir(run_id), self.log)
        )
        replan = made.replan
        return Recipe(
            made.domain,
            made.bindings,
            made.config,
            None if replan is None else (lambda catalog, _first: replan(catalog)),
            plan=made.plan,
        )

    async def _resume(
        self,
        run_id: str,
        approve: bool,
        max_parallel: int,
        subscribe: Subscriber | None,
        *,
        plan_hash: str | None = None,
        approver: str = "",
    ) -> RunOutcome:
        info = self.log.run(run_id)
        state = fold(run_id, self.log.events(run_id))
        if state.finished is not None:
            outputs = {k: unpack(self.log, v) for k, v in state.outputs.items()}
            return RunOutcome(run_id, state.finished, state.finished_reason, outputs)
        if plan_hash is not None and plan_hash != state.plan_hash:
            raise InputError(
                f"plan {plan_hash} is not the plan of run {run_id}"
                + (f" ({state.plan_hash})" if state.plan_hash else " (it has none yet)"),
                hint="approve the plan the run shows (`plansmith show RUN_ID`): its hash"
                " is what a person saw",
            )
        made = made_by(info.inputs)
        if made is not None:
            recipe = self._made_recipe(run_id, *made)
        else:
            recipe = self._file_recipe(run_id, info.inputs)
        policy = recorded_policy(info.inputs)  # the run's own (default for older runs)
        hold = info.inputs.get(HOLD_KEY) is True
        emitter = self._emitter(run_id, state.last_seq, subscribe)
        traced = self._trace(emitter, state)
        with self._starting(run_id) as start:
            return await self._drive(
                emitter,
                traced,
                start,
                recipe,
                approve=approve,
                approver=approver,
                policy=policy,
                max_parallel=max_parallel,
                hold=hold,
            )
        return start.outcome()  # cancelled by ``cancel`` before the runner ran
