"""Folding run logs into per-action figures, and the costs learned from them."""

from __future__ import annotations

import pytest

from plansmith.execution import (
    StepFailed,
    StepRetrying,
    StepSucceeded,
    learned_costs,
    stats_of,
)


def _ok(run: str, action: str, ms: float) -> StepSucceeded:
    return StepSucceeded(
        run_id=run, step="s1", action=action, server="x", tool=action, duration_ms=ms
    )


def test_every_attempt_is_a_call_and_failures_are_counted_by_class() -> None:
    runs = [
        [
            StepRetrying(run_id="r1", step="s1", action="a", server="x", tool="a",
                         error_class="timeout"),
            _ok("r1", "a", 10.0),
        ],
        [
            StepFailed(run_id="r2", step="s1", action="a", server="x", tool="a",
                       error_class="tool_error", duration_ms=30.0),
            _ok("r2", "b", 5.0),
        ],
    ]  # fmt: skip
    a, b = stats_of(runs)
    assert (a.action, a.calls, a.succeeded, a.runs) == ("a", 3, 1, 2)
    assert a.failed == (("timeout", 1), ("tool_error", 1))
    assert (a.p50_ms, a.p95_ms) == (10.0, 30.0)  # nearest rank over 10 and 30
    assert (b.calls, b.succeeded, b.p50_ms, b.failed) == (1, 1, 5.0, ())


def test_slow_or_failing_actions_cost_more_and_few_calls_stay_near_the_declared_cost() -> None:
    quick = [_ok(f"r{k}", "quick", 10.0) for k in range(20)]
    slow = [_ok(f"r{k}", "slow", 40.0) for k in range(20)]
    flaky = [_ok(f"r{k}", "flaky", 10.0) for k in range(10)] + [
        StepFailed(run_id=f"f{k}", step="s1", action="flaky", server="x", tool="flaky",
                   error_class="tool_error", duration_ms=10.0)
        for k in range(10)
    ]  # fmt: skip
    rare = [_ok("r0", "rare", 400.0)]
    costs = learned_costs(
        stats_of([quick + slow + flaky + rare]),
        {"quick": 1.0, "slow": 1.0, "flaky": 1.0, "rare": 1.0, "unused": 3.0},
    )
    assert costs["quick"].cost == pytest.approx(1.0)  # the reference duration
    assert costs["slow"].cost == pytest.approx((20 * 4 + 5) / 25)  # 4x slower, shrunk
    assert costs["flaky"].cost == pytest.approx((20 * 2 + 5) / 25)  # half its calls fail
    assert 1.0 < costs["rare"].cost < (1 * 40 + 5) / 6 + 1e-9  # one call weighs little
    assert costs["unused"].cost == 3.0
    assert costs["unused"].why == "no calls in the log"
