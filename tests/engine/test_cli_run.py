"""``plansmith check | run | runs | show | resume | replay`` as a user calls them."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import _engine_helpers as eh
import pytest

import plansmith.cli._check
import plansmith.cli._run  # noqa: F401  (registers the commands on the app)
from _shared_servers import binding

invoke, files = eh.invoke, eh.files


def test_run_json_prints_one_event_per_line_then_runs_show_and_replay(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=2)
    home = ["--home", str(tmp_path / "home")]
    code, out, err = invoke("run", *files(inputs), "--yes", "--json", *home)
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    assert events[0]["type"] == "RunCreated"
    assert events[-1] == {**events[-1], "type": "RunFinished", "state": "succeeded"}
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    run_id = events[0]["run_id"]

    code, out, _ = invoke("runs", *home)
    assert code == 0
    assert run_id in out
    assert "succeeded" in out

    code, out, _ = invoke("show", run_id, *home)
    assert code == 0
    assert "summarise(d0)" in out
    assert "counter/work" in out

    code, out, _ = invoke("replay", run_id, *home)
    assert code == 0
    replayed = [json.loads(line)["type"] for line in out.splitlines()]
    assert sorted(replayed) == sorted(e["type"] for e in events)


def test_show_json_prints_the_recorded_events_as_run_json_printed_them(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=2)
    home = ["--home", str(tmp_path / "home")]
    code, out, err = invoke("run", *files(inputs), "--yes", "--json", *home)
    assert code == 0, err
    printed = [json.loads(line) for line in out.splitlines()]
    code, out, err = invoke("show", printed[0]["run_id"], "--json", *home)
    assert code == 0, err
    shown = [json.loads(line) for line in out.splitlines()]
    assert shown == printed
    assert [e["type"] for e in shown[:2]] == ["RunCreated", "PlanReady"]


def test_a_replan_that_fails_on_binding_problems_names_each_in_the_event_and_show(
    tmp_path: Path,
) -> None:
    # summarise always fails; the replan's summarise_alt leaves index's reference to
    # summarise(d).done without a step: one binding problem per document
    failing = eh.BINDINGS.replace(
        '    tool: work\n    arguments: {name: "${d}"}',
        '    tool: fail\n    arguments: {message: "down"}',
        1,
    )
    inputs = eh.write_inputs(tmp_path, n=2, bindings=failing)
    home = ["--home", str(tmp_path / "home")]
    code, out, err = invoke("run", *files(inputs), "--yes", "--json", *home)
    assert code == 5, err
    printed = [json.loads(line) for line in out.splitlines()]
    run_id = printed[0]["run_id"]
    problems = [
        f"{inputs.bindings}:17:20 step r1.s3: ${{summarise(d).done}}: no step summarise(d0)",
        f"{inputs.bindings}:17:20 step r1.s4: ${{summarise(d).done}}: no step summarise(d1)",
    ]
    hint = "hint: a reference must name another step of the same plan"

    finished = printed[-1]
    assert finished["type"] == "RunFinished"
    assert finished["state"] == "failed"
    assert "replanning failed: 2 binding problem(s):" in finished["reason"]
    for problem in problems:
        assert problem in finished["reason"]
    assert finished["reason"].count(hint) == 2

    code, out, err = invoke("show", run_id, "--json", *home)
    assert code == 0, err
    assert json.loads(out.splitlines()[-1]) == finished

    code, out, err = invoke("show", run_id, *home)
    assert code == 0, err
    assert "replanning failed: 2 binding problem(s)):" in out
    flat = " ".join(out.split())  # as the terminal's width wrapped it
    for problem in problems:
        assert " ".join(problem.split()) in flat
    assert flat.count(hint) == 2


def test_show_json_gives_a_value_kept_in_the_blob_store_in_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plansmith.execution import Emitter, RunFinished, SqliteRunLog, StepSucceeded

    monkeypatch.setenv("COLUMNS", "300")  # the table's cells unwrapped

    log = SqliteRunLog(tmp_path / "home" / "runs.db")
    log.create_run("r-big", "2026-01-01T00:00:00.000Z", {})
    emitter = Emitter(log, "r-big", inline_limit=64)
    big = {"text": "acgt" * 100}
    packed = emitter.pack(big)
    assert isinstance(packed, dict)
    assert list(packed) == ["$blob"]
    emitter.emit(
        emitter.new(
            StepSucceeded,
            step="s1",
            action="read",
            server="files",
            tool="read",
            attempt=1,
            duration_ms=1.5,
            outputs=packed,
        )
    )
    emitter.emit(emitter.new(RunFinished, state="succeeded"))
    log.close()
    code, out, err = invoke("show", "r-big", "--json", "--home", str(tmp_path / "home"))
    assert code == 0, err
    shown = [json.loads(line) for line in out.splitlines()]
    assert [e["type"] for e in shown] == ["StepSucceeded", "RunFinished"]
    assert shown[0]["outputs"] == big
    code, out, err = invoke("show", "r-big", "--home", str(tmp_path / "home"))
    assert code == 0, err
    assert "in the blob store (show --json gives them in full)" in " ".join(out.split())


def test_show_json_of_a_run_whose_blob_is_gone_says_which_and_prints_nothing(
    tmp_path: Path,
) -> None:
    from plansmith.execution import Emitter, SqliteRunLog, StepSucceeded

    log = SqliteRunLog(tmp_path / "home" / "runs.db")
    log.create_run("r-lost", "2026-01-01T00:00:00.000Z", {})
    emitter = Emitter(log, "r-lost", inline_limit=64)
    packed = emitter.pack({"text": "acgt" * 100})
    emitter.emit(emitter.new(StepSucceeded, step="s1", action="a", outputs=packed))
    log.close()
    assert isinstance(packed, dict)
    ref = str(packed["$blob"]).removeprefix("sha256:")
    (tmp_path / "home" / "blobs" / ref[:2] / ref[2:]).unlink()
    code, out, err = invoke("show", "r-lost", "--json", "--home", str(tmp_path / "home"))
    assert code != 0
    assert out == ""
    assert ref in err
    assert "missing" in err


def test_runs_lists_a_run_whose_events_cannot_be_read_as_unreadable_beside_the_others(
    tmp_path: Path,
) -> None:
    from plansmith.execution import Emitter, SqliteRunLog, StepSucceeded

    inputs = eh.write_inputs(tmp_path, n=1)
    home = ["--home", str(tmp_path / "home")]
    code, _, err = invoke("run", *files(inputs), "--yes", *home)
    assert code == 0, err
    log = SqliteRunLog(tmp_path / "home" / "runs.db")
    log.create_run("r-damaged", "2099-01-01T00:00:00.000Z", {})
    emitter = Emitter(log, "r-damaged")  # a step's end with no plan and no start
    emitter.emit(emitter.new(StepSucceeded, step="s1", action="a"))
    log.close()
    code, out, err = invoke("runs", "--json", *home)
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["state"] for r in rows] == ["succeeded", "unreadable"]
    assert rows[1]["steps_done"] is None
    assert rows[1]["error"].startswith("step s1: event StepSucceeded is not allowed")
    assert "run r-damaged is unreadable: step s1:" in err
    code, out, err = invoke("runs", *home)
    assert code == 0, err
    assert "unreadable" in out
    assert "succeeded" in out


def test_run_without_yes_stops_awaiting_approval_and_prints_plan_and_hash(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    code, _, err = invoke("run", *files(inputs), "--home", str(tmp_path / "home"))
    assert code == 6
    assert "index(d0)" in err
    assert "plan hash: sha256:" in err
    assert "plansmith resume" in err
    run_id = re.findall(r"plansmith resume (r-\w+)", err)[0]
    code, _, err = invoke("resume", run_id, "--yes", "--home", str(tmp_path / "home"))
    assert code == 0, err
    err = " ".join(err.split())
    assert f"run {run_id}: resumed with 0 of 2 steps done" in err
    assert "2/2" in err  # the bar knows the run's steps, though no PlanReady came


def test_run_shows_the_plan_a_bar_of_the_steps_done_and_how_the_run_ended(
    tmp_path: Path,
) -> None:
    inputs = eh.write_inputs(tmp_path, n=2)
    code, out, err = invoke("run", *files(inputs), "--yes", "--home", str(tmp_path / "home"))
    assert code == 0, err
    assert out == ""  # the live view is on stderr
    err = " ".join(err.split())  # as wrapped to the terminal's width
    assert "plan sha256:" in err
    assert ": 4 steps" in err
    assert "4/4" in err  # the bar, at its end
    assert "run succeeded" in err
    assert "what ran:" not in err  # only after a run that did not succeed


def test_a_bad_input_or_a_stop_for_approval_shows_no_progress_bar(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    inputs.bindings.write_text("bindings: [")
    code, _, err = invoke("run", *files(inputs), "--yes", "--home", str(tmp_path / "home"))
    assert code == 2
    assert err.startswith("error: ")
    assert "bindings.yaml" in err
    (tmp_path / "again").mkdir()
    inputs = eh.write_inputs(tmp_path / "again", n=1)
    code, _, err = invoke("run", *files(inputs), "--home", str(tmp_path / "home"))
    assert code == 6
    assert "plan hash: sha256:" in err
    assert "0/2" not in err
    assert "steps ━" not in err


def test_read_only_policy_lets_a_read_plan_run_without_yes(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    code, _, err = invoke(
        "run", *files(inputs), "--approve-tiers", "none", "--home", str(tmp_path / "home")
    )
    assert code == 0, err


def test_check_lists_binding_errors_with_locations_and_exit_2(tmp_path: Path) -> None:
    bad = eh.BINDINGS.replace("tool: echo", "tool: nothing").replace("${d}", "${e}")
    inputs = eh.write_inputs(tmp_path, n=1, bindings=bad)
    code, _, err = invoke("check", *files(inputs))
    assert code == 2
    assert "no tool 'nothing'" in err
    assert "no parameter 'e'" in err
    assert "bindings.yaml:" in err


def test_check_prints_no_server_error_output_and_names_its_log_when_a_server_fails(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    inputs = eh.write_inputs(tmp_path, n=1, COUNTER_STDERR="counter chatter|more chatter")
    code, out, err = invoke("check", *files(inputs))
    assert code == 0, err
    terminal = capfd.readouterr()
    assert "chatter" not in out + err + terminal.out + terminal.err

    inputs = eh.write_inputs(
        tmp_path, n=1, COUNTER_STDERR="counter chatter", COUNTER_DIE_AT_START="1"
    )
    code, out, err = invoke("check", *files(inputs))
    assert code == 5
    terminal = capfd.readouterr()
    assert "chatter" not in out + terminal.out + terminal.err
    assert "dying" not in out + terminal.out + terminal.err
    logged = re.search(r"see its error output in (\S+\.servers\.log)", err)
    assert logged is not None, err
    log = Path(logged.group(1))
    try:
        assert log.read_text().splitlines() == [
            "[counter] counter chatter",
            "[counter] counter: dying at start-up as asked",
        ]
    finally:
        log.unlink()


def test_check_ok_summarises_the_binding(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    code, out, err = invoke("check", *files(inputs))
    assert code == 0, err
    assert out.startswith("ok: 2 steps bound")


def test_bad_servers_file_is_a_typed_error(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    inputs.servers.write_text('{"mcpServers": {"counter": {"url": "ftp://x"}}}')
    code, _, err = invoke("check", *files(inputs))
    assert code == 2
    assert "servers.json:1" in err


def test_reading_runs_from_a_home_with_no_run_log_says_where_it_looked_and_makes_nothing(
    tmp_path: Path,
) -> None:
    home = tmp_path / "mistyped"
    for args in (("runs",), ("show", "r-1"), ("replay", "r-1"), ("resume", "r-1")):
        code, out, err = invoke(*args, "--home", str(home))
        assert code == 2, args
        assert f"no run log at {home / 'runs.db'}" in err
        assert "--home" in err  # the hint
        assert out == ""
    code, _, err = invoke("runs", "--log", str(tmp_path / "other.db"))
    assert code == 2
    assert "other.db" in err
    assert not home.exists()
    assert not (tmp_path / "other.db").exists()


def test_runs_in_an_empty_run_log_says_there_are_none(tmp_path: Path) -> None:
    from plansmith.execution import SqliteRunLog

    SqliteRunLog(tmp_path / "home" / "runs.db").close()
    code, out, err = invoke("runs", "--home", str(tmp_path / "home"))
    assert code == 0
    assert out == ""
    assert "no runs in the run log yet" in err


def test_a_tool_message_with_brackets_is_printed_as_it_is_not_read_as_markup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "300")  # the table's cells unwrapped
    message = "no file [/data/x] (needs plansmith[postgres])"
    bindings = eh.BINDINGS.replace(
        'tool: echo\n    arguments: {x: "${summarise(d).done}"}',
        f'tool: refuse\n    arguments: {{reason: "{message}"}}',
    )
    assert "refuse" in bindings
    inputs = eh.write_inputs(tmp_path, n=1, bindings=bindings)
    home = ["--home", str(tmp_path / "home")]
    code, _, err = invoke("run", *files(inputs), "--yes", *home)
    assert code == 5, err  # the run failed; the view did not
    assert message in " ".join(err.split())
    code, out, _ = invoke("runs", *home)
    run_id = next(line.split()[1] for line in out.splitlines() if "r-" in line)
    assert f"run {run_id}: plan sha256:" in err  # the view names the run
    assert f"what ran: plansmith show {run_id}" in err
    code, out, err = invoke("show", run_id, *home)
    assert code == 0, err
    assert message in " ".join(out.split())


def test_runs_lists_the_newest_runs_and_says_how_many_older_ones_it_left_out(
    tmp_path: Path,
) -> None:
    from plansmith.execution import SqliteRunLog

    log = SqliteRunLog(tmp_path / "home" / "runs.db")
    for k in range(25):
        log.create_run(f"r-n{k:02d}", f"2026-01-01T00:00:{k:02d}.000Z", {})
    log.close()
    home = ["--home", str(tmp_path / "home")]
    code, out, err = invoke("runs", *home)
    assert code == 0
    listed = [line.split()[1] for line in out.splitlines() if "r-n" in line]
    assert listed == [f"r-n{k:02d}" for k in range(5, 25)]  # the newest 20, oldest first
    assert "5 older run(s) not listed" in err
    code, out, err = invoke("runs", "--limit", "0", *home)
    assert len([line for line in out.splitlines() if "r-n" in line]) == 25
    assert "older" not in err
    code, out, _ = invoke("runs", "-n", "2", *home)
    assert [line.split()[1] for line in out.splitlines() if "r-n" in line] == ["r-n23", "r-n24"]
    code, out, err = invoke("runs", "-n", "2", "--json", *home)
    assert code == 0, err
    assert [json.loads(line) for line in out.splitlines()] == [
        {
            "run_id": f"r-n{k}",
            "created": f"2026-01-01T00:00:{k}.000Z",
            "state": "unfinished",  # no plan yet: nothing awaits approval
            "steps_done": 0,
        }
        for k in (23, 24)
    ]


_WITH_SIGINT = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler);"
    " sys.argv[0] = 'plansmith'; from plansmith.cli import main; main()"
)


def test_ctrl_c_cancels_the_run_stops_its_servers_and_show_and_resume_say_so(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "server.pid"
    sleepy = (
        "bindings:\n"
        + eh.SUMMARISE_BINDING
        + binding("summarise_alt", "work", '{name: "alt-${d}"}', '{done: "$.structured.done"}')
        + binding("index", "sleep", "{seconds: 60}", '{slept: "$.structured"}')
    )
    inputs = eh.write_inputs(tmp_path, n=2, bindings=sleepy, COUNTER_PID_FILE=str(pid_file))
    home = ["--home", str(tmp_path / "home")]
    # SIGINT as a terminal's foreground job has it, even where this test runs with it
    # ignored (a background job of a shell that has no job control: its children inherit
    # that, and Python then leaves it ignored)
    command = [sys.executable, "-c", _WITH_SIGINT, "run", *files(inputs), "--yes", "--json", *home]
    # its own process group, which gets the SIGINT, as a terminal's Ctrl-C does
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    ) as engine:
        assert engine.stdout is not None
        assert engine.stderr is not None
        hung = threading.Timer(60, os.killpg, (engine.pid, signal.SIGKILL))  # fails, not hangs
        hung.start()
        try:
            events = []
            for line in engine.stdout:  # the events as they happen
                events.append(json.loads(line))
                if events[-1]["type"] == "StepStarted" and events[-1]["tool"] == "sleep":
                    break
            os.killpg(engine.pid, signal.SIGINT)
            events += [json.loads(line) for line in engine.stdout]  # the lines it buffered too
            err = engine.stderr.read().decode()
            engine.wait()
        finally:
            hung.cancel()
    assert engine.returncode == 130, err
    assert [e["type"] for e in events[-2:]] == ["RunCancelled", "RunFinished"]
    assert events[-1]["state"] == "cancelled"
    with pytest.raises(ProcessLookupError):  # the tool server went with the run
        os.kill(int(pid_file.read_text()), 0)
    run_id = events[0]["run_id"]
    sleeping = {e["step"] for e in events if e["type"] == "StepStarted" and e["tool"] == "sleep"}

    code, out, _ = invoke("show", run_id, *home)
    assert code == 0
    rows = [line for line in out.splitlines() if "counter/sleep" in line]
    assert {line.split()[1] for line in rows} == sleeping
    assert all("cancelled with" in line for line in rows)
    assert f"run {run_id}: cancelled (the engine was interrupted)" in out

    code, out, err = invoke("resume", run_id, "--yes", *home)
    assert code == 5
    assert out == ""
    assert f"run {run_id} had already finished: cancelled (the engine was interrupted)" in err
    assert "`plansmith run` starts a new run" in err

    code, out, err = invoke("replay", run_id, *home)  # ends where the run ended: cancelled
    assert code == 0
    assert "in 1 part(s); each step's events as recorded" in err
    replayed = [json.loads(line) for line in out.splitlines()]

    def kind(e: dict[str, object]) -> tuple[str, str, str]:
        return (str(e["type"]), str(e.get("step", "")), str(e.get("reason", "")))

    assert sorted(map(kind, replayed)) == sorted(map(kind, events))
    assert [kind(e) for e in replayed[-2:]] == [
        ("RunCancelled", "", "the engine was interrupted"),
        ("RunFinished", "", "the engine was interrupted"),
    ]


def test_show_of_a_run_whose_engine_stopped_lists_the_step_it_left_running(
    tmp_path: Path,
) -> None:
    from plansmith.execution import RunCreated, SqliteRunLog, StepRetrying, StepStarted
    from plansmith.execution._emit import Emitter

    log = SqliteRunLog(tmp_path / "home" / "runs.db")
    log.create_run("r-x", "2026-01-01T00:00:00.000Z", {})
    emitter = Emitter(log, "r-x")
    emitter.emit(RunCreated(run_id="r-x"))
    on = {"action": "summarise", "server": "counter", "tool": "work"}
    emitter.emit(StepStarted(run_id="r-x", step="s1", args=("d0",), attempt=1, **on))
    emitter.emit(StepStarted(run_id="r-x", step="s2", args=("d1",), attempt=1, **on))
    emitter.emit(  # s2's second attempt follows (no start event of its own)
        StepRetrying(run_id="r-x", step="s2", args=("d1",), attempt=1, error_class="timeout", **on)
    )
    log.close()  # as an engine killed mid-step leaves it: starts, no ends
    code, out, _ = invoke("show", "r-x", "--home", str(tmp_path / "home"))
    assert code == 0
    rows = [line.split("│")[1:5] for line in out.splitlines() if "no end" in line]
    assert [[cell.strip() for cell in row] for row in rows] == [
        ["s1", "summarise(d0)", "counter/work", "1"],
        ["s2", "summarise(d1)", "counter/work", "2"],
    ]
    out = " ".join(out.split())
    assert "started, no end yet" in out
    assert (
        "run r-x: not finished (if its engine stopped, `plansmith resume r-x` continues it)" in out
    )


def test_replay_says_which_steps_differ_from_a_record_it_cannot_reproduce(
    tmp_path: Path,
) -> None:
    from plansmith.execution import SqliteRunLog, StepStarted
    from plansmith.execution._emit import Emitter

    inputs = eh.write_inputs(tmp_path, n=1)
    home = ["--home", str(tmp_path / "home")]
    code, out, err = invoke("run", *files(inputs), "--yes", "--json", *home)
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    run_id, last = events[0]["run_id"], events[-1]["seq"]
    code, _, err = invoke("replay", run_id, *home)
    assert code == 0
    assert f"replayed run {run_id}: {len(events)} events in 1 part(s)" in err
    log = SqliteRunLog(tmp_path / "home" / "runs.db")  # a record no replay can give
    emitter = Emitter(log, run_id, last_seq=last)
    emitter.emit(StepStarted(run_id=run_id, step="s1", action="summarise", attempt=9))
    log.close()
    code, _, err = invoke("replay", run_id, *home)
    assert code == 5
    assert f"the replay of run {run_id} differs from its record in step(s) s1" in err
    assert f"plansmith show {run_id}" in err
