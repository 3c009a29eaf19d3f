"""Stopping a run, or a check, while the planner searches: Ctrl-C (SIGINT) and SIGTERM on
the command line, a cancelled task or ``Engine.cancel`` from Python. The planner searches
in a worker thread, so the event loop acts on them at once, and the abandoned search
stops at its next check point instead of running on to its end."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import _engine_helpers as eh
import anyio
import pytest

from _proc import finish
from plansmith.engine import Engine, Planner, RunInputs, load_problem_files, make_plan
from plansmith.errors import LimitReachedError
from plansmith.model import Plan, Problem
from plansmith.planning import PlanOptions, plan

# Seconds a stop may take: the search alone takes minutes, and a busy machine (a loaded
# CI runner) can take seconds to tear a process down, so the bound is far from both.
PROMPTLY = 15.0

# Three walkers on a line of 100 cells each, and a goal that also wants the light both
# red and green: reachable once delete effects are ignored (so the heuristic sees no dead
# end), never in fact. The search can only prove it by exhausting the 100**3 * 3 states
# (minutes of search); no plan ever comes.
_WALKERS = """\
domain: walkers
types: {walker: object, cell: object}
predicates:
  at: [walker, cell]
  next: [cell, cell]
  red: []
  green: []
actions:
  forward:
    parameters: {w: walker, a: cell, b: cell}
    precondition: [at(w, a), next(a, b)]
    effect: [at(w, b), not at(w, a)]
    tier: read
  back:
    parameters: {w: walker, a: cell, b: cell}
    precondition: [at(w, b), next(a, b)]
    effect: [at(w, a), not at(w, b)]
    tier: read
  paint_red:
    parameters: {}
    precondition: []
    effect: [red(), not green()]
    tier: read
  paint_green:
    parameters: {}
    precondition: []
    effect: [green(), not red()]
    tier: read
"""


def _walkers_problem(cells: int = 100, walkers: int = 3) -> str:
    objects = [f"w{i}: walker" for i in range(walkers)] + [f"c{k}: cell" for k in range(cells)]
    init = [f"next(c{k}, c{k + 1})" for k in range(cells - 1)]
    init += [f"at(w{i}, c0)" for i in range(walkers)]
    goal = ["red()", "green()"] + [f"at(w{i}, c{cells - 1})" for i in range(walkers)]
    return (
        f"problem: endless\ndomain: walkers\nobjects: {{{', '.join(objects)}}}\n"
        f"init: [{', '.join(init)}]\ngoal: [{', '.join(goal)}]\n"
    )


def _slow_inputs(tmp: Path) -> RunInputs:
    """Files whose planning takes minutes (the servers and bindings are never used)."""
    inputs = eh.write_inputs(tmp, n=1)
    inputs.domain.write_text(_WALKERS)
    inputs.problem.write_text(_walkers_problem())
    return inputs


def test_the_slow_problem_is_neither_solved_nor_exhausted_in_twenty_thousand_expansions(
    tmp_path: Path,
) -> None:
    inputs = _slow_inputs(tmp_path)
    problem = load_problem_files(inputs.domain, inputs.problem)
    with pytest.raises(LimitReachedError, match="node limit of 20000"):
        plan(problem, PlanOptions(node_limit=20_000))


# -- the command line ---------------------------------------------------------------------

# SIGINT as a terminal's foreground job has it (even where the tests run with it ignored),
# and a line on stderr once the planner is called, for the test to send its signal then
_MAIN = """\
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
import plansmith.engine as engine
made = engine.Engine.__init__
def watched(self, *args, **kwargs):  # every engine the command makes, its planner watched
    made(self, *args, **kwargs)
    searched = self.planner
    def planner(*args, **kwargs):
        sys.stderr.write("test: planning\\n")
        sys.stderr.flush()
        return searched(*args, **kwargs)
    self.planner = planner
