"""The runs the service started: asynchronous engine runs, owned, limited in number.

A run is started only on the exact plan that was approved: if the engine plans a
different hash from the stored problem, the run is stopped before any step runs.

A run the service cancels (``cancel_run``, or the server shutting down) ends
``cancelled`` in its log: the runner records it when its steps had begun; when the
run was still starting (its tool servers coming up), the book records it with the
service's reason.
"""

from __future__ import annotations

import asyncio
from typing import Any

from plansmith.engine import Engine, RunInputs
from plansmith.engine_service._report import build_report, report_markdown
from plansmith.engine_service._runs import RunRecord, run_status
from plansmith.errors import (
    BusyError,
    ExecutionError,
    Location,
    PlansmithError,
    RunNotFoundError,
)
from plansmith.execution import (
    ApprovalPolicy,
    Event,
    PlanReady,
)
from plansmith.servers import RunHandle, RunList, RunReport, RunStatus

__all__ = ["RunBook"]


class RunBook:
    """Start, watch, report and cancel runs; ``share_runs`` lets every owner see every run."""

    def __init__(
        self,
        engine: Engine,
        *,
        max_runs: int,
        max_parallel: int,
        share_runs: bool,
        policy: ApprovalPolicy,
    ) -> None:
        self.engine = engine
        self.max_runs = max_runs
        self.max_parallel = max_parallel
        self.share_runs = share_runs
        self.policy = policy
        self._runs: dict[str, RunRecord] = {}

    def active(self) -> int:
        return sum(1 for r in self._runs.values() if r.task is not None and not r.task.done())

    def start(
        self, plan_hash: str, inputs: RunInputs, asked: dict[str, Any], owner: str
    ) -> RunHandle:
        if self.active() >= self.max_runs:
            raise BusyError(
                f"{self.max_runs} runs are in flight, the most this server allows",
                hint="busy, retry later (poll get_run_status of your runs until one finishes)",
            )
        record = RunRecord(self.engine.new_run_id(), plan_hash, owner, asked)
        self._runs[record.run_id] = record
        record.task = asyncio.get_running_loop().create_task(self._execute(record, inputs))
        return RunHandle(record.run_id, plan_hash, "starting")

    async def _execute(self, record: RunRecord, inputs: RunInputs) -> None:
        def same_plan(event: Event) -> None:
            # raised from the PlanReady emit: the engine stops before approving or calling
            if isinstance(event, PlanReady) and event.plan_hash != record.plan_hash:
                error = ExecutionError(
                    f"the engine planned {event.plan_hash} for run {record.run_id}, not "
                    f"the approved {record.plan_hash}; nothing was run",
                    hint="a domain or problem file changed since make_plan: plan again",
                )
                # recorded before the engine writes RunFinished: a status read while
                # the run's tool servers close says failed, and why (the same text after)
                record.error = f"{type(error).__name__}: {error}"
                raise error

        try:
            outcome = await self.engine.run(
                inputs,
                approve=True,
                policy=self.policy,
                max_parallel=self.max_parallel,
                subscribe=same_plan,
                run_id=record.run_id,
            )
            if outcome.state == "cancelled":  # by ``Engine.cancel``, with our reason
                record.error = f"cancelled: {record.cancel_reason or outcome.reason}"
        except PlansmithError as error:
            record.error = f"{type(error).__name__}: {error}"
        except asyncio.CancelledError:
            record.cancel_reason = record.cancel_reason or "the run was interrupted"
            record.error = f"cancelled: {record.cancel_reason}"
            self._finish_cancelled(record)
        except Exception as error:  # the run engine died: say so in the status
            record.error = f"InternalError: the run engine stopped: {type(error).__name__}: {error}"

    def record(self, run_id: str, owner: str) -> RunRecord:
        record = self._runs.get(run_id)
        if record is None or (not self.share_runs and record.owner != owner):
            raise RunNotFoundError(
                f"no run {run_id!r} in this session",
                location=Location(argument="run_id"),
                hint="call list_runs to see this session's runs",
            )
        return record

    def status(self, run_id: str, owner: str) -> RunStatus:
        return run_status(self.record(run_id, owner), self.engine.log)

    def report(self, run_id: str, owner: str) -> RunReport:
        record = self.record(run_id, owner)
        try:
            events = list(self.engine.log.events(record.run_id))
        except RunNotFoundError:
            events = []
        report = build_report(run_id, events, self.engine.log, record.asked)
        if report["state"] == "running":  # no RunFinished (yet): the status knows why
            report["state"] = run_status(record, self.engine.log).state
            report["reason"] = record.error
        return RunReport(run_id, report_markdown(report), report)

    def _finish_cancelled(self, record: RunRecord) -> None:
        """Record the cancel if the runner did not (it had not started yet): the engine
        records it, as for every run no engine drives."""
        self.engine.cancel(record.run_id, record.cancel_reason or "cancelled")

    async def _stop(self, records: list[RunRecord], reason: str) -> None:
        tasks: set[asyncio.Task[None]] = set()
        for record in records:
            if record.task is not None and not record.task.done():
                record.cancel_reason = reason
                # the runner records the reason; before it runs, the task is cancelled
                if not (
                    self.engine.drives(record.run_id) and self.engine.cancel(record.run_id, reason)
                ):
                    record.task.cancel()
                tasks.add(record.task)
        if tasks:
            await asyncio.wait(tasks)
        for record in records:
            if record.task is not None and record.task in tasks and record.task.cancelled():
                # cancelled before its first await: _execute never ran
                record.error = f"cancelled: {reason}"
                self._finish_cancelled(record)

    async def cancel(
        self, run_id: str, owner: str, reason: str = "cancelled by the client"
    ) -> RunStatus:
        record = self.record(run_id, owner)
        await self._stop([record], reason)
        return run_status(record, self.engine.log)

    def list(self, owner: str) -> RunList:
        mine = [r for r in self._runs.values() if self.share_runs or r.owner == owner]
        return RunList(tuple(run_status(r, self.engine.log) for r in reversed(mine)))

    async def aclose(self, reason: str = "the MCP server shut down") -> None:
        """Cancel the runs in flight and wait for them: their tool servers are stopped
        and their logs record the cancel."""
        await self._stop(list(self._runs.values()), reason)
