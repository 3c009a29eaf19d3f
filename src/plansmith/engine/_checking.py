"""The engine's look before a run: its planner on a problem (``plan``), the servers a
plan's bindings use (``servers_used``), and ``check``: plan, start those servers and
bind, with every problem raised at once."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from contextlib import suppress

from plansmith.binding import Bindings, BoundPlan, ToolCatalog, bind
from plansmith.engine._inputs import RunInputs, run_inputs
from plansmith.engine._planning import load_problem_files, make_costed_plan, plan_in_thread
from plansmith.engine._takeover import TakingOver
from plansmith.engine._tools import load_run_files
from plansmith.errors import BindingError, ServerStartError
from plansmith.execution import with_action_costs
from plansmith.model import Plan, Problem
from plansmith.servers import ServersConfig

__all__ = ["Checking"]


class Checking(TakingOver):
    """See the module docstring."""

    @staticmethod
    def servers_used(bindings: Bindings, plan: Plan, config: ServersConfig) -> tuple[str, ...]:
        actions = {s.action for s in plan.steps}
        wanted = {b.server for b in bindings.bindings if b.action in actions}
        return tuple(n for n in config.names if n in wanted)

    async def plan(self, problem: Problem, *, costed: bool = False) -> Plan:
        """The engine's planner on ``problem``, in a worker thread (a cancel stops the
        search): what a face shows before it makes the run (``run``'s ``plan``).
        ``costed``: ``make_costed_plan`` instead, as ``run`` plans with learned costs."""
        return await plan_in_thread(problem, make_costed_plan if costed else self.planner)

    async def check(
        self, inputs: RunInputs, *, costs: Mapping[str, float] | None = None
    ) -> tuple[Plan, BoundPlan, ToolCatalog]:
        """Plan, start the servers the bindings use, and bind: raises with every problem.
        ``costs``: action costs to plan with (``make_costed_plan``, as ``run`` with
        ``costs``): the plan a run with them makes."""
        self._open()
        inputs = run_inputs(inputs)
        problem = load_problem_files(inputs.domain, inputs.problem)
        if costs:
            problem = with_action_costs(problem, costs)
        plan = await plan_in_thread(problem, make_costed_plan if costs else self.planner)
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
                        listed = getattr(pool, "catalog", None)  # ServerPool, WarmRun
                        own = listed() if callable(listed) else None
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
