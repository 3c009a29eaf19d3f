"""GC, ORFs and the search are unordered in the plan DAG, and the run's timeline shows
them overlapping.

The overlap is read from the recorded events: a step's span runs from its
StepStarted to its StepSucceeded, in the log's order (``seq``, whose timestamps
never decrease). Two spans overlap when each step starts before the other ends.
To make the overlap a property of the runner rather than of the machine's speed,
the tool calls of the three branches pass a gate that opens only once all three
calls have been sent: a runner that waited for one branch before starting the
next would never open it, and the steps would fail on their binding timeout.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import anyio
import pytest
from bio_engine_run import ancestors, run_goal

from plansmith.domains import bio
from plansmith.execution import Event, StepStarted, StepSucceeded, ToolCall, ToolResult
from plansmith.servers import McpInvoker, ServerPool


class _Gate:
    """Holds the first call of each of ``tools`` until one of each has been sent."""

    def __init__(self, inner: McpInvoker, tools: set[str]) -> None:
        self.inner = inner
        self.missing = set(tools)
        self.opened = anyio.Event()

    async def invoke(self, call: ToolCall) -> ToolResult:
        if call.tool in self.missing:
            self.missing.discard(call.tool)
            if not self.missing:
                self.opened.set()
            await self.opened.wait()
        return await self.inner.invoke(call)


def _gated_run(
    tmp_path: Path, available: tuple[str, ...], tools: set[str]
) -> tuple[list[Event], list[_Gate]]:
    gates: list[_Gate] = []

    def gated(pool: ServerPool) -> _Gate:
        gates.append(_Gate(McpInvoker(pool), tools))
        return gates[-1]

    outcome, events = run_goal(tmp_path.resolve(), available, invoker_factory=gated)
    assert outcome.state == "succeeded", outcome.reason
    return events, gates


def _spans(events: list[Event], actions: set[str]) -> dict[str, tuple[int, int]]:
    """action -> (seq of StepStarted, seq of StepSucceeded), checking time order."""
    times = [e.time for e in events]
    assert times == sorted(times)  # ISO UTC stamps: the seq order is the time order
    start = {e.action: e.seq for e in events if isinstance(e, StepStarted)}
    end = {e.action: e.seq for e in events if isinstance(e, StepSucceeded)}
    return {a: (start[a], end[a]) for a in actions}


def _assert_unordered(events: list[Event], actions: set[str]) -> None:
    dag = ancestors(events)
    step = {action: sid for sid, (action, _) in dag.items()}
    for a, b in combinations(sorted(actions), 2):
        assert step[a] not in dag[step[b]][1], f"{b} comes after {a} in the DAG"
        assert step[b] not in dag[step[a]][1], f"{a} comes after {b} in the DAG"


def _assert_overlap(spans: dict[str, tuple[int, int]]) -> None:
    for (a, (sa, ea)), (b, (sb, eb)) in combinations(sorted(spans.items()), 2):
        assert sa < eb, f"{a} started after {b} ended"
        assert sb < ea, f"{b} started after {a} ended"


def test_gc_orfs_and_blast_search_are_unordered_and_overlap(
    tmp_path: Path,
) -> None:
    missing = [t for t in ("blastn", "mafft", "fasttree") if t not in bio.detect_tools()]
    if missing:
        pytest.skip(f"not installed: {missing} (Debian: ncbi-blast+ mafft fasttree)")
    tools = {"sequence_stats", "find_orfs", "make_blast_db"}
    events, gates = _gated_run(tmp_path, ("blastn", "mafft", "fasttree"), tools)
    assert gates[0].opened.is_set()
    _assert_unordered(events, {"gc_content", "find_orfs", "make_blast_db"})
    _assert_unordered(events, {"gc_content", "find_orfs", "search_blast"})
    _assert_overlap(_spans(events, {"gc_content", "find_orfs", "make_blast_db"}))


def test_gc_orfs_and_biopython_search_are_unordered_and_overlap(
    tmp_path: Path,
) -> None:
    tools = {"sequence_stats", "find_orfs", "biopython_search"}
    events, gates = _gated_run(tmp_path, (), tools)
    assert gates[0].opened.is_set()
    _assert_unordered(events, {"gc_content", "find_orfs", "search_biopython"})
    _assert_overlap(_spans(events, {"gc_content", "find_orfs", "search_biopython"}))


def test_a_serial_timeline_is_not_taken_for_an_overlap() -> None:
    def ev(cls: type[StepStarted] | type[StepSucceeded], seq: int, action: str) -> Event:
        return cls(run_id="r", seq=seq, time=f"t{seq:02d}", step=action, action=action)

    serial = [ev(StepStarted, 1, "a"), ev(StepSucceeded, 2, "a")]
    serial += [ev(StepStarted, 3, "b"), ev(StepSucceeded, 4, "b")]
    with pytest.raises(AssertionError, match="b started after a ended"):
        _assert_overlap(_spans(serial, {"a", "b"}))
    nested = [ev(StepStarted, 1, "a"), ev(StepStarted, 2, "b")]
    nested += [ev(StepSucceeded, 3, "b"), ev(StepSucceeded, 4, "a")]
    _assert_overlap(_spans(nested, {"a", "b"}))
