"""Leases: one engine drives a run at a time, when engines share one run log."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

import anyio

from plansmith.errors import PlansmithError, RunLeasedError
from plansmith.execution import RunLeases, RunOutcome, iso_time, owner_gone

__all__ = ["LeaseKeeper"]


class LeaseKeeper:
    """Takes, renews and releases the leases of the runs one engine drives.

    ``leases``: the log's leases (None: a log without them; every run is this engine's);
    ``ttl``: seconds a lease lasts without renewal; ``renew``: seconds between renewals.
    """

    def __init__(self, leases: RunLeases | None, engine_id: str, ttl: float, renew: float) -> None:
        self.leases = leases
        self.engine_id = engine_id
        self.ttl = ttl
        self.renew = renew
        self.driving: set[str] = set()  # the runs this engine holds the lease of now
        self.lost: set[str] = set()  # the runs whose lease this engine lost while driving

    def _acquire(self, leases: RunLeases, run_id: str, *, explicit: bool) -> None:
        if run_id in self.driving:
            raise RunLeasedError(
                f"run {run_id} is already driven by this engine ({self.engine_id})",
                hint="wait for that run to end",
            )
        for _ in range(3):  # None: the holder released it between our two statements
            lease = leases.acquire(run_id, self.engine_id, self.ttl)
            # a person's resume need not wait for a lease whose process died on this host
            held = lease is not None and lease.owner != self.engine_id
            if explicit and held and lease is not None and owner_gone(lease.owner):
                lease = leases.acquire(run_id, self.engine_id, self.ttl, replacing=lease.owner)
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

    async def _keep(
        self, leases: RunLeases, run_id: str, scope: anyio.CancelScope, lost: list[str]
    ) -> None:
        """Renew the lease until cancelled; when it is lost, cancel the run (``scope``)."""
        renewed = time.monotonic()
        while True:
            await anyio.sleep(self.renew)  # a period, not a synchronisation
            try:
                if leases.renew(run_id, self.engine_id, self.ttl):
                    renewed = time.monotonic()
                    continue
                reason = "another engine took its lease"
            except PlansmithError as error:  # the log is unreachable: retry until expiry
                if time.monotonic() - renewed < self.ttl:
                    continue
                reason = f"its lease could not be renewed: {error.message}"
            lost.append(reason)
            self.lost.add(run_id)  # the run is not this engine's to record
            scope.cancel()
            return

    @contextmanager
    def held(self, run_id: str) -> Iterator[None]:
        """The run's lease, held for a moment (a person's: a gone owner's lease is taken);
        ``RunLeasedError`` when another engine drives it."""
        leases = self.leases
        if leases is None:
            yield
            return
        self._acquire(leases, run_id, explicit=True)
        try:
            yield
        finally:
            leases.release(run_id, self.engine_id)

    async def driven(
        self, run_id: str, body: Callable[[], Awaitable[RunOutcome]], *, explicit: bool = False
    ) -> RunOutcome:
        """``body()`` under the run's lease, renewed in a background task meanwhile."""
        leases = self.leases
        if leases is None:
            return await body()
        self._acquire(leases, run_id, explicit=explicit)
        self.driving.add(run_id)
        lost: list[str] = []
        outcome: RunOutcome | None = None
        caught: BaseException | None = None
        scope = anyio.CancelScope()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._keep, leases, run_id, scope, lost)
                try:
                    with scope:
                        outcome = await body()
                except BaseException as error:  # raised below, outside the task group
                    caught = error
                tg.cancel_scope.cancel()
        finally:
            self.driving.discard(run_id)
            self.lost.discard(run_id)
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
