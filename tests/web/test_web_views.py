"""Folding a run's events into what the pages show (pure): states, timings, the report."""

from __future__ import annotations

from typing import Any

from plansmith.execution import (
    AwaitingApproval,
    Event,
    PlanApproved,
    PlanReady,
    Replanned,
    RunCancelled,
    RunFinished,
    RunStarted,
    StepFailed,
    StepRetrying,
    StepStarted,
    StepSucceeded,
)
from plansmith.web import fold_view, run_report


def _bound(*ids: str, after: dict[str, list[str]] | None = None) -> dict[str, Any]:
    deps = after or {}
    return {
        "plan_hash": "sha256:x",
        "steps": [
            {
                "id": i,
                "action": "act",
                "args": [i],
                "tier": "write",
                "server": "srv",
                "tool": "t",
                "arguments": {"a": i},
                "after": deps.get(i, []),
            }
            for i in ids
        ],
    }


def _step(cls: type[Any], seq: int, step: str, **kw: Any) -> Event:
    event: Event = cls(
        run_id="r",
        seq=seq,
        time=f"2026-01-01T00:00:0{seq}.000Z",
        step=step,
        action="act",
        server="srv",
        tool="t",
        **kw,
    )
    return event


def _events() -> list[Event]:
    return [
        PlanReady(
            run_id="r",
            seq=1,
            plan_hash="sha256:x",
            plan={"steps": [], "cost": 3},
            bound=_bound("s1", "s2", "s3", after={"s2": ["s1"]}),
        ),
        AwaitingApproval(run_id="r", seq=2, plan_hash="sha256:x", tiers=("write",)),
    ]


def test_a_plan_awaiting_approval_shows_every_step_pending() -> None:
    view = fold_view("r", _events())
    assert view.status == "awaiting approval"
    assert [s.state for s in view.steps.values()] == ["pending"] * 3
    assert view.steps["s2"].after == ["s1"]
    assert view.to_dict()["plan"] == {"cost": 3}


def test_retry_failure_and_replan_each_show_as_their_own_state() -> None:
    events = [
        *_events(),
        PlanApproved(run_id="r", seq=3, plan_hash="sha256:x", by="person"),
        RunStarted(run_id="r", seq=4, time="2026-01-01T00:00:04.000Z"),
        _step(StepStarted, 5, "s1"),
        _step(StepRetrying, 6, "s1", error_class="timeout", message="slow"),
    ]
    view = fold_view("r", events, live=True)
    assert view.status == "running"
    assert view.steps["s1"].state == "retried"
    assert view.steps["s1"].error == "timeout: slow"
    events += [
        _step(StepFailed, 7, "s1", duration_ms=1500.0, error_class="tool_error", message="no"),
        Replanned(
            run_id="r",
            seq=8,
            failed=("s1",),
            reason="retries ran out",
            plan_hash="sha256:y",
            bound=_bound("s4"),
        ),
        _step(StepStarted, 9, "s4"),
    ]
    view = fold_view("r", events)
    states = {k: s.state for k, s in view.steps.items()}
    assert states == {"s1": "failed", "s2": "replanned", "s3": "replanned", "s4": "running"}
    assert view.status == "interrupted"  # approved, not finished, no task drives it
    assert view.replans[0]["new_steps"] == ["s4"]
    assert view.counts()["replanned"] == 2


def test_steps_in_flight_when_the_run_is_cancelled_show_cancelled_with_it() -> None:
    events = [
        *_events(),
        PlanApproved(run_id="r", seq=3, plan_hash="sha256:x", by="person"),
        RunStarted(run_id="r", seq=4, time="2026-01-01T00:00:04.000Z"),
        _step(StepStarted, 5, "s1"),
        _step(StepStarted, 6, "s3"),
        _step(StepSucceeded, 7, "s3", duration_ms=5.0),
    ]
    assert fold_view("r", events).steps["s1"].state == "running"  # not ended yet
    events += [
        RunCancelled(run_id="r", seq=8, reason="user asked"),
        RunFinished(
            run_id="r",
            seq=9,
            time="2026-01-01T00:00:09.000Z",
            state="cancelled",
            reason="user asked",
        ),
    ]
    view = fold_view("r", events)
    states = {k: s.state for k, s in view.steps.items()}
    assert states == {"s1": "cancelled", "s2": "pending", "s3": "done"}
    s1 = view.steps["s1"]
    assert (s1.ended, s1.error) == (
        "2026-01-01T00:00:09.000Z",
        "cancelled with the run (user asked)",
    )
    assert view.counts()["cancelled"] == 1
    assert view.status == "cancelled"


def test_report_sums_durations_per_tool_and_orders_steps_by_start() -> None:
    events = [
        *_events(),
        PlanApproved(run_id="r", seq=3, plan_hash="sha256:x", by="person"),
        RunStarted(run_id="r", seq=4, time="2026-01-01T00:00:04.000Z"),
        _step(StepStarted, 5, "s3"),
        _step(StepSucceeded, 6, "s3", duration_ms=10.0),
        _step(StepStarted, 7, "s1"),
        _step(StepSucceeded, 8, "s1", duration_ms=30.0),
        RunFinished(
            run_id="r",
            seq=9,
            time="2026-01-01T00:00:09.000Z",
            state="failed",
            reason="s2 never ran",
        ),
    ]
    report = run_report(fold_view("r", events))
    assert report["status"] == "failed"
    assert report["wall_ms"] == 5000.0
    assert report["by_tool"] == [
        {"server": "srv", "tool": "t", "calls": 2, "total_ms": 40.0, "max_ms": 30.0}
    ]
    assert [s["id"] for s in report["steps"]] == ["s3", "s1"]
    assert report["steps"][0]["offset_ms"] == 1000.0
    assert report["counts"]["pending"] == 1
