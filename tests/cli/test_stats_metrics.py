"""``plansmith stats --metrics [--json] [--window W] [--since T]`` over a hand-built run
log (three runs, counted by hand below); ``plansmith stats --json`` keeps its one line per
action and tool over the same log.

====  =================  ==================  ==========================================
run   created            domain              what happens
====  =================  ==================  ==========================================
c1    01-01 10:00        docs (asked)        awaits 45 s, a person approves; s1
                                             counter/echo ok; s2 counter/sleep times
                                             out, retried, ok -> succeeded
c2    01-01 11:00        docs (asked)        the policy approves; s1 counter/fail
                                             tool_error -> failed
c3    01-02 10:00        lab (domain file)   awaits, cancelled -> cancelled
====  =================  ==================  ==========================================
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from plansmith.execution import (
    AwaitingApproval,
    Event,
    PlanApproved,
    RunCancelled,
    RunCreated,
    RunFinished,
    SqliteRunLog,
    StepFailed,
    StepRetrying,
    StepSucceeded,
)


def _write_log(home: Path) -> None:
    log = SqliteRunLog(home / "runs.db")

    def run(run_id: str, created: str, inputs: dict[str, Any], *events: tuple[Any, ...]) -> None:
        log.create_run(run_id, created, inputs)
        made: list[Event] = [RunCreated(run_id=run_id, seq=1, time=created, inputs=inputs)]
        for at, cls, fields in events:
            made.append(cls(run_id=run_id, seq=len(made) + 1, time=at, **fields))
        for event in made:
            log.append(event)

    def step(tool: str, **fields: Any) -> dict[str, Any]:
        return {"step": fields.pop("step", "s1"), "action": tool, "server": "counter",
                "tool": tool, **fields}  # fmt: skip

    t = "2026-01-01T10:00:00.000Z"
    try:
        run("c1", t, {"asked": {"domain": "docs"}},
            (t, AwaitingApproval, {"plan_hash": "h1"}),
            ("2026-01-01T10:00:45.000Z", PlanApproved, {"plan_hash": "h1", "by": "person"}),
            (t, StepSucceeded, step("echo")),
            (t, StepRetrying, step("sleep", step="s2", error_class="timeout")),
            (t, StepSucceeded, step("sleep", step="s2", attempt=2)),
            (t, RunFinished, {"state": "succeeded"}))  # fmt: skip
        t = "2026-01-01T11:00:00.000Z"
        run("c2", t, {"asked": {"domain": "docs"}},
            (t, PlanApproved, {"plan_hash": "h2", "by": "policy"}),
            (t, StepFailed, step("fail", error_class="tool_error")),
            (t, RunFinished, {"state": "failed"}))  # fmt: skip
        t = "2026-01-02T10:00:00.000Z"
        run("c3", t, {"domain": "/x/lab/domain.yaml"},
            (t, AwaitingApproval, {"plan_hash": "h3"}),
            (t, RunCancelled, {"reason": "stop"}),
            (t, RunFinished, {"state": "cancelled"}))  # fmt: skip
        log.flush()
    finally:
        log.close()


def _plansmith(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plansmith", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    _write_log(tmp_path / "home")
    return tmp_path


def test_metrics_as_json_equal_the_hand_counts(folder: Path) -> None:
    done = _plansmith("stats", "--home", "home", "--metrics", "--json", "--window", "1d",
                      cwd=folder)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1  # one JSON object
    data = json.loads(lines[0])
    total = data["total"]
    assert total["outcomes"] == {"succeeded": 1, "failed": 1, "cancelled": 1, "unfinished": 0}
    assert total["completion_rate"] == pytest.approx(1 / 3)
    assert (total["steps"], total["retries"], total["replans"]) == (3, 1, 0)  # 2 + 1 + 0
    assert total["interventions"] == {
        "total": 2, "approvals_by_person": 1, "answers": 0, "cancels": 1, "run_retries": 0
    }  # fmt: skip
    assert total["approvals_by_policy"] == 1
    assert (total["time_to_approval_s"]["count"], total["time_to_approval_s"]["p50"]) == (1, 45)
    tools = {t["tool"]: t for t in total["tools"]}
    assert (tools["sleep"]["calls"], tools["sleep"]["success_rate"]) == (2, 0.5)
    assert tools["fail"]["failed"] == {"tool_error": 1}
    assert [(d["domain"], d["runs"]) for d in data["by_domain"]] == [("docs", 2), ("lab", 1)]
    assert [(w["start"], w["runs"]) for w in data["by_window"]] == [
        ("2026-01-01T00:00:00Z", 2), ("2026-01-02T00:00:00Z", 1)
    ]  # fmt: skip

    since = _plansmith("stats", "--home", "home", "--json", "--since", "2026-01-02", cwd=folder)
    assert since.returncode == 0, since.stderr  # --since implies --metrics
    assert json.loads(since.stdout)["total"]["runs"] == 1


def test_the_per_action_lines_stay_as_they_were(folder: Path) -> None:
    done = _plansmith("stats", "--home", "home", "--json", cwd=folder)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["action"], r["calls"], r["succeeded"]) for r in rows] == [
        ("echo", 1, 1), ("fail", 1, 0), ("sleep", 2, 1)
    ]  # fmt: skip
    assert set(rows[0]) == {"action", "server", "tool", "calls", "succeeded", "failed",
                            "p50_ms", "p95_ms", "runs"}  # fmt: skip


def test_the_metrics_tables(folder: Path) -> None:
    done = _plansmith("stats", "--home", "home", "--metrics", "--window", "1d", cwd=folder)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for text in ("runs", "tools", "per 1d window", "docs", "lab", "timeout 1", "tool_error 1",
                 "2026-01-01T00:00:00Z", "33%"):  # fmt: skip
        assert text in out, text


@pytest.mark.parametrize(
    ("option", "value"), [("--window", "1y"), ("--window", "0h"), ("--since", "yesterday")]
)
def test_a_bad_window_or_since_is_a_typed_error(folder: Path, option: str, value: str) -> None:
    done = _plansmith("stats", "--home", "home", "--metrics", option, value, cwd=folder)
    assert done.returncode == 2
    assert "error:" in done.stderr
    assert option in done.stderr
