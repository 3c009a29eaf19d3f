"""Taking over the runs of a crashed engine, and replaying a recorded run offline."""

from __future__ import annotations

from collections.abc import Callable

import anyio

from plansmith.engine._drive import Driving
from plansmith.engine._inputs import (
    Subscriber,
    checked_max_parallel,
    checked_subscriber,
)
from plansmith.engine._replay import replay_run
from plansmith.errors import (
    PlansmithError,
    RunLeasedError,
)
from plansmith.execution import (
    Event,
    RunOutcome,
)

__all__ = ["TakingOver"]


class TakingOver(Driving):
    """The engine's take-over of expired runs, and its replay."""

    async def take_over_expired(
        self, *, max_parallel: int = 8, subscribe: Subscriber | None = None
    ) -> list[RunOutcome]:
        """Resume, side by side, every unfinished run whose lease expired (a crashed
        engine's) and return the outcomes of those this engine took. A run another
        engine took first is skipped; one that cannot be resumed gives a ``failed``
        outcome whose reason says why (its log is left as it was)."""
        max_parallel = checked_max_parallel(max_parallel)
        subscribe = checked_subscriber(subscribe)
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
                if run_id not in self._leases.driving:
                    tg.start_soon(take, run_id)
        return outcomes

    async def _take_over(
        self, run_id: str, max_parallel: int, subscribe: Subscriber | None
    ) -> RunOutcome | None:
        try:
            return await self._leases.driven(
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
        max_parallel = checked_max_parallel(max_parallel)
        subscribe = checked_subscriber(subscribe)
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
                    if run_id not in self._leases.driving and run_id not in starting:
                        starting.add(run_id)
                        tg.start_soon(take, run_id)
                await anyio.sleep(period)  # a polling period, not a synchronisation

    async def replay(self, run_id: str, *, subscribe: Subscriber | None = None) -> list[Event]:
        """Run the recorded run again offline against its recorded outcomes (see
        ``replay_run``)."""
        self._open()
        return await replay_run(self.log, run_id, self._runner, subscribe)
