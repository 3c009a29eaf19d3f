"""The run view: one fold of a run's events into what every face shows.

Each event kind moves the view as docs/events.md ("The run view") says; folding a log at
once equals applying its events one by one, from any point; the step states are those
of ``apply_event``; and the web, ``plansmith show --view`` and the MCP report give the
same step states for the same real run.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _shared_servers import INDEX, SUMMARISE, action, docs_domain, problem_text, servers_json
from plansmith.execution import (
    RUN_STATES,
    AwaitingApproval,
    Event,
    PlanApproved,
    PlanReady,
    Replanned,
    RunCancelled,
    RunCreated,
    RunFinished,
    RunStarted,
    RunView,
    StepFailed,
    StepProgress,
    StepRetrying,
    StepStarted,
    StepState,
    StepSucceeded,
    fold,
)

RUN = "r-1"


def _bound(*ids: str, after: dict[str, list[str]] | None = None) -> dict[str, Any]:
    deps = after or {}
    return {
        "plan_hash": "sha256:p",
        "steps": [
            {
                "id": i,
                "action": "act",
                "args": [i, 2],
                "tier": "read",
                "server": "srv",
                "tool": "tool",
                "arguments": {"x": i},
                "after": deps.get(i, []),
            }
            for i in ids
        ],
    }


def _at(seq: int) -> str:
    return f"2026-01-01T00:00:{seq:02d}.000Z"


def _step(cls: type[Any], seq: int, step: str, **more: Any) -> Any:
    return cls(
        run_id=RUN, seq=seq, time=_at(seq), step=step, action="act", server="srv", tool="tool",
        **more,
    )  # fmt: skip


def _started_run(*ids: str) -> list[Event]:
    """Created, planned (``ids``, s2 after s1), approved by a person, started."""
    return [
        RunCreated(run_id=RUN, seq=1, time=_at(1), inputs={"domain": "/d.yaml"}),
        PlanReady(
            run_id=RUN, seq=2, time=_at(2), plan_hash="sha256:p", plan={"cost": 2, "steps": []},
            bound=_bound(*ids, after={"s2": ["s1"]}),
        ),
        PlanApproved(run_id=RUN, seq=3, time=_at(3), plan_hash="sha256:p", by="person"),
        RunStarted(run_id=RUN, seq=4, time=_at(4)),
    ]  # fmt: skip


def _view(events: list[Event]) -> RunView:
    return RunView.fold(events, RUN)


# -- each event kind ----------------------------------------------------------------------


def test_run_created_gives_the_created_time_the_inputs_and_the_state_created() -> None:
    view = _view(_started_run("s1")[:1])
    assert (view.run_id, view.state, view.created) == (RUN, "created", _at(1))
    assert view.inputs == {"domain": "/d.yaml"}
    assert view.steps == {}


def test_plan_ready_lists_the_bound_steps_in_plan_order_all_pending() -> None:
    view = _view(_started_run("s1", "s2", "s3")[:2])
    assert view.state == "planned"
    assert view.plan_hash == "sha256:p"
    assert list(view.steps) == ["s1", "s2", "s3"]
    s2 = view.steps["s2"]
    assert (s2.action, s2.args, s2.tier, s2.server, s2.tool) == (
        "act",
        ("s2", 2),
        "read",
        "srv",
        "tool",
    )
    assert (s2.arguments, s2.after, s2.call) == ({"x": "s2"}, ("s1",), "act(s2, 2)")
    assert view.counts() == {**dict.fromkeys(StepState, 0), "pending": 3, "total": 3}


def test_awaiting_approval_names_the_tiers_and_approval_names_the_hash_and_who() -> None:
    events = _started_run("s1")[:2]
    events.append(AwaitingApproval(run_id=RUN, seq=3, plan_hash="sha256:p", tiers=("write",)))
    view = _view(events)
    assert (view.state, view.awaiting_tiers, view.approved) == (
        "awaiting approval",
        ("write",),
        None,
    )
    view.apply(PlanApproved(run_id=RUN, seq=4, plan_hash="sha256:p", by="person"))
    assert (view.state, view.approved, view.approved_by) == ("approved", "sha256:p", "person")


def test_run_started_makes_the_run_running_and_a_resume_is_one_more_part() -> None:
    view = _view(_started_run("s1"))
    assert (view.state, view.started, view.parts) == ("running", _at(4), 1)
    view.apply(RunStarted(run_id=RUN, seq=5, time=_at(5), resumed=True))
    assert (view.started, view.parts) == (_at(4), 2)  # the first start stays


def test_step_started_makes_the_step_running_and_in_flight() -> None:
    view = _view(_started_run("s1", "s2"))
    assert view.apply(_step(StepStarted, 5, "s1", key=f"{RUN}/s1")) == ("s1",)
    s1 = view.steps["s1"]
    assert (s1.state, s1.attempts, s1.started, s1.attempt_started) == ("running", 1, _at(5), _at(5))
    assert view.in_flight == ("s1",)
    assert view.counts()["running"] == 1


def test_step_progress_keeps_the_latest_report_and_leaves_the_state() -> None:
    view = _view([*_started_run("s1"), _step(StepStarted, 5, "s1")])
    view.apply(_step(StepProgress, 6, "s1", progress=1, total=4, message="a quarter"))
    s1 = view.steps["s1"]
    assert s1.progress == {"progress": 1, "total": 4, "message": "a quarter"}
    assert s1.state is StepState.RUNNING


def test_step_retrying_keeps_the_failed_attempt_and_marks_the_step_retrying() -> None:
    events = [*_started_run("s1"), _step(StepStarted, 5, "s1")]
    events.append(_step(StepRetrying, 6, "s1", error_class="timeout", message="slow", delay_s=0.5))
    s1 = _view(events).steps["s1"]
    assert (s1.state, s1.retrying, s1.attempts, s1.attempt_started) == ("running", True, 1, _at(6))
    [retry] = s1.retries
    assert retry.to_dict() == {
        "seq": 6, "time": _at(6), "attempt": 1, "error_class": "timeout", "message": "slow",
        "delay_s": 0.5,
    }  # fmt: skip
    assert s1.error is None  # a retried attempt is no failure of the step


def test_step_succeeded_keeps_the_outputs_the_duration_and_the_end() -> None:
    events = [*_started_run("s1"), _step(StepStarted, 5, "s1")]
    events.append(_step(StepRetrying, 6, "s1", error_class="timeout", message="slow"))
    events.append(_step(StepSucceeded, 7, "s1", attempt=2, duration_ms=12.5, outputs={"v": 1}))
    s1 = _view(events).steps["s1"]
    assert (s1.state, s1.retrying, s1.attempts) == ("succeeded", False, 2)
    assert (s1.ended, s1.ended_seq, s1.duration_ms, s1.outputs) == (_at(7), 7, 12.5, {"v": 1})


def test_step_failed_keeps_the_error_class_and_message() -> None:
    events = [*_started_run("s1"), _step(StepStarted, 5, "s1")]
    events.append(
        _step(StepFailed, 6, "s1", duration_ms=3.0, error_class="tool_error", message="no")
    )
    view = _view(events)
    s1 = view.steps["s1"]
    assert (s1.state, s1.error_class, s1.message, s1.error) == (
        "failed", "tool_error", "no", "tool_error: no"
    )  # fmt: skip
    assert view.in_flight == ()


def test_replanned_drops_the_pending_steps_and_adds_the_new_ones_after_them() -> None:
    events = [*_started_run("s1", "s2", "s3"), _step(StepStarted, 5, "s1")]
    events.append(_step(StepFailed, 6, "s1", error_class="tool_error", message="no"))
    view = _view(events)
    replan = Replanned(
        run_id=RUN, seq=7, time=_at(7), failed=("s1",), reason="retries ran out",
        plan_hash="sha256:q", bound=_bound("r1.s1"),
    )  # fmt: skip
    assert set(view.apply(replan)) == {"s2", "s3", "r1.s1"}
    assert {k: s.state.value for k, s in view.steps.items()} == {
        "s1": "failed", "s2": "dropped", "s3": "dropped", "r1.s1": "pending"
    }  # fmt: skip
    assert [r.to_dict() for r in view.replans] == [
        {"seq": 7, "time": _at(7), "failed": ["s1"], "reason": "retries ran out",
         "plan_hash": "sha256:q", "new_steps": ["r1.s1"]}
    ]  # fmt: skip
    assert view.plan_hash == "sha256:p"  # the hash an approval names stays the first plan's


def test_run_cancelled_cancels_the_steps_in_flight_and_no_other() -> None:
    events = [*_started_run("s1", "s2", "s3"), _step(StepStarted, 5, "s1")]
    events.append(_step(StepRetrying, 6, "s1", error_class="timeout", message="slow"))
    view = _view(events)
    assert view.apply(RunCancelled(run_id=RUN, seq=7, time=_at(7), reason="asked")) == ("s1",)
    s1 = view.steps["s1"]
    assert (s1.state, s1.ended, s1.ended_seq, s1.retrying) == ("cancelled", _at(7), 7, True)
    assert view.steps["s2"].state is StepState.PENDING
    assert (view.cancelled, view.in_flight, view.state) == ("asked", (), "running")
    view.apply(RunFinished(run_id=RUN, seq=8, time=_at(8), state="cancelled", reason="asked"))
    assert (view.state, view.reason, view.ended) == ("cancelled", "asked", _at(8))


def test_run_finished_leaves_a_step_in_flight_running_with_no_end() -> None:
    events = [*_started_run("s1"), _step(StepStarted, 5, "s1")]
    view = _view(events)
    assert view.apply(RunFinished(run_id=RUN, seq=6, time=_at(6), state="failed")) == ("s1",)
    assert (view.steps["s1"].state, view.steps["s1"].ended) == ("running", None)
    assert view.state == "failed"


def test_a_failed_replans_problems_are_read_from_the_reason() -> None:
    reason = (
        "replanning failed: 2 binding problem(s):\n"
        "  bindings.yaml:3: step r1.s1: no tool x\n"
        "    hint: name a tool the server lists\n"
        "  bindings.yaml:9: step r1.s2: no tool y"
    )
    events = [*_started_run("s1"), RunFinished(run_id=RUN, seq=5, state="failed", reason=reason)]
    data = _view(events).to_dict()
    assert data["reason"] == reason
    assert data["replan_problems"] == [
        "bindings.yaml:3: step r1.s1: no tool x\n  hint: name a tool the server lists",
        "bindings.yaml:9: step r1.s2: no tool y",
    ]


def test_an_event_the_state_table_forbids_is_noted_and_the_view_goes_on() -> None:
    events = [*_started_run("s1", "s2"), _step(StepSucceeded, 5, "s1", outputs={"v": 1})]
    events.append(_step(StepStarted, 6, "s2"))
    view = _view(events)  # no raise: `show` is how a damaged log is looked at
    assert view.log_errors == [
        "step s1: event StepSucceeded is not allowed for a step that is pending"
    ]
    assert (view.steps["s1"].state, view.steps["s1"].outputs) == ("pending", {"v": 1})
    assert view.steps["s2"].state is StepState.RUNNING


def test_a_step_the_plan_does_not_list_is_shown_anyway() -> None:
    view = _view([*_started_run("s1"), _step(StepStarted, 5, "x9")])
    assert list(view.steps) == ["s1", "x9"]
    assert (view.steps["x9"].state, view.steps["x9"].server) == ("running", "srv")


def test_the_json_has_one_stable_shape() -> None:
    data = json.loads(json.dumps(_view(_started_run("s1")).to_dict()))
    assert list(data) == [
        "run_id", "state", "created", "inputs", "plan_hash", "awaiting_tiers", "awaiting",
        "awaiting_answer", "approved", "approved_by", "approver", "started", "ended", "parts",
        "reason", "replan_problems", "cancelled", "steps", "counts", "replans", "last_seq",
        "log_errors",
    ]  # fmt: skip
    assert list(data["steps"][0]) == [
        "id", "action", "args", "tier", "server", "tool", "arguments", "after", "state",
        "retrying", "attempts", "retries", "started", "attempt_started", "ended", "ended_seq",
        "duration_ms", "error_class", "message", "outputs", "progress",
    ]  # fmt: skip
    assert list(data["counts"]) == [*(s.value for s in StepState), "total"]
    assert data["state"] in RUN_STATES


# -- folding at once equals applying one by one ---------------------------------------------


@st.composite
def run_logs(draw: st.DrawFn) -> list[Event]:
    """A run's events as a runner could write them: steps start, report progress, are
    retried, succeed or fail, a resume starts them again, a replan drops the pending ones
    and adds new ones; the run may be cancelled or finish; now and then an event the
    state table forbids (a damaged log)."""
    ids = [f"s{k}" for k in range(1, draw(st.integers(1, 4)) + 1)]
    events: list[Event] = list(_started_run(*ids))
    states = dict.fromkeys(ids, "pending")
    attempts = dict.fromkeys(ids, 1)
    replans = 0
    for _ in range(draw(st.integers(0, 30))):
        seq = len(events) + 1
        pending = [s for s, v in states.items() if v == "pending"]
        running = [s for s, v in states.items() if v == "running"]
        kinds = ["bogus", "resume"] + (["start"] if pending else [])
        kinds += ["progress", "retry", "succeed", "fail", "restart"] if running else []
        kinds += ["replan"] if not running and replans < 2 else []
        kind = draw(st.sampled_from(kinds))
        step = draw(st.sampled_from(running or pending or list(states)))
        if kind == "start":
            step = draw(st.sampled_from(pending))
            states[step] = "running"
            events.append(_step(StepStarted, seq, step, attempt=attempts[step]))
        elif kind == "progress":
            events.append(_step(StepProgress, seq, step, attempt=attempts[step], progress=seq))
        elif kind == "restart":  # resumed: started again, same attempt
            events.append(_step(StepStarted, seq, step, attempt=attempts[step]))
        elif kind == "retry":
            events.append(
                _step(StepRetrying, seq, step, attempt=attempts[step], error_class="timeout")
            )
            attempts[step] += 1
        elif kind == "succeed":
            states[step] = "succeeded"
            outputs = {"n": seq}
            events.append(_step(StepSucceeded, seq, step, attempt=attempts[step], outputs=outputs))
        elif kind == "fail":
            states[step] = "failed"
            events.append(
                _step(StepFailed, seq, step, attempt=attempts[step], error_class="tool_error")
            )
        elif kind == "replan":
            replans += 1
            new = [f"r{replans}.s{k}" for k in range(1, draw(st.integers(0, 2)) + 1)]
            states = {k: "dropped" if v == "pending" else v for k, v in states.items()}
            states |= dict.fromkeys(new, "pending")
            attempts |= dict.fromkeys(new, 1)
            events.append(
                Replanned(run_id=RUN, seq=seq, time=_at(seq), failed=("s1",), bound=_bound(*new))
            )
        elif kind == "resume":
            events.append(RunStarted(run_id=RUN, seq=seq, time=_at(seq), resumed=True))
        else:  # an end for a step that may never have started
            step = draw(st.sampled_from(list(states)))
            events.append(_step(StepSucceeded, seq, step, outputs=None))
    end = draw(st.sampled_from(["none", "succeeded", "failed", "cancelled"]))
    if end == "cancelled":
        seq = len(events) + 1
        events.append(RunCancelled(run_id=RUN, seq=seq, time=_at(seq), reason="stop"))
    if end != "none":
        seq = len(events) + 1
        events.append(RunFinished(run_id=RUN, seq=seq, time=_at(seq), state=end))
    return events


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=run_logs(), data=st.data())
def test_folding_a_log_at_once_equals_applying_its_events_one_by_one(
    events: list[Event], data: st.DataObject
) -> None:
    whole = RunView.fold(events, RUN)
    split = data.draw(st.integers(0, len(events)), label="split")
    view = RunView.fold(events[:split], RUN)  # a live face: from the log, then live
    for event in events[split:]:
        before = {k: s.to_dict() for k, s in view.steps.items()}
        changed = set(view.apply(event))
        moved = {k for k, s in view.steps.items() if before.get(k) != s.to_dict()}
        assert moved <= changed, f"{event.type} changed {moved - changed} and did not say so"
    assert view.to_dict() == whole.to_dict()
    # the states are those of apply_event, the one place where they change
    state = fold(RUN, events) if not whole.log_errors else None
    if state is not None:
        assert {k: s.state for k, s in whole.steps.items()} == state.states
    counts = Counter(s.state.value for s in whole.steps.values())
    assert whole.counts() == {
        **{s.value: counts[s.value] for s in StepState},
        "total": len(whole.steps),
    }
    assert set(whole.in_flight) == {
        k for k, s in whole.steps.items() if s.state is StepState.RUNNING
    }


# -- every face, one run ---------------------------------------------------------------------

DOMAIN = docs_domain(
    SUMMARISE,
    action("summarise_alt", "exists(d), not summarised(d)", "summarised(d)", "read", cost=5),
    INDEX,
)
#: summarise fails (not retryable): a replan drops index and runs summarise_alt, then an
#: index that fails once (retryable) and succeeds on its second attempt
BINDINGS = """\
bindings:
  summarise:
    server: counter
    tool: fail
    arguments: {message: "summariser down"}
  summarise_alt:
    server: counter
    tool: work
    arguments: {name: "alt-${d}"}
    outputs: {done: "$.structured.done"}
  index:
    server: counter
    tool: flaky
    arguments: {name: "${d}", fails: 1}
    outputs: {value: "$.structured.attempts"}
    retries: 2
