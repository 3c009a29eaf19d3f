"""Write-ahead, checked through a second ``SqliteRunLog`` (as another process reading the
run log would: SQLite's rows merged with the run's journal): a call starts only once its
own start and the steps it depends on are durable, with a view or none; views hear only
of durable events; the ends of independent steps share journal writes."""

from __future__ import annotations

from pathlib import Path

import _exec_helpers as h
import anyio
import pytest

from plansmith.errors import ExecutionError
from plansmith.execution import Event, FakeInvoker, Runner, SqliteRunLog, ToolCall, ToolResult

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class _CountingLog(SqliteRunLog):
    """The SQLite log, counting the flushes that write rows (journal appends)."""

    commits = 0

    def flush(self) -> None:
        if self._rows:
            self.commits += 1
        super().flush()


def _durable(db: Path, run_id: str) -> list[dict[str, object]]:
    """The events of ``run_id`` as another run log on ``db`` sees them (a new
    ``SqliteRunLog``: none of the writer's memory, only what is in files)."""
    other = SqliteRunLog(db)
    try:
        return [dict(e.to_dict()) for e in other.events(run_id)]
    finally:
        other.close()


async def _answer(call: ToolCall) -> ToolResult:
    await anyio.lowlevel.checkpoint()  # let other steps run meanwhile
    if call.tool == "work":
        return ToolResult({"done": f"{call.arguments['name']}!", "key": call.key}, "")
    return ToolResult({"value": call.arguments.get("x")}, "")


def _dag() -> h.Plan:
    """Two chains (work → finish) beside three independent steps."""
    return h.plan(
        [
            h.Step("w0", "work", ("i0",)),
            h.Step("w1", "work", ("i1",)),
            h.Step("f0", "finish", ("i0",)),
            h.Step("f1", "finish", ("i1",)),
            *(h.Step(f"x{k}", "work", (f"i{k}",)) for k in range(2, 5)),
        ]
    )


async def test_a_call_starts_only_once_the_steps_it_depends_on_are_durable(
    tmp_path: Path,
) -> None:
    db = tmp_path / "runs.db"
    bound = h.bound(_dag())
    log, state = h.start_run(bound, SqliteRunLog(db))
    missing: list[tuple[str, str]] = []
    checked: list[str] = []

    async def handler(call: ToolCall) -> ToolResult:
        step = bound.step(call.step)
        assert step is not None
        done = {e["step"] for e in _durable(db, state.run_id) if e["type"] == "StepSucceeded"}
        missing.extend((call.step, dep) for dep in step.after if dep not in done)
        checked.extend(step.after)
        return await _answer(call)

    with anyio.fail_after(20):
        outcome = await Runner(FakeInvoker(handler), log, state, max_parallel=4).run()
    log.close()
    assert outcome.state == "succeeded"
    assert sorted(checked) == ["w0", "w1"]  # f0 and f1 each depend on one step
    assert missing == []
    ends = [e for e in _durable(db, state.run_id) if e["type"] == "RunFinished"]
    assert [e["state"] for e in ends] == ["succeeded"]