engine.Engine.__init__ = watched
sys.argv[0] = "plansmith"
from plansmith.cli import main
main()
"""


@contextmanager
def _planning(*args: str) -> Iterator[subprocess.Popen[bytes]]:
    """``plansmith ARGS`` in a process of its own, once it called the planner (bounded:
    killed, and the test failed, if it hangs for two minutes)."""
    command = [sys.executable, "-c", _MAIN, *args]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    ) as proc:
        hung = threading.Timer(120, os.killpg, (proc.pid, signal.SIGKILL))
        hung.start()
        try:
            assert proc.stderr is not None
            line = proc.stderr.readline().decode()
            assert line == "test: planning\n", line + proc.stderr.read().decode()
            yield proc
        finally:
            hung.cancel()
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)


def _stopped(proc: subprocess.Popen[bytes], signum: int) -> tuple[int, str, str, float]:
    """Send ``signum``; the exit code, stdout, stderr, and the seconds it took to exit
    (a process still there after 20 s is killed: it waits for the search's end)."""
    sent = time.monotonic()
    proc.send_signal(signum)
    try:  # read through the file the test read a line from (_proc.finish)
        code, out, err = finish(proc, timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        finish(proc)
        pytest.fail("the process was still there 20 s after the signal: it waited for the search")
    return code, (out or b"").decode(), (err or b"").decode(), time.monotonic() - sent


def _home(tmp: Path) -> list[str]:
    return ["--home", str(tmp / "home")]


@pytest.mark.parametrize(
    ("signum", "code", "reason"),
    [
        (signal.SIGINT, 130, "the engine was interrupted"),
        (signal.SIGTERM, 143, "the engine was terminated (SIGTERM)"),
    ],
)
def test_a_signal_while_the_planner_searches_stops_run_at_once_and_records_it_cancelled(
    tmp_path: Path, signum: int, code: int, reason: str
) -> None:
    inputs = _slow_inputs(tmp_path)
    home = _home(tmp_path)
    with _planning("run", *eh.files(inputs), "--yes", "--json", *home) as proc:
        exit_code, out, err, took = _stopped(proc, signum)
    assert exit_code == code, err
    assert took < PROMPTLY  # the search alone takes minutes
    assert "Traceback" not in err
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["type"] for e in events] == ["RunCreated", "RunCancelled", "RunFinished"]
    assert events[-1]["state"] == "cancelled"
    assert events[-1]["reason"] == reason
    run_id = events[0]["run_id"]
    _, listed, _ = eh.invoke("runs", "--json", *home)
    runs = [json.loads(line) for line in listed.splitlines()]
    assert [(r["run_id"], r["state"], r["steps_done"]) for r in runs] == [(run_id, "cancelled", 0)]
    _, shown, _ = eh.invoke("show", run_id, *home)
    assert f"run {run_id}: cancelled ({reason})" in shown


def test_ctrl_c_while_the_planner_searches_prints_how_the_run_ended(tmp_path: Path) -> None:
    inputs = _slow_inputs(tmp_path)
    with _planning("run", *eh.files(inputs), "--yes", *_home(tmp_path)) as proc:
        exit_code, out, err, took = _stopped(proc, signal.SIGINT)
    assert exit_code == 130, err
    assert took < PROMPTLY
    assert out == ""
    assert "run cancelled: the engine was interrupted" in err
    assert "what ran: plansmith show r-" in err
    assert "Traceback" not in err


def test_ctrl_c_while_check_plans_stops_it_at_once_with_130(tmp_path: Path) -> None:
    inputs = _slow_inputs(tmp_path)
    with _planning("check", *eh.files(inputs), *_home(tmp_path)) as proc:
        exit_code, out, err, took = _stopped(proc, signal.SIGINT)
    assert exit_code == 130, err
    assert took < PROMPTLY
    assert out == ""
    assert "Traceback" not in err


# -- the Python API -----------------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextmanager
def _watched_planner() -> Iterator[tuple[Planner, threading.Event, threading.Event, list[str]]]:
    """The engine's planner, watched (an engine's ``planner``): an event set once it is
    called (in its thread), one set once it returned or raised, and how it ended."""
    started, ended = threading.Event(), threading.Event()
    how: list[str] = []
    searched = make_plan

    def watched(problem: Problem, **kwargs: Callable[[], bool] | None) -> Plan:
        started.set()
        try:
            result = searched(problem, **kwargs)
        except BaseException as error:
            how.append(type(error).__name__)
            raise
        finally:
            ended.set()
        how.append("plan")
        return result

    yield watched, started, ended, how


async def _wait(event: threading.Event, seconds: float) -> None:
    assert await anyio.to_thread.run_sync(event.wait, seconds), f"not within {seconds} s"


@pytest.mark.anyio
async def test_engine_run_cancelled_while_planning_returns_at_once_and_stops_the_search(
    tmp_path: Path,
) -> None:
    inputs = _slow_inputs(tmp_path)
    with _watched_planner() as (planner, started, ended, how):
        engine = Engine(tmp_path / "home", planner=planner)
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: engine.run(inputs, approve=True, run_id="r-plan"))
            await _wait(started, 30)
            cancelled = time.monotonic()
            tg.cancel_scope.cancel()
        assert time.monotonic() - cancelled < PROMPTLY  # the search alone takes minutes
        await _wait(ended, 30)  # and it stopped: no thread goes on searching
    assert how == ["LimitReachedError"]
    assert engine.log.runs() == []  # nothing recorded: the run never began
    engine.close()


def _recorded_run(
    engine: Engine, inputs: RunInputs, run_id: str
) -> tuple[Callable[[], Awaitable[None]], list[str], list[tuple[str, str | None]]]:
    """A task running ``inputs`` as ``run_id`` (approved), the event types it saw, and
    (once it returns) its outcome's state and reason."""
    seen: list[str] = []
    outcomes: list[tuple[str, str | None]] = []

    async def run() -> None:
        outcome = await engine.run(
            inputs, approve=True, run_id=run_id, subscribe=lambda e: seen.append(e.type)
        )
        outcomes.append((outcome.state, outcome.reason))

    return run, seen, outcomes


