"""Run metrics over a hand-built log whose figures are counted by hand below.

The log (five runs, three days, four domains named four ways):

=====  ===================  ===============================  ============================
run    created              domain (from)                    what happens
=====  ===================  ===============================  ============================
r1     01-01 10:00          docs (asked.domain)              awaits 30 s, a person
                                                             approves; s1 counter/echo ok;
                                                             ask step a1 waits 45 s for a
                                                             person's answer (no tool);
                                                             s2 counter/sleep times out,
                                                             retried, ok -> succeeded
r2     01-01 11:00          docs (asked.domain)              awaits 90 s, a person
                                                             approves; s1 counter/fail
                                                             tool_error; replanned; s3
                                                             counter/echo ok; s4
                                                             counter/fail tool_error ->
                                                             failed
r3     01-02 09:00          drug-target (made_by.maker)      the policy approves; s1
                                                             dt/score ok; s2 dt/score
                                                             timeout -> failed; the run is
                                                             retried; s2 dt/score ok ->
                                                             succeeded
r4     01-03 00:30          lab (its domain.yaml's folder)   awaits, cancelled
r5     01-03 01:00          unknown (no inputs)              awaits (unfinished)
=====  ===================  ===============================  ============================
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from plansmith.execution import (
    AnswerRecorded,
    AwaitingAnswer,
    AwaitingApproval,
    Event,
    PlanApproved,
    Replanned,
    RunCancelled,
    RunCreated,
    RunFinished,
    RunInfo,
    RunRetried,
    RunStarted,
    StepFailed,
    StepProgress,
    StepRetrying,
    StepStarted,
    StepSucceeded,
    ToolFigures,
    metrics_of,
    parse_window,
    run_domain,
    run_facts,
)
from plansmith.model import JSONValue

Log = list[tuple[RunInfo, list[Event]]]


class _Run:
    """Events of one run, numbered in order; ``at`` is the time of the next one."""

    def __init__(self, run_id: str, created: str, inputs: dict[str, JSONValue]) -> None:
        self.info = RunInfo(run_id, created, inputs)
        self.events: list[Event] = []
        self.at = created
        self.add(RunCreated, inputs=inputs)

    def add(self, cls: type[Event], **fields: object) -> None:
        seq = len(self.events) + 1
        self.events.append(cls(run_id=self.info.run_id, seq=seq, time=self.at, **fields))  # type: ignore[arg-type]

    def step(self, cls: type[Event], step: str, server: str, tool: str, **fields: object) -> None:
        self.add(cls, step=step, action=tool, server=server, tool=tool, **fields)


def known_log() -> Log:
    r1 = _Run("r1", "2026-01-01T10:00:00.000Z", {"asked": {"domain": "docs"}})
    r1.at = "2026-01-01T10:00:05.000Z"
    r1.add(AwaitingApproval, plan_hash="h1")
    r1.at = "2026-01-01T10:00:35.000Z"  # 30 s later
    r1.add(PlanApproved, plan_hash="h1", by="person", approver="cli:alice")
    r1.add(RunStarted)
    r1.step(StepStarted, "s1", "counter", "echo")
    r1.step(StepProgress, "s1", "counter", "echo", progress=0.5)
    r1.step(StepSucceeded, "s1", "counter", "echo", duration_ms=3.0)
    r1.add(AwaitingAnswer, step="a1", action="review", question="ok?", answer={"type": "boolean"})
    r1.at = "2026-01-01T10:01:20.000Z"  # 45 s later
    r1.add(AnswerRecorded, step="a1", answer=True, by="cli:alice")
    r1.step(StepStarted, "a1", "plansmith", "ask")
    r1.step(StepSucceeded, "a1", "plansmith", "ask")
    r1.step(StepStarted, "s2", "counter", "sleep")
    r1.step(StepRetrying, "s2", "counter", "sleep", error_class="timeout")
    r1.step(StepSucceeded, "s2", "counter", "sleep", attempt=2, duration_ms=20.0)
    r1.add(RunFinished, state="succeeded")

    r2 = _Run("r2", "2026-01-01T11:00:00.000Z", {"asked": {"domain": "docs"}})
    r2.add(AwaitingApproval, plan_hash="h2")
    r2.at = "2026-01-01T11:01:30.000Z"  # 90 s later
    r2.add(PlanApproved, plan_hash="h2", by="person", approver="web:127.0.0.1")
    r2.add(RunStarted)
    r2.step(StepFailed, "s1", "counter", "fail", error_class="tool_error")
    r2.add(Replanned, failed=("s1",), reason="s1 failed")
    r2.step(StepSucceeded, "s3", "counter", "echo")
    r2.step(StepFailed, "s4", "counter", "fail", error_class="tool_error")
    r2.add(RunFinished, state="failed")

    made: dict[str, JSONValue] = {"made_by": {"maker": "drug-target", "args": {}}}
    r3 = _Run("r3", "2026-01-02T09:00:00.000Z", made)
    r3.add(PlanApproved, plan_hash="h3", by="policy")
    r3.add(RunStarted)
    r3.step(StepSucceeded, "s1", "dt", "score")
    r3.step(StepFailed, "s2", "dt", "score", error_class="timeout")
    r3.add(RunFinished, state="failed")
    r3.add(RunRetried, by="cli:bob")
    r3.add(RunStarted, resumed=True)
    r3.step(StepSucceeded, "s2", "dt", "score")
    r3.add(RunFinished, state="succeeded")

    r4 = _Run("r4", "2026-01-03T00:30:00.000Z", {"domain": "/somewhere/lab/domain.yaml"})
    r4.add(AwaitingApproval, plan_hash="h4")
    r4.add(RunCancelled, reason="cancelled from the web")
    r4.add(RunFinished, state="cancelled")

    r5 = _Run("r5", "2026-01-03T01:00:00.000Z", {})
    r5.add(AwaitingApproval, plan_hash="h5")
    return [(r.info, r.events) for r in (r1, r2, r3, r4, r5)]


def test_each_run_is_read_as_counted_by_hand() -> None:
    r1, r2, r3, r4, r5 = (run_facts(info, events) for info, events in known_log())
    assert (r1.domain, r1.outcome, r1.steps, r1.retries) == ("docs", "succeeded", 3, 1)
    assert (r1.approvals_by_person, r1.approval_waits_s, r1.interventions) == (1, (30.0,), 2)
    assert (r1.answers, r1.answer_waits_s) == (1, (45.0,))  # the ask is no tool call:
    assert r1.tools == (
        ToolFigures("counter", "echo", calls=1, succeeded=1, runs=1),
        ToolFigures("counter", "sleep", calls=2, succeeded=1, failed=(("timeout", 1),), runs=1),
    )
    assert (r2.outcome, r2.steps, r2.replans, r2.approval_waits_s) == ("failed", 3, 1, (90.0,))
    # retried after it failed: it ends succeeded; the retry is a person's doing
    assert (r3.domain, r3.outcome, r3.steps, r3.run_retries) == ("drug-target", "succeeded", 2, 1)
    assert (r3.approvals_by_policy, r3.approvals_by_person, r3.approval_waits_s) == (1, 0, ())
    assert (r4.domain, r4.outcome, r4.cancels, r4.steps, r4.interventions) == (
        "lab", "cancelled", 1, 0, 1
    )  # fmt: skip
    assert (r5.domain, r5.outcome, r5.approval_waits_s) == ("unknown", "unfinished", ())


def test_totals_per_domain_and_per_tool_equal_the_hand_counts() -> None:
    metrics = metrics_of(known_log())
    total = metrics.total
    assert total.runs == 5
    assert (total.succeeded, total.failed, total.cancelled, total.unfinished) == (2, 1, 1, 1)
    assert total.completion_rate == pytest.approx(2 / 4)  # r1, r3 of the 4 finished
    assert (total.steps, total.steps_per_run) == (8, pytest.approx(8 / 5))  # 3+3+2+0+0
    assert (total.retries, total.replans) == (1, 1)
    # people: r1's and r2's approvals, r4's cancel, r3's retry
    assert (total.approvals_by_person, total.cancels, total.run_retries) == (2, 1, 1)
    assert (total.interventions, total.approvals_by_policy) == (5, 1)
    assert total.approval_waits_s == (30.0, 90.0)
    assert (total.approval_p50_s, total.approval_p95_s, total.approval_mean_s) == (30, 90, 60)

    tools = {(t.server, t.tool): t for t in total.tools}
    assert list(tools) == [("counter", "echo"), ("counter", "fail"), ("counter", "sleep"),
                           ("dt", "score")]  # fmt: skip
    echo, fail, sleep, score = tools.values()
    assert (echo.calls, echo.succeeded, echo.failed, echo.runs) == (2, 2, (), 2)
    assert (fail.calls, fail.succeeded, fail.failed) == (2, 0, (("tool_error", 2),))
    assert (fail.success_rate, fail.runs) == (0.0, 1)
    assert (sleep.calls, sleep.success_rate, sleep.failed) == (2, 0.5, (("timeout", 1),))
    assert (score.calls, score.succeeded, score.failures, score.runs) == (3, 2, 1, 1)

    assert [d for d, _ in metrics.by_domain] == ["docs", "drug-target", "lab", "unknown"]
    docs = metrics.domain("docs")
    assert (docs.runs, docs.succeeded, docs.failed, docs.completion_rate) == (2, 1, 1, 0.5)
    assert (docs.steps, docs.retries, docs.replans, docs.interventions) == (6, 1, 1, 3)
    assert [t.tool for t in docs.tools] == ["echo", "fail", "sleep"]
    assert metrics.domain("lab").completion_rate == 0.0  # one run, cancelled
    assert metrics.domain("unknown").completion_rate is None  # none finished
    assert metrics.domain("nowhere").runs == 0
    assert metrics.by_window == ()


def test_runs_are_put_in_windows_by_their_creation_time() -> None:
    metrics = metrics_of(known_log(), window_s=parse_window("1d"))
    assert [(w, f.runs) for w, f in metrics.by_window] == [
        ("2026-01-01T00:00:00Z", 2),
        ("2026-01-02T00:00:00Z", 1),
        ("2026-01-03T00:00:00Z", 2),
    ]
    first, second, third = (f for _, f in metrics.by_window)
    assert (first.succeeded, first.failed, first.approval_waits_s) == (1, 1, (30.0, 90.0))
    assert (second.run_retries, [t.calls for t in second.tools]) == (1, [3])
    assert (third.cancelled, third.unfinished, third.tools) == (1, 1, ())

    hourly = metrics_of(known_log(), window_s=parse_window("1h"))
    assert [w for w, _ in hourly.by_window] == [
        "2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z", "2026-01-02T09:00:00Z",
        "2026-01-03T00:00:00Z", "2026-01-03T01:00:00Z",
    ]  # fmt: skip
    weekly = metrics_of(known_log(), window_s=parse_window("7d"))  # windows from the epoch
    assert [(w, f.runs) for w, f in weekly.by_window] == [
        ("2026-01-01T00:00:00Z", 5)
    ]  # 1970-01-01 was a Thursday, so 7-day windows start on Thursdays: 2026-01-01 is one


def test_since_keeps_the_runs_created_then_or_later() -> None:
    since = datetime(2026, 1, 2, 9, 0, tzinfo=UTC)
    metrics = metrics_of(known_log(), since=since)
    assert metrics.since == "2026-01-02T09:00:00Z"
    assert metrics.total.runs == 3  # r3, r4, r5
    assert [d for d, _ in metrics.by_domain] == ["drug-target", "lab", "unknown"]
    naive = metrics_of(known_log(), since=datetime(2026, 1, 3, 0, 45))  # read as UTC
    assert naive.total.runs == 1


def test_the_json_form_holds_every_figure() -> None:
    data = metrics_of(known_log(), window_s=86400).to_dict()
    total = data["total"]
    assert isinstance(total, dict)
    assert total["outcomes"] == {"succeeded": 2, "failed": 1, "cancelled": 1, "unfinished": 1}
    assert total["interventions"] == {
        "total": 5, "approvals_by_person": 2, "answers": 1, "cancels": 1, "run_retries": 1
    }  # fmt: skip
    assert total["time_to_answer_s"] == {"count": 1, "p50": 45.0, "p95": 45.0, "sum": 45.0}
    assert total["time_to_approval_s"] == {
        "count": 2, "p50": 30.0, "p95": 90.0, "mean": 60.0, "sum": 120.0
    }  # fmt: skip
    assert total["tools"][1] == {  # type: ignore[index]
        "server": "counter", "tool": "fail", "calls": 2, "succeeded": 0, "failures": 2,
        "failed": {"tool_error": 2}, "success_rate": 0.0, "runs": 1,
    }  # fmt: skip
    assert [d["domain"] for d in data["by_domain"]] == ["docs", "drug-target", "lab", "unknown"]  # type: ignore[index, union-attr]
    assert [w["runs"] for w in data["by_window"]] == [2, 1, 2]  # type: ignore[index, union-attr]


@pytest.mark.parametrize(
    ("inputs", "domain"),
    [
        ({"asked": {"domain": "bio"}, "made_by": {"maker": "m"}, "domain": "/a/x.yaml"}, "bio"),
        ({"made_by": {"maker": "dna-extraction", "args": {}}}, "dna-extraction"),
        ({"domain": "/a/b/blocks.pddl"}, "blocks"),
        ({"domain": "/a/b/docs/domain.yaml"}, "docs"),
        ({"asked": {"domain": ""}, "domain": 3}, "unknown"),
        ({}, "unknown"),
    ],
)
def test_a_runs_domain_is_read_from_what_it_recorded(
    inputs: dict[str, JSONValue], domain: str
) -> None:
    assert run_domain(inputs) == domain


@pytest.mark.parametrize("text", ["", "1", "d", "0d", "1y", "1.5h", "-1d"])
def test_a_window_is_a_number_and_a_unit(text: str) -> None:
    with pytest.raises(ValueError, match="not a window"):
        parse_window(text)


def test_window_units() -> None:
    assert [parse_window(t) for t in ("30s", "5m", "1h", "1d", "7d", "2w")] == [
        30, 300, 3600, 86400, 7 * 86400, 14 * 86400
    ]  # fmt: skip
