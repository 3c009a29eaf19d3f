"""The engine's run table: one place where a long-lived face creates, approves,
watches, lists, retries and cancels runs; every run in it is the log's."""

from __future__ import annotations

from pathlib import Path

import _engine_helpers as eh
import anyio
import pytest

from _shared_servers import SUMMARISE_BINDING, binding
from plansmith.engine import Engine, RunTable
from plansmith.errors import BusyError, InputError
from plansmith.execution import ApprovalPolicy, PlanApproved, RunCancelled, RunFinished

pytestmark = pytest.mark.anyio

_SLEEPY = (
    "bindings:\n"
    + SUMMARISE_BINDING
    + binding("summarise_alt", "work", '{name: "alt-${d}"}', '{done: "$.structured.done"}')
    + binding("index", "sleep", "{seconds: 600}", '{slept: "$.structured"}')
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_run_created_awaits_approval_and_runs_once_approved_by_its_hash(
    tmp_path: Path,
) -> None:
    inputs = eh.write_inputs(tmp_path, n=2)
    engine = Engine(tmp_path / "home")
    async with RunTable(engine) as table:
        with anyio.fail_after(60):
            handle = await table.create(inputs, owner="web")
        run_id = handle.run_id
        view = table.view(run_id)
        assert view.awaiting_tiers  # a write step: a person approves
        assert table.list(owner="web")[0].run_id == run_id
        assert table.list(owner="someone else") == []
        with pytest.raises(InputError, match="is not the plan of run"):
            await table.approve(run_id, "sha256:" + "1" * 64, by="web:127.0.0.1")
        plan_hash = view.plan_hash
        assert plan_hash is not None
        with anyio.fail_after(60):
            await table.approve(run_id, plan_hash, by="web:127.0.0.1")
            seen = [e.type async for e in table.subscribe(run_id)]
        assert seen[-1] == "RunFinished"
        assert table.view(run_id).finished == "succeeded"
        approved = [e for e in engine.log.events(run_id) if isinstance(e, PlanApproved)]
        assert [(a.by, a.approver) for a in approved] == [("person", "web:127.0.0.1")]
    engine.close()


async def test_cancel_ends_a_waiting_or_a_running_run_through_the_engine_once(
    tmp_path: Path,
) -> None:
    inputs = eh.write_inputs(tmp_path, n=1, bindings=_SLEEPY)
    engine = Engine(tmp_path / "home")
    async with RunTable(engine) as table:
        with anyio.fail_after(60):
            waiting = await table.create(inputs)
        assert await table.cancel(waiting.run_id, "not wanted")  # no engine drives it
        events = engine.log.events(waiting.run_id)
        assert [type(e) for e in events[-2:]] == [RunCancelled, RunFinished]
        assert table.view(waiting.run_id).finished == "cancelled"

        with anyio.fail_after(60):
            running = await table.create(inputs, policy=ApprovalPolicy(frozenset()))
            async for event in table.subscribe(running.run_id):
                if event.type == "StepStarted" and event.action == "index":  # type: ignore[attr-defined]
                    break
            assert await table.cancel(running.run_id, "stop it")
        events = engine.log.events(running.run_id)
        assert sum(isinstance(e, RunCancelled) for e in events) == 1
        assert events[-1].reason == "stop it"  # type: ignore[attr-defined]
        assert not table.is_live(running.run_id)
        assert not await table.cancel(running.run_id, "again")  # finished: nothing to do
    engine.close()


async def test_leaving_the_table_cancels_its_runs_and_records_why(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1, bindings=_SLEEPY)
    engine = Engine(tmp_path / "home")
    with anyio.fail_after(60):
        async with RunTable(engine, stop_reason="the face stopped") as table:
            handle = await table.create(inputs, policy=ApprovalPolicy(frozenset()))
    events = engine.log.events(handle.run_id)
    assert isinstance(events[-1], RunFinished)
    assert events[-1].reason == "the face stopped"
    engine.close()


async def test_a_full_table_refuses_a_new_run_with_busy(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1, bindings=_SLEEPY)
    engine = Engine(tmp_path / "home")
    async with RunTable(engine, max_live=1) as table:
        with anyio.fail_after(60):
            first = await table.create(inputs, policy=ApprovalPolicy(frozenset()))
        with pytest.raises(BusyError):
            await table.create(inputs, policy=ApprovalPolicy(frozenset()))
        assert [i.run_id for i in table.list()] == [first.run_id]  # nothing recorded
    engine.close()