"""


def _real_run(tmp_path: Path) -> tuple[str, Path]:
    """Run the plan with ``plansmith run --yes``; its run id and home."""
    from typer.testing import CliRunner

    import plansmith.cli._run  # noqa: F401  (registers the commands on the app)
    from plansmith.cli._app import app

    (tmp_path / "domain.yaml").write_text(DOMAIN)
    (tmp_path / "problem.yaml").write_text(problem_text(1))
    (tmp_path / "bindings.yaml").write_text(BINDINGS)
    (tmp_path / "servers.json").write_text(servers_json())
    home = tmp_path / "home"
    files = [str(tmp_path / f) for f in ("domain.yaml", "problem.yaml")]
    files += [
        "--servers",
        str(tmp_path / "servers.json"),
        "--bindings",
        str(tmp_path / "bindings.yaml"),
    ]
    done = CliRunner().invoke(app, ["run", *files, "--yes", "--json", "--home", str(home)])
    assert done.exit_code == 0, done.stderr
    return str(json.loads(done.stdout.splitlines()[0])["run_id"]), home


def test_the_web_show_view_and_the_mcp_report_give_the_same_step_states(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient
    from typer.testing import CliRunner

    from plansmith.cli._app import app as cli
    from plansmith.engine._report import build_report
    from plansmith.execution import SqliteRunLog
    from plansmith.web import WebSettings, create_app

    run_id, home = _real_run(tmp_path)
    shown = CliRunner().invoke(cli, ["show", run_id, "--view", "--home", str(home)])
    assert shown.exit_code == 0, shown.stderr
    view = json.loads(shown.stdout)
    with TestClient(create_app(WebSettings(home=home)), base_url="http://127.0.0.1") as web:
        page = web.get(f"/api/runs/{run_id}").json()
        web_report = web.get(f"/api/runs/{run_id}/report").json()
    log = SqliteRunLog(home / "runs.db")
    try:
        mcp = build_report(run_id, log.events(run_id), log, {})
    finally:
        log.close()

    expected = {"s1": "failed", "s2": "dropped", "r1.s1": "succeeded", "r1.s2": "succeeded"}
    assert {s["id"]: s["state"] for s in view["steps"]} == expected
    assert {s["id"]: s["state"] for s in page["steps"]} == expected
    ran = {k: v for k, v in expected.items() if v != "dropped"}  # the reports list what ran
    assert {s["step"]: s["outcome"] for s in mcp["steps"]} == ran
    assert {s["id"]: s["state"] for s in web_report["steps"]} == ran
    # the retry and the replan, the same in each
    assert [len(s["retries"]) for s in view["steps"]] == [0, 0, 0, 1]
    assert [s["retries"] for s in page["steps"]] == [0, 0, 0, 1]
    assert [s["retries"] for s in mcp["steps"]] == [0, 0, 1]
    assert (view["state"], page["status"], mcp["state"]) == ("succeeded",) * 3
    assert view["counts"] == page["counts"] == web_report["counts"]
    assert (
        [r["failed"] for r in view["replans"]] == [r["failed"] for r in mcp["replans"]] == [["s1"]]
    )
    assert view["steps"][2]["outputs"] == {"done": "alt-d0!"}