async def test_views_hear_of_an_event_only_once_it_is_durable(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    log, state = h.start_run(h.bound(_dag()), SqliteRunLog(db))
    runner = Runner(FakeInvoker(_answer), log, state, max_parallel=4)
    heard: list[int] = []
    early: list[int] = []

    def view(event: Event) -> None:
        heard.append(event.seq)
        if event.seq not in {e["seq"] for e in _durable(db, state.run_id)}:
            early.append(event.seq)

    runner.emitter.subscribe(view)
    with anyio.fail_after(20):
        await runner.run()
    log.close()
    assert early == []
    assert heard == [e["seq"] for e in _durable(db, state.run_id)][1:]  # all but PlanReady


async def test_with_no_view_a_calls_start_is_durable_before_the_call(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    log, state = h.start_run(h.bound(_dag()), SqliteRunLog(db))
    undurable: list[str] = []

    async def handler(call: ToolCall) -> ToolResult:
        starts = {
            (e["step"], e["attempt"])
            for e in _durable(db, state.run_id)
            if e["type"] == "StepStarted"
        }
        if (call.step, call.attempt) not in starts:
            undurable.append(call.step)
        return await _answer(call)

    runner = Runner(FakeInvoker(handler), log, state, max_parallel=4)
    assert runner.emitter.subscribers == []
    with anyio.fail_after(20):
        outcome = await runner.run()
    log.close()
    assert outcome.state == "succeeded"
    assert undurable == []


async def test_independent_steps_ends_share_commits_and_a_chain_commits_once_a_step(
    tmp_path: Path,
) -> None:
    wide_log, wide_state = h.start_run(h.bound(h.wide(8)), _CountingLog(tmp_path / "w.db"))
    wide_log.commits = 0  # type: ignore[attr-defined]
    with anyio.fail_after(20):
        await Runner(FakeInvoker(_answer), wide_log, wide_state, max_parallel=8).run()
    chain_log, chain_state = h.start_run(h.bound(h.chain(8)), _CountingLog(tmp_path / "c.db"))
    chain_log.commits = 0  # type: ignore[attr-defined]
    with anyio.fail_after(20):
        await Runner(FakeInvoker(_answer), chain_log, chain_state).run()
    wide_commits: int = wide_log.commits  # type: ignore[attr-defined]
    chain_commits: int = chain_log.commits  # type: ignore[attr-defined]
    wide_log.close()
    chain_log.close()
    # one commit a start (each before its call); the 8 ends, the run's start and its
    # end ride along or share a few more (not 18)
    assert 8 <= wide_commits <= 11
    assert chain_commits >= 8  # each step's end is durable before the next step's call


async def test_a_view_hears_of_a_steps_start_before_its_call(tmp_path: Path) -> None:
    log, state = h.start_run(h.bound(h.wide(6)), SqliteRunLog(tmp_path / "runs.db"))
    started: set[str] = set()
    unheard: list[str] = []

    async def handler(call: ToolCall) -> ToolResult:
        if call.step not in started:
            unheard.append(call.step)
        return await _answer(call)

    runner = Runner(FakeInvoker(handler), log, state, max_parallel=3)
    runner.emitter.subscribe(lambda e: started.add(e.step) if e.type == "StepStarted" else None)  # type: ignore[attr-defined]
    with anyio.fail_after(20):
        await runner.run()
    log.close()
    assert len(started) == 6
    assert unheard == []


async def test_a_view_that_raises_is_dropped_and_the_run_and_other_views_go_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log, state = h.start_run(h.bound(h.chain(4)), SqliteRunLog(tmp_path / "runs.db"))
    runner = Runner(FakeInvoker(_answer), log, state)
    broken: list[int] = []
    heard: list[str] = []

    def broken_view(event: Event) -> None:
        broken.append(event.seq)
        if event.type == "StepSucceeded":
            raise ValueError("closing tag '[/x]' doesn't match any open tag")

    runner.emitter.subscribe(broken_view)
    runner.emitter.subscribe(lambda event: heard.append(event.type))
    with anyio.fail_after(20), caplog.at_level("WARNING", logger="plansmith.execution"):
        outcome = await runner.run()
    log.close()
    assert outcome.state == "succeeded"
    assert heard.count("StepSucceeded") == 4
    assert heard[-1] == "RunFinished"
    last = broken[-1]
    assert all(seq <= last for seq in broken)  # not called after it raised
    assert len(broken) < len(heard)
    assert "no longer hears of them" in caplog.text
    assert "ValueError" in caplog.text  # the traceback, for a bug report


async def test_a_view_that_raises_a_plansmith_error_stops_the_run(tmp_path: Path) -> None:
    log, state = h.start_run(h.bound(h.chain(3)), SqliteRunLog(tmp_path / "runs.db"))
    calls: list[str] = []

    async def handler(call: ToolCall) -> ToolResult:
        calls.append(call.step)
        return await _answer(call)

    runner = Runner(FakeInvoker(handler), log, state)

    def guard(event: Event) -> None:
        if event.type == "StepSucceeded":
            raise ExecutionError("stop here", hint="a deliberate stop")

    runner.emitter.subscribe(guard)
    stopped: list[Exception] = []
    with anyio.fail_after(20):
        try:
            await runner.run()
        except* ExecutionError as group:
            stopped.extend(group.exceptions)
    log.close()
    assert [str(e).splitlines()[0] for e in stopped] == ["stop here"]
    assert len(calls) < 3  # the chain did not go on
