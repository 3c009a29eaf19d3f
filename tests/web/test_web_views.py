"""What the pages show of a run's view (pure): states, timings, the report."""

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


def _states(detail: Any) -> dict[str, str]:
    return {s["id"]: s["state"] for s in detail.to_dict()["steps"]}


def test_a_plan_awaiting_approval_shows_every_step_pending() -> None:
    detail = fold_view("r", _events())
    assert detail.status == "awaiting approval"
    assert list(_states(detail).values()) == ["pending"] * 3
    shown = detail.to_dict()
    assert shown["steps"][1]["after"] == ["s1"]
    assert shown["plan"] == {"cost": 3}


def test_retry_failure_and_replan_each_show_as_their_own_state() -> None:
    events = [
        *_events(),
        PlanApproved(run_id="r", seq=3, plan_hash="sha256:x", by="person"),
        RunStarted(run_id="r", seq=4, time="2026-01-01T00:00:04.000Z"),
        _step(StepStarted, 5, "s1"),
        _step(StepRetrying, 6, "s1", error_class="timeout", message="slow"),
    ]
    detail = fold_view("r", events, live=True)
    assert detail.status == "running"
    s1 = detail.to_dict()["steps"][0]
    assert (s1["state"], s1["retrying"], s1["retries"]) == ("running", True, 1)
    assert s1["error"] == "timeout: slow"
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
    detail = fold_view("r", events)
    assert _states(detail) == {"s1": "failed", "s2": "dropped", "s3": "dropped", "s4": "running"}
    assert detail.to_dict()["steps"][0]["retrying"] is False  # the failure ended it
    assert detail.status == "interrupted"  # approved, not finished, no task drives it
    assert detail.to_dict()["replans"][0]["new_steps"] == ["s4"]
    assert detail.to_dict()["counts"]["dropped"] == 2


def test_steps_in_flight_when_the_run_is_cancelled_show_cancelled_with_it() -> None:
    events = [
        *_events(),
        PlanApproved(run_id="r", seq=3, plan_hash="sha256:x", by="person"),
        RunStarted(run_id="r", seq=4, time="2026-01-01T00:00:04.000Z"),
        _step(StepStarted, 5, "s1"),
        _step(StepStarted, 6, "s3"),
        _step(StepSucceeded, 7, "s3", duration_ms=5.0),
    ]
    assert _states(fold_view("r", events))["s1"] == "running"  # not ended yet
    events += [
        RunCancelled(run_id="r", seq=8, time="2026-01-01T00:00:08.000Z", reason="user asked"),
        RunFinished(
            run_id="r",
            seq=9,
            time="2026-01-01T00:00:09.000Z",
            state="cancelled",
            reason="user asked",
        ),
    ]
    detail = fold_view("r", events)
    assert _states(detail) == {"s1": "cancelled", "s2": "pending", "s3": "succeeded"}
    s1 = detail.to_dict()["steps"][0]
    assert (s1["ended"], s1["error"]) == (
        "2026-01-01T00:00:08.000Z",
        "cancelled with the run (user asked)",
    )
    assert detail.to_dict()["counts"]["cancelled"] == 1
    assert detail.status == "cancelled"


def test_a_step_in_flight_when_the_run_failed_shows_no_end_recorded() -> None:
    events = [
        *_events(),
        PlanApproved(run_id="r", seq=3, plan_hash="sha256:x", by="person"),
        RunStarted(run_id="r", seq=4, time="2026-01-01T00:00:04.000Z"),
        _step(StepStarted, 5, "s1"),
        RunFinished(run_id="r", seq=6, state="failed", reason="the log could not be written"),
    ]
    s1 = fold_view("r", events).to_dict()["steps"][0]
    assert (s1["state"], s1["error"]) == ("running", "no end recorded (the run ended failed)")


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
