"""A run log of known content for the metrics tests (GET /metrics, GET /api/metrics, the
stats page), written into a home's ``runs.db``; its figures are counted by hand here.

====  =================  ==============================  =====================================
run   created            domain (from)                   what happens
====  =================  ==============================  =====================================
w1    01-01 10:00        docs (asked.domain)             awaits 20 s, a person approves;
                                                         s1 counter/echo ok; s2 counter/sleep
                                                         times out, retried, ok -> succeeded
w2    01-01 12:00        docs (asked.domain)             awaits 120 s, a person approves;
                                                         s1 counter/fail tool_error; replanned;
                                                         s2 counter/echo ok; s3 counter/fail
                                                         tool_error -> failed
w3    01-02 08:00        drug-target (made_by.maker)     the policy approves; s1 dt/score ok
                                                         -> succeeded
w4    01-02 09:00        lab (its domain.yaml's folder)  awaits, cancelled -> cancelled
====  =================  ==============================  =====================================

By hand: docs 2 runs (1 succeeded, 1 failed: completion 0.5), 5 steps (2 + 3), 1 retry,
1 replan, 2 approvals by a person waited 20 s and 120 s; drug-target 1 run succeeded
(completion 1.0), 1 step, 1 approval by the policy; lab 1 run cancelled (completion 0.0),
1 cancel. Tool calls: docs counter/echo 2 (2 ok), counter/sleep 2 (1 ok, 1 timeout),
counter/fail 2 (0 ok, 2 tool_error); drug-target dt/score 1 (1 ok). Per day: 01-01 2 runs
(1 succeeded, 1 failed), 01-02 2 runs (1 succeeded, 1 cancelled).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plansmith.execution import (
    AwaitingApproval,
    Event,
    PlanApproved,
    Replanned,
    RunCancelled,
    RunCreated,
    RunFinished,
    RunStarted,
    SqliteRunLog,
    StepFailed,
    StepRetrying,
    StepStarted,
    StepSucceeded,
)
from plansmith.model import JSONValue

__all__ = ["write_known_log", "add_run"]


class _Run:
    def __init__(self, log: SqliteRunLog, run_id: str, created: str, inputs: dict[str, JSONValue]):
        self.log, self.run_id, self.at, self.seq = log, run_id, created, 0
        log.create_run(run_id, created, inputs)
        self.add(RunCreated, inputs=inputs)

    def add(self, cls: type[Event], **fields: Any) -> None:
        self.seq += 1
        self.log.append(cls(run_id=self.run_id, seq=self.seq, time=self.at, **fields))

    def step(self, cls: type[Event], step: str, server: str, tool: str, **fields: Any) -> None:
        self.add(cls, step=step, action=tool, server=server, tool=tool, **fields)


def write_known_log(home: Path) -> None:
    """The log of the module docstring in ``home/runs.db``."""
    log = SqliteRunLog(home / "runs.db")
    try:
        w1 = _Run(log, "w1", "2026-01-01T10:00:00.000Z", {"asked": {"domain": "docs"}})
        w1.add(AwaitingApproval, plan_hash="h1")
        w1.at = "2026-01-01T10:00:20.000Z"
        w1.add(PlanApproved, plan_hash="h1", by="person", approver="web:127.0.0.1")
        w1.add(RunStarted)
        w1.step(StepStarted, "s1", "counter", "echo")
        w1.step(StepSucceeded, "s1", "counter", "echo")
        w1.step(StepRetrying, "s2", "counter", "sleep", error_class="timeout")
        w1.step(StepSucceeded, "s2", "counter", "sleep", attempt=2)
        w1.add(RunFinished, state="succeeded")

        w2 = _Run(log, "w2", "2026-01-01T12:00:00.000Z", {"asked": {"domain": "docs"}})
        w2.add(AwaitingApproval, plan_hash="h2")
        w2.at = "2026-01-01T12:02:00.000Z"
        w2.add(PlanApproved, plan_hash="h2", by="person", approver="cli:alice")
        w2.add(RunStarted)
        w2.step(StepFailed, "s1", "counter", "fail", error_class="tool_error")
        w2.add(Replanned, failed=("s1",), reason="s1 failed")
        w2.step(StepSucceeded, "s2", "counter", "echo")
        w2.step(StepFailed, "s3", "counter", "fail", error_class="tool_error")
        w2.add(RunFinished, state="failed")

        made: dict[str, JSONValue] = {"made_by": {"maker": "drug-target", "args": {}}}
        w3 = _Run(log, "w3", "2026-01-02T08:00:00.000Z", made)
        w3.add(PlanApproved, plan_hash="h3", by="policy")
        w3.add(RunStarted)
        w3.step(StepSucceeded, "s1", "dt", "score")
        w3.add(RunFinished, state="succeeded")

        w4 = _Run(log, "w4", "2026-01-02T09:00:00.000Z", {"domain": "/x/lab/domain.yaml"})
        w4.add(AwaitingApproval, plan_hash="h4")
        w4.add(RunCancelled, reason="cancelled from the web")
        w4.add(RunFinished, state="cancelled")
        log.flush()
    finally:
        log.close()


def add_run(home: Path, run_id: str, domain: str) -> None:
    """One more run of ``domain`` that succeeds with one call of counter/echo, written
    by a log of its own (as another engine would)."""
    log = SqliteRunLog(home / "runs.db")
    try:
        run = _Run(log, run_id, "2026-01-03T08:00:00.000Z", {"asked": {"domain": domain}})
        run.step(StepSucceeded, "s1", "counter", "echo")
        run.add(RunFinished, state="succeeded")
        log.flush()
    finally:
        log.close()
