"""The heap is frozen for the collector while runs are in progress, and only then."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import anyio
import pytest
from _exec_helpers import bound, chain, start_run, work_ok

from plansmith.execution import FakeInvoker, Runner, ToolCall, ToolResult
from plansmith.execution._heap import frozen_heap

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _heap_as_found() -> Iterator[None]:
    """Each test starts with the collector on and nothing frozen, and leaves it so."""
    was_enabled = gc.isenabled()
    gc.unfreeze()
    gc.enable()
    yield
    gc.unfreeze()
    if not was_enabled:
        gc.disable()


def _runner(run_id: str, handler: FakeInvoker) -> Runner:
    log, state = start_run(bound(chain(3)), run_id=run_id)
    return Runner(handler, log, state)


async def test_a_run_freezes_the_heap_while_it_runs_and_unfreezes_it_at_its_end() -> None:
    seen: list[int] = []

    async def look(call: ToolCall) -> ToolResult:
        seen.append(gc.get_freeze_count())
        return await work_ok(call)

    outcome = await _runner("r1", FakeInvoker(look)).run()
    assert outcome.state == "succeeded"
    assert len(seen) == 3
    assert all(count > 0 for count in seen)
    assert gc.get_freeze_count() == 0


async def test_the_heap_stays_frozen_until_the_last_of_two_overlapping_runs_ends() -> None:
    first_done = anyio.Event()
    release_second = anyio.Event()
    counts_after_first: list[int] = []

    async def slow(call: ToolCall) -> ToolResult:
        if call.step == "s0":
            await first_done.wait()
            counts_after_first.append(gc.get_freeze_count())
            release_second.set()
        return await work_ok(call)

    async def second() -> None:
        assert (await _runner("r2", FakeInvoker(slow)).run()).state == "succeeded"

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(second)
            assert (await _runner("r1", FakeInvoker(work_ok)).run()).state == "succeeded"
            first_done.set()
            await release_second.wait()
    assert counts_after_first == [counts_after_first[0]]
    assert counts_after_first[0] > 0  # the second still ran frozen
    assert gc.get_freeze_count() == 0


async def test_a_heap_the_process_froze_itself_is_left_frozen_after_a_run() -> None:
    gc.freeze()
    before = gc.get_freeze_count()
    assert before > 0
    assert (await _runner("r1", FakeInvoker(work_ok)).run()).state == "succeeded"
    assert gc.get_freeze_count() > before // 2  # still frozen (freed objects leave it)


async def test_with_the_collector_off_a_run_does_not_freeze_the_heap() -> None:
    gc.disable()
    seen: list[int] = []

    async def look(call: ToolCall) -> ToolResult:
        seen.append(gc.get_freeze_count())
        return await work_ok(call)

    assert (await _runner("r1", FakeInvoker(look)).run()).state == "succeeded"
    assert seen == [0, 0, 0]
    assert not gc.isenabled()


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


def test_cyclic_garbage_from_before_a_run_is_collected_once_the_run_ends() -> None:
    node = _Node()
    gone = weakref.ref(node)
    with frozen_heap():
        del node
        gc.collect()
        assert gone() is not None  # frozen with the heap: the collector leaves it
    gc.collect()
    assert gone() is None


def _fail_frozen(counts: list[int]) -> None:
    with frozen_heap():
        counts.append(gc.get_freeze_count())
        raise RuntimeError("boom")


def test_a_run_that_fails_unfreezes_the_heap() -> None:
    counts: list[int] = []
    with pytest.raises(RuntimeError):
        _fail_frozen(counts)
    assert counts[0] > 0
    assert gc.get_freeze_count() == 0