@pytest.mark.anyio
async def test_engine_cancel_while_planning_records_the_run_cancelled_with_its_reason(
    tmp_path: Path,
) -> None:
    with _watched_planner() as (planner, started, ended, how):
        engine = Engine(tmp_path / "home", planner=planner)
        run, seen, outcomes = _recorded_run(engine, _slow_inputs(tmp_path), "r-plan")
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await _wait(started, 30)
            cancelled = time.monotonic()
            assert engine.cancel("r-plan", "no longer wanted")
        assert time.monotonic() - cancelled < PROMPTLY
        await _wait(ended, 30)
    assert how == ["LimitReachedError"]
    assert outcomes == [("cancelled", "no longer wanted")]
    assert seen == ["RunCreated", "RunCancelled", "RunFinished"]
    assert [e.type for e in engine.log.events("r-plan")] == seen
    engine.close()


# Shortcuts the first plan takes (a walker jumps; both colours at once), ``mix`` bound to
# a tool that fails: the replan, without it, is the endless walkers' search again
_SHORTCUTS = """\
  jump:
    parameters: {w: walker, a: cell, b: cell}
    precondition: [at(w, a)]
    effect: [at(w, b), not at(w, a)]
    tier: read
  mix:
    parameters: {}
    precondition: []
    effect: [red(), green()]
    tier: read
"""


def _replan_inputs(tmp: Path) -> RunInputs:
    """Files whose first plan has a step that fails; replanning takes minutes."""
    inputs = eh.write_inputs(tmp, n=1)
    inputs.domain.write_text(_WALKERS + _SHORTCUTS)
    inputs.problem.write_text(_walkers_problem())
    echo = '{x: "step"}'
    inputs.bindings.write_text(
        "bindings:\n"
        + "".join(
            f"  {name}:\n    server: counter\n    tool: echo\n    arguments: {echo}\n"
            for name in ("forward", "back", "paint_red", "paint_green", "jump")
        )
        + '  mix:\n    server: counter\n    tool: fail\n    arguments: {message: "no"}\n'
    )
    return inputs


@pytest.mark.anyio
@pytest.mark.timeout(60)  # a guard: a replan in the event loop blocks the cancel for minutes
async def test_engine_cancel_while_replanning_records_the_run_cancelled_and_stops_the_search(
    tmp_path: Path,
) -> None:
    with _watched_planner() as (planner, started, ended, how):
        engine = Engine(tmp_path / "home", planner=planner)
        run, seen, outcomes = _recorded_run(engine, _replan_inputs(tmp_path), "r-replan")
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await _wait(ended, 60)  # the first plan, with mix()
            started.clear()
            ended.clear()
            await _wait(started, 30)  # the replan, after mix() failed
            cancelled = time.monotonic()
            assert engine.cancel("r-replan", "no longer wanted")
        assert time.monotonic() - cancelled < PROMPTLY  # the search alone takes minutes
        await _wait(ended, 30)
    assert how == ["plan", "LimitReachedError"]
    assert outcomes == [("cancelled", "no longer wanted")]
    assert "StepFailed" in seen
    assert "Replanned" not in seen
    assert seen[-2:] == ["RunCancelled", "RunFinished"]
    engine.close()


# The planner's own thread is sent SIGTERM as the search begins: the kernel may hand a
# signal sent to the process to any of its threads, and the event loop, asleep in the main
# thread, must still wake to it.
_MAIN_SIGNALLED_IN_THREAD = _MAIN.replace(
    "        return searched(*args, **kwargs)",
    "        import threading\n"
    "        signal.pthread_kill(threading.get_ident(), signal.SIGTERM)\n"
    "        return searched(*args, **kwargs)",
)


def test_a_signal_the_planners_thread_receives_still_stops_the_run_at_once(
    tmp_path: Path,
) -> None:
    assert _MAIN_SIGNALLED_IN_THREAD != _MAIN
    inputs = _slow_inputs(tmp_path)
    command = [sys.executable, "-c", _MAIN_SIGNALLED_IN_THREAD, "run", *eh.files(inputs)]
    command += ["--yes", "--json", *_home(tmp_path)]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    ) as proc:
        try:
            code, out, err = finish(proc, timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            finish(proc)
            pytest.fail("the signal handed to the planner's thread did not wake the event loop")
    assert code == 143, (err or b"").decode()
    events = [json.loads(line) for line in (out or b"").decode().splitlines()]
    assert [e["type"] for e in events] == ["RunCreated", "RunCancelled", "RunFinished"]
    assert events[-1]["reason"] == "the engine was terminated (SIGTERM)"
