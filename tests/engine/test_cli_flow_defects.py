"""``plansmith run | resume | show | runs | check`` at the edges of a run's life: signals,
a home it cannot write, files named from another directory, a lease held elsewhere, and
output read by a program rather than a terminal."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import _engine_helpers as eh
import pytest

import plansmith.cli._check
import plansmith.cli._run  # noqa: F401  (registers the commands on the app)
from _proc import finish
from _shared_servers import binding

invoke, files = eh.invoke, eh.files

_MAIN = eh.CLI_MAIN
#: the same, with the SDK's grace for a stdio server to stop after its stdin closes (2 s,
#: then SIGTERM) made 60 s: the engine waits for a lingering server until the test ends it
_PATIENT_MAIN = (
    "import mcp.client.stdio; mcp.client.stdio.PROCESS_TERMINATION_TIMEOUT = 60.0; " + _MAIN
)

# a stdio "server" that never answers: start-up waits on it until the run is cancelled;
# it writes its pid, and ends when its stdin is closed (as the pool stops a server), after
# lingering argv[2] seconds
_SILENT_SERVER = """\
import os, sys, time
tmp = sys.argv[1] + ".tmp"
with open(tmp, "w") as f:
    f.write(str(os.getpid()))
os.replace(tmp, sys.argv[1])
sys.stdin.buffer.read()
time.sleep(float(sys.argv[2]))
"""

_SLEEPY = (
    "bindings:\n"
    + eh.SUMMARISE_BINDING
    + binding("summarise_alt", "work", '{name: "alt-${d}"}', '{done: "$.structured.done"}')
    + binding("index", "sleep", "{seconds: 60}", '{slept: "$.structured"}')
)


def _silent_servers(tmp: Path, inputs: eh.RunInputs, linger: float = 0.0) -> Path:
    """Make ``inputs``' counter server one that never answers (and takes ``linger``
    seconds to stop); its pid file."""
    script = tmp / "silent_server.py"
    script.write_text(_SILENT_SERVER)
    pid_file = tmp / "silent.pid"
    args = [str(script), str(pid_file), str(linger)]
    config = {"mcpServers": {"counter": {"command": sys.executable, "args": args}}}
    inputs.servers.write_text(json.dumps(config))
    return pid_file


@contextmanager
def _engine(*args: str, main: str = _MAIN) -> Iterator[subprocess.Popen[bytes]]:
    """``plansmith ARGS`` in a process of its own, killed (and the test failed) if it
    hangs for a minute."""
    command = [sys.executable, "-c", main, *args]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    ) as proc:
        hung = threading.Timer(60, os.killpg, (proc.pid, signal.SIGKILL))
        hung.start()
        try:
            yield proc
        finally:
            hung.cancel()


def _pid_from(path: Path, proc: subprocess.Popen[bytes]) -> int:
    """The pid ``path`` gets once the server started (bounded: 30 s)."""
    deadline = time.monotonic() + 30
    while not path.exists():
        assert proc.poll() is None, "the engine ended before its server started"
        assert time.monotonic() < deadline, f"no {path} after 30 s"
        time.sleep(0.02)  # polls a file the server writes; the wait itself is bounded
    return int(path.read_text())


def _ended(proc: subprocess.Popen[bytes]) -> tuple[int, str, str]:
    """The exit code and the rest of the output, read through the files the test read
    lines from (``_proc.finish``)."""
    code, out, err = finish(proc)
    return code, (out or b"").decode(), (err or b"").decode()


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _home(tmp: Path) -> list[str]:
    return ["--home", str(tmp / "home")]


# -- 1. Ctrl-C before the plan is ready ---------------------------------------------------


def test_ctrl_c_while_the_servers_start_records_the_run_cancelled_and_every_command_agrees(
    tmp_path: Path,
) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    pid_file = _silent_servers(tmp_path, inputs)
    with _engine("run", *files(inputs), "--yes", "--json", *_home(tmp_path)) as engine:
        assert engine.stdout is not None
        created = json.loads(engine.stdout.readline())  # the run is recorded
        assert created["type"] == "RunCreated"
        server = _pid_from(pid_file, engine)  # its server is starting, and never answers
        engine.send_signal(signal.SIGINT)
        code, out, err = _ended(engine)
    assert code == 130, err
    events = [created] + [json.loads(line) for line in out.splitlines()]
    assert [e["type"] for e in events] == ["RunCreated", "RunCancelled", "RunFinished"]
    assert events[-1]["state"] == "cancelled"
    assert events[-1]["reason"] == "the engine was interrupted"
    assert "Traceback" not in err
    assert _gone(server)
    run_id, home = created["run_id"], _home(tmp_path)

    code, out, _ = invoke("runs", "--json", *home)
    assert json.loads(out)["state"] == "cancelled"
    code, out, _ = invoke("show", run_id, *home)
    assert f"run {run_id}: cancelled (the engine was interrupted)" in out
    code, out, err = invoke("resume", run_id, "--yes", *home)
    assert code == 5
    assert "resumed with" not in err
    assert f"run {run_id} had already finished: cancelled" in err


def test_ctrl_c_while_the_servers_start_prints_how_the_run_ended_on_stderr(
    tmp_path: Path,
) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    pid_file = _silent_servers(tmp_path, inputs)
    with _engine("run", *files(inputs), "--yes", *_home(tmp_path)) as engine:
        _pid_from(pid_file, engine)
        engine.send_signal(signal.SIGINT)
        code, out, err = _ended(engine)
    assert code == 130, err
    assert out == ""
    assert "run cancelled: the engine was interrupted" in err
    assert re.search(r"what ran: plansmith show r-\w+", err)


# -- 4. a second and a third Ctrl-C ---------------------------------------------------------


def _until_sleeping(engine: subprocess.Popen[bytes]) -> list[dict[str, object]]:
    """The events ``engine`` printed until a step called the 60 s sleep."""
    assert engine.stdout is not None
    events: list[dict[str, object]] = []
    for line in engine.stdout:
        events.append(json.loads(line))
        if events[-1]["type"] == "StepStarted" and events[-1]["tool"] == "sleep":
            return events
    raise AssertionError(f"no sleep step started: {events}")


def _cancelled_while_starting(
    engine: subprocess.Popen[bytes], pid_file: Path
) -> list[dict[str, object]]:
    """Ctrl-C while ``engine``'s server starts; its events until the run is recorded
    cancelled (its server then takes a while to stop)."""
    assert engine.stdout is not None
    events = [json.loads(engine.stdout.readline())]
    _pid_from(pid_file, engine)
    engine.send_signal(signal.SIGINT)
    while events[-1]["type"] != "RunFinished":
        events.append(json.loads(engine.stdout.readline()))
    return events


def test_a_second_ctrl_c_while_cancelling_says_what_it_waits_for_and_exits_130_cleanly(
    tmp_path: Path,
) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    pid_file = _silent_servers(tmp_path, inputs, linger=30)
    home = _home(tmp_path)
    try:
        with _engine("run", *files(inputs), "--yes", "--json", *home, main=_PATIENT_MAIN) as engine:
            assert engine.stderr is not None
            events = _cancelled_while_starting(engine, pid_file)
            engine.send_signal(signal.SIGINT)  # while its server is stopping (for 30 s)
            note = engine.stderr.readline().decode()
            assert engine.poll() is None  # still waiting for its server
            server = int(pid_file.read_text())
            os.kill(server, signal.SIGTERM)  # the server stops at last
            code, out, err = _ended(engine)
    finally:
        if pid_file.exists():  # the lingering server, if the test failed before it ended
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert code == 130, err
    assert "Traceback" not in err
    run_id = events[0]["run_id"]
    assert (
        f"stopping the tool servers of run {run_id}: press Ctrl-C again to quit without"
        " waiting for them" in note
    )
    assert [e["type"] for e in events] == ["RunCreated", "RunCancelled", "RunFinished"]
    assert out == ""
    assert _gone(server)  # waited for: no orphan


def test_a_third_ctrl_c_quits_at_once_with_130_and_says_what_the_log_holds(
    tmp_path: Path,
) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    pid_file = _silent_servers(tmp_path, inputs, linger=30)
    home = _home(tmp_path)
    try:
        with _engine("run", *files(inputs), "--yes", "--json", *home, main=_PATIENT_MAIN) as engine:
            assert engine.stderr is not None
            events = _cancelled_while_starting(engine, pid_file)
            engine.send_signal(signal.SIGINT)
            note = engine.stderr.readline().decode()
            assert "press Ctrl-C again to quit" in note
            started = time.monotonic()
            engine.send_signal(signal.SIGINT)
            code, _, err = _ended(engine)
    finally:
        if pid_file.exists():  # the lingering server, that was told to go
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert time.monotonic() - started < 10  # not the server's 30 s
    assert code == 130, err
    run_id = events[0]["run_id"]
    assert f"quit without waiting for the tool servers of run {run_id} to stop" in err
    assert "Traceback" not in err


# -- 5. SIGTERM -------------------------------------------------------------------------------


def test_sigterm_cancels_the_run_like_ctrl_c_and_exits_143(tmp_path: Path) -> None:
    pid_file = tmp_path / "server.pid"
    inputs = eh.write_inputs(tmp_path, n=2, bindings=_SLEEPY, COUNTER_PID_FILE=str(pid_file))
    with _engine("run", *files(inputs), "--yes", "--json", *_home(tmp_path)) as engine:
        events = _until_sleeping(engine)
        engine.send_signal(signal.SIGTERM)  # to the engine alone, as `docker stop` sends it
        code, out, err = _ended(engine)
    events += [json.loads(line) for line in out.splitlines()]
    assert code == 143, err
    assert [e["type"] for e in events[-2:]] == ["RunCancelled", "RunFinished"]
    assert events[-1]["reason"] == "the engine was terminated (SIGTERM)"
    assert _gone(int(pid_file.read_text()))  # its servers were stopped, not orphaned
    code, out, _ = invoke("show", str(events[0]["run_id"]), *_home(tmp_path))
    assert "cancelled (the engine was terminated (SIGTERM))" in out


def test_sigterm_while_the_servers_start_records_the_run_cancelled(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    pid_file = _silent_servers(tmp_path, inputs)
    with _engine("run", *files(inputs), "--yes", *_home(tmp_path)) as engine:
        server = _pid_from(pid_file, engine)
        engine.send_signal(signal.SIGTERM)
        code, _, err = _ended(engine)
    assert code == 143, err
    assert "run cancelled: the engine was terminated (SIGTERM)" in err
    assert _gone(server)
    code, out, _ = invoke("runs", "--json", *_home(tmp_path))
    assert json.loads(out)["state"] == "cancelled"


# -- 2. inputs recorded as absolute paths ------------------------------------------------------


def _awaiting_run(home: list[str], *args: str) -> str:
    code, _, err = invoke("run", *args, *home)
    assert code == 6, err
    return re.findall(r"plansmith resume (r-\w+)", err)[0]


def test_a_run_records_its_files_by_absolute_path_and_resumes_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "elsewhere").mkdir()
    eh.write_inputs(tmp_path / "project", n=1)
    home = _home(tmp_path)
    monkeypatch.chdir(tmp_path / "project")
    relative = ["domain.yaml", "problem.yaml", "-s", "servers.json", "-b", "bindings.yaml"]
    run_id = _awaiting_run(home, *relative)
    code, out, _ = invoke("show", run_id, "--json", *home)
    recorded = json.loads(out.splitlines()[0])["inputs"]
    project = (tmp_path / "project").resolve()
    names = {"domain": "domain.yaml", "problem": "problem.yaml"}
    names |= {"servers": "servers.json", "bindings": "bindings.yaml"}
    assert recorded.pop("approval_policy") == "execute,write"  # the run's policy
    assert {k: v for k, v in recorded.items() if not k.endswith("_digest")} == {
        kind: str(project / name) for kind, name in names.items()
    }
    assert sorted(k for k in recorded if k.endswith("_digest")) == sorted(
        f"{kind}_digest" for kind in names
    )
    monkeypatch.chdir(tmp_path / "elsewhere")
    code, _, err = invoke("resume", run_id, "--yes", *home)
    assert code == 0, err


def test_a_run_recorded_with_relative_paths_resumes_from_its_directory_and_says_so_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio

    from plansmith.binding import load_bindings
    from plansmith.engine import Engine, load_problem_files, make_plan
    from plansmith.errors import ApprovalRequiredError
    from plansmith.servers import load_servers

    (tmp_path / "project").mkdir()
    (tmp_path / "elsewhere").mkdir()
    inputs = eh.write_inputs(tmp_path / "project", n=1)
    problem = load_problem_files(inputs.domain, inputs.problem)
    engine = Engine(tmp_path / "home")
    old = {k: Path(str(v)).name for k, v in inputs.to_dict().items()}  # as plansmith did

    async def record() -> None:
        config = load_servers(inputs.servers)
        plan = make_plan(problem)
        bindings = load_bindings(inputs.bindings)
        await engine.run_plan(plan, problem.domain, bindings, config, inputs=old)

    with pytest.raises(ApprovalRequiredError) as stopped:
        anyio.run(record)
    engine.close()
    run_id = re.findall(r"resume (r-\w+)", str(stopped.value.hint))[0]
    home = _home(tmp_path)
    monkeypatch.chdir(tmp_path / "elsewhere")
    code, _, err = invoke("resume", run_id, "--yes", *home)
    assert code == 2
    assert "relative to the directory it was started in" in err
    assert "from the directory where `plansmith run` started it" in err
    assert "resumed with" not in err
    monkeypatch.chdir(tmp_path / "project")
    code, _, err = invoke("resume", run_id, "--yes", *home)
    assert code == 0, err


# -- 3. a home plansmith cannot write ----------------------------------------------------------


def test_a_home_under_a_file_is_a_typed_error_naming_it_and_makes_no_run(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    (tmp_path / "file").write_text("")
    home = tmp_path / "file" / "home"
    code, out, err = invoke("run", *files(inputs), "--yes", "--home", str(home))
    assert code == 5
    assert out == ""
    assert err.startswith(f"error: {home}")  # the run log's, or its directory's, path
    assert "Traceback" not in err
    assert not home.exists()


def test_a_runs_directory_that_is_a_file_is_a_typed_error_and_leaves_no_half_made_run(
    tmp_path: Path,
) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    home = tmp_path / "home"
    home.mkdir()
    (home / "runs").write_text("")  # where each run's directory should go
    code, _, err = invoke("run", *files(inputs), "--yes", "--home", str(home))
    assert code == 5
    assert re.match(rf"error: {home / 'runs'}/r-\w+: cannot make the run's directory", err)
    assert "Traceback" not in err
    code, out, err = invoke("runs", "--home", str(home))
    assert code == 0
    assert out == ""
    assert "no runs in the run log yet" in err


# -- 6. "resumed with" only once the run resumes -----------------------------------------------


def test_resume_says_resumed_only_once_the_run_really_resumes(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    home = _home(tmp_path)
    run_id = _awaiting_run(home, *files(inputs))
    code, _, err = invoke("resume", run_id, *home)  # no --yes: still awaiting approval
    assert code == 6
    assert "resumed with" not in err
    code, _, err = invoke("resume", run_id, "--yes", *home)
    assert code == 0, err
    assert f"run {run_id}: resumed with 0 of 2 steps done" in err


def test_resume_of_a_run_made_from_a_plan_stopped_before_binding_says_why_and_not_resumed(
    tmp_path: Path,
) -> None:
    # a run made from files is planned and bound again (test_resume_kill_boundaries); one
    # recorded with no files (``Engine.run_plan``) has nothing to plan from
    from plansmith.execution import Emitter, RunCreated, SqliteRunLog

    log = SqliteRunLog(tmp_path / "home" / "runs.db")
    log.create_run("r-old", "2026-01-01T00:00:00.000Z", {})
    Emitter(log, "r-old").emit(RunCreated(run_id="r-old"))  # as a killed engine left it
    log.close()
    code, out, err = invoke("resume", "r-old", "--yes", *_home(tmp_path))
    assert code == 5
    assert "resumed with" not in err
    assert "was run from a plan made elsewhere, not from files: it cannot be resumed" in err
    code, out, _ = invoke("runs", "--json", *_home(tmp_path))
    assert json.loads(out)["state"] == "unfinished"  # not "awaiting approval": no plan
    code, out, _ = invoke("show", "r-old", *_home(tmp_path))
    assert "no plan bound yet" in out
    assert "`plansmith run` starts a new run" in out


# -- 7. a run another engine drives --------------------------------------------------------


def test_resume_of_a_run_another_engine_drives_exits_7_and_says_not_resumed(
    tmp_path: Path,
) -> None:
    from plansmith.execution import SqliteRunLog

    inputs = eh.write_inputs(tmp_path, n=1)
    home = _home(tmp_path)
    run_id = _awaiting_run(home, *files(inputs))
    log = SqliteRunLog(tmp_path / "home" / "runs.db")
    other = f"{socket.gethostname()}:{os.getpid()}:other"  # a live engine on this host
    assert log.acquire(run_id, other, 60.0) is not None
    try:
        code, out, err = invoke("resume", run_id, "--yes", *home)
    finally:
        log.release(run_id, other)
        log.close()
    assert code == 7
    assert f"is driven by engine {other}" in err
    assert "resumed with" not in err
    assert out == ""


# -- 8. show of a run awaiting approval ---------------------------------------------------


def test_show_of_a_run_awaiting_approval_says_how_to_approve_it(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    home = _home(tmp_path)
    run_id = _awaiting_run(home, *files(inputs))
    code, out, _ = invoke("show", run_id, *home)
    assert code == 0
    last = out.splitlines()[-1]
    assert re.fullmatch(
        rf"run {run_id}: awaiting approval of plan sha256:\w+: approve with"
        rf" `plansmith resume {run_id} --yes`",
        last,
    )
    assert "not finished" not in out
    code, out, _ = invoke("runs", "--json", *home)
    assert json.loads(out)["state"] == "awaiting approval"


# -- 9. every exit code in the help ---------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "codes"),
    [
        ("run", {0, 2, 3, 4, 5, 6, 7, 130, 143}),
        ("resume", {0, 2, 5, 6, 7, 130, 143}),
        ("check", {0, 2, 3, 4, 5, 130}),
        ("replay", {0, 2, 5}),
        ("runs", {0, 2}),
        ("show", {0, 2, 5}),
    ],
)
def test_every_run_command_help_lists_the_exit_codes_it_can_return(
    command: str, codes: set[int]
) -> None:
    code, out, _ = invoke(command, "--help")
    assert code == 0
    text = " ".join(out.split())
    listed = text.split("Exit codes:")[1].split("╭")[0].strip()
    assert {int(n) for n in re.findall(r"(?:^|; )(\d+) ", listed)} == codes


def test_run_and_check_of_an_unsolvable_problem_exit_3_as_their_help_says(
    tmp_path: Path,
) -> None:
    from _shared_servers import problem_text

    inputs = eh.write_inputs(tmp_path, n=1)
    inputs.problem.write_text(problem_text(1, goal="indexed(d0), not exists(d0)"))
    for args in (("check", *files(inputs)), ("run", *files(inputs), *_home(tmp_path))):
        code, _, err = invoke(*args)
        assert code == 3, err


# -- 10. no hard wraps when the output is not a terminal --------------------------------------


def test_lines_are_not_wrapped_when_the_output_is_not_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")  # what a pipe gets by default
    message = "a reason long enough to be wrapped at eighty columns " * 2
    bindings = eh.BINDINGS.replace(
        'tool: echo\n    arguments: {x: "${summarise(d).done}"}',
        f'tool: refuse\n    arguments: {{reason: "{message.strip()}"}}',
    )
    inputs = eh.write_inputs(tmp_path, n=1, bindings=bindings)
    home = _home(tmp_path)
    code, _, err = invoke("run", *files(inputs), "--yes", *home)
    assert code == 5, err
    lines = err.splitlines()
    plan_line = next(line for line in lines if ": plan sha256:" in line)
    assert re.fullmatch(r"run r-\w+: plan sha256:[0-9a-f]{64}: 2 steps", plan_line)
    assert any(message.strip() in line for line in lines)  # the reason on one line
    run_id = plan_line.split()[1].rstrip(":")
    code, out, _ = invoke("show", run_id, *home)
    assert any(message.strip() in line for line in out.splitlines())  # one table row
    code, out, _ = invoke("show", _awaiting_run(home, *files(inputs)), *home)
    assert "approve with `plansmith resume r-" in out.splitlines()[-1]


# -- 11. retry rows name the call ---------------------------------------------------------


def test_show_names_a_retried_step_by_its_call_as_it_names_its_end(tmp_path: Path) -> None:
    from plansmith.execution import (
        Emitter,
        RunCreated,
        SqliteRunLog,
        StepRetrying,
        StepStarted,
        StepSucceeded,
    )

    log = SqliteRunLog(tmp_path / "home" / "runs.db")
    log.create_run("r-x", "2026-01-01T00:00:00.000Z", {})
    emitter = Emitter(log, "r-x")
    emitter.emit(RunCreated(run_id="r-x"))
    on = {"step": "s1", "action": "summarise", "args": ("d0",), "server": "counter"}
    emitter.emit(StepStarted(run_id="r-x", tool="work", attempt=1, **on))
    emitter.emit(StepRetrying(run_id="r-x", tool="work", attempt=1, error_class="timeout", **on))
    emitter.emit(StepSucceeded(run_id="r-x", tool="work", attempt=2, outputs={}, **on))
    log.close()
    code, out, _ = invoke("show", "r-x", *_home(tmp_path))
    assert code == 0
    rows = [line.split("│")[1:3] for line in out.splitlines() if "counter/work" in line]
    assert [[cell.strip() for cell in row] for row in rows] == [
        ["s1", "summarise(d0)"],
        ["s1", "summarise(d0)"],
    ]


def test_an_empty_approve_tiers_is_refused_and_runs_nothing(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    home = tmp_path / "home"
    code, _, err = invoke("run", *files(inputs), "--approve-tiers", "", "--home", str(home))
    assert code == 2
    assert "--approve-tiers: no tier named: say none to let every plan run unapproved" in err
    assert not (home / "runs").exists() or not any((home / "runs").iterdir())


def test_run_dir_is_absolute_with_a_relative_home_and_inputs_may_be_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plansmith.engine import Engine, RunInputs

    eh.write_inputs(tmp_path, n=1)
    monkeypatch.chdir(tmp_path)
    engine = Engine("home")  # relative, as `--home home` or the default .plansmith
    inputs = RunInputs("domain.yaml", "problem.yaml", "servers.json", "bindings.yaml")
    assert inputs.domain == Path("domain.yaml")
    run_dir = engine.run_dir("r-1")
    engine.close()
    assert run_dir.is_absolute()
    assert run_dir == tmp_path / "home" / "runs" / "r-1"


def test_resume_of_a_run_whose_server_left_the_servers_file_is_refused_before_approval(
    tmp_path: Path,
) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    home = ["--home", str(tmp_path / "home")]
    code, _, err = invoke("run", *files(inputs), *home)
    assert code == 6
    run_id = re.findall(r"plansmith resume (r-\w+)", err)[0]
    inputs.servers.write_text(inputs.servers.read_text().replace('"counter"', '"ctr"'))
    code, _, err = invoke("resume", run_id, "--yes", *home)
    assert code == 2
    assert "calls server(s) 'counter', which the servers file no longer names" in err
    code, out, _ = invoke("show", run_id, "--json", *home)
    types = [json.loads(line)["type"] for line in out.splitlines()]
    assert types[-1] == "AwaitingApproval"  # not approved, not failed: it can go on
    assert "PlanApproved" not in types
