"""Chaos suite: SIGKILL the engine at random points and resume; break its servers in every
way a server breaks; check that nothing runs twice, nothing is lost, nothing hangs past its
timeout and every failure is classified as docs/bindings.md says.

The plan (bench/chaos/: domain.yaml, problem.yaml, bindings.yaml, servers.json): eight
parallel chains ``fetch(x) -> transform(x)``, joined pairwise by ``combine(x, y)`` and all
four joins by ``report(...)``: 21 steps on two stdio servers (``alpha``, ``beta``), each
step after a chain's first reading earlier steps' outputs through references. The servers
are bench/chaos/server.py (the MCP SDK's ``MCPServer``): each call takes 5-100 ms, is
logged (with its idempotency key, process and parent process) before the tool acts, and
a repeated key gets the first result back. Every output is known in advance
(bench/chaos/values.py). A first, uninterrupted run must succeed with every output right
(else the suite exits 2); its timings place the kills.

Kill trials (``--trials N``): ``plansmith run ... --yes --json`` is SIGKILLed at a delay
drawn from the seeded RNG: one trial in three at a delay after its ``RunCreated`` within
the time the uninterrupted run took to bind its plan (its servers start: they sleep
``--start-delay`` s before serving, to widen that window), the others at a delay after
its ``PlanReady`` within the time that run's steps took, and a tenth more. Where the kill
landed is read from the run's log (``plansmith show RUN --json``): before the plan was
bound, bound but no step started, mid-steps, after the last step, or after the run
finished. Then ``plansmith resume RUN --yes``, again (at most ``--resumes`` times) while
the run is not finished and the resume did not refuse it for good. *Resumed*: the run
ends succeeded. *Duplicates*: calls in the servers' log whose key is that of a step that
had already succeeded then (its first ``StepSucceeded``). *Lost outputs*: steps whose
outputs are not in the final log as they should be (every step's when the run
succeeded, else those of the steps that had succeeded). *Orphans*: servers of the killed
engine still alive 5 s after the kill.

Fault runs (``--faults N``): the kinds in turn (``--kinds``), each at a call drawn from
the RNG, in a run of its own (fresh home), with docs/bindings.md's outcome:

  kill      the server SIGKILLs itself mid-call   transport_lost, sent once more after the
                                                  restart: the run succeeds
  hang      the call never answers                timeout: the step fails
  stall     the server stops (SIGSTOP)            timeout: its calls in flight fail
  utf8      the answer holds the byte 0xff        protocol_error of that call only; the
                                                  calls in flight beside it succeed
  schema    content against the outputSchema      protocol_error
  is_error  an isError result                     tool_error
  huge      a right answer of --huge-mb MB        no failure: the step succeeds
  deep      content nested --deep levels          protocol_error

A step that fails for good fails the run (no other plan reaches the goal). *Misclassified*:
the run's outcome, or the class of a failed or retried attempt, is not the documented
one. *Hangs past the limit*: a timed-out call whose wall time (from its arrival at the
server to its ``StepFailed``, or its ``duration_ms``) passed the binding's timeout by more
than 1 s; an engine that exited more than timeout + 1 s later after its ``RunFinished``
than the uninterrupted run did; or one the suite had to kill (``--run-limit``).

Usage: .venv/bin/python bench/chaos.py [--trials 50] [--faults 40] [--seed N] [--jobs N]
Prints the seed, a line per trial as it ends, and the tables (``--json``: one JSON
document); exits 1 when a bar is missed (a trial not resumed, a duplicate, a lost output,
an orphan, a hang past the limit, a misclassified run), 2 when the suite cannot run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

HERE = Path(__file__).resolve().parent
FILES = HERE / "chaos"
SERVER = FILES / "server.py"
sys.path.insert(0, str(FILES))
import values  # noqa: E402  (bench/chaos/values.py)

KINDS = ("kill", "hang", "stall", "utf8", "schema", "is_error", "huge", "deep")
#: what docs/bindings.md says each fault ends as: the run's state, and the class of the
#: faulted call's attempt (None: it does not fail)
DOCUMENTED: dict[str, tuple[str, str | None]] = {
    "kill": ("succeeded", "transport_lost"),
    "hang": ("failed", "timeout"),
    "stall": ("failed", "timeout"),
    "utf8": ("failed", "protocol_error"),
    "schema": ("failed", "protocol_error"),
    "is_error": ("failed", "tool_error"),
    "huge": ("succeeded", None),
    "deep": ("failed", "protocol_error"),
}
POINTS = (
    "before the plan was bound (servers starting)",
    "plan bound, no step started",
    "mid-steps",
    "after the last step, not finished",
    "after the run finished",
)
Trial = TypeVar("Trial", "KillTrial", "FaultRun")
SLACK = 1.0  # s past the timeout a hung call may take
ORPHAN_GRACE = 5.0  # s after the kill the killed engine's servers have to be gone


# -- processes ---------------------------------------------------------------------------


class Proc:
    """A plansmith command with ``--json``: its events as they come (each with the time it
    was read), and its stderr in a file."""

    def __init__(self, args: Sequence[str], env: Mapping[str, str], errfile: Path) -> None:
        self.args = list(args)
        self.events: list[dict[str, Any]] = []
        self.arrived: dict[str, float] = {}  # event type: when its first one was read
        self.started = time.time()
        self.exited: float | None = None
        self._cond = threading.Condition()
        self._err = open(errfile, "wb")  # noqa: SIM115  (closed by wait)
        self.errfile = errfile
        self.popen = subprocess.Popen(
            self.args,
            stdout=subprocess.PIPE,
            stderr=self._err,
            stdin=subprocess.DEVNULL,
            env=dict(env),
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            with self._cond:
                self.events.append(event)
                self.arrived.setdefault(str(event.get("type")), time.time())
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def wait_for(self, kind: str, timeout: float) -> dict[str, Any] | None:
        """The first event of type ``kind``, or None when the output ended or ``timeout``
        passed without one."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for event in self.events:
                    if event.get("type") == kind:
                        return event
                left = deadline - time.monotonic()
                if left <= 0 or not self._reader.is_alive():
                    return None
                self._cond.wait(min(left, 0.5))

    def kill(self) -> bool:
        """SIGKILL the process; False when it had exited already."""
        if self.popen.poll() is not None:
            return False
        os.kill(self.popen.pid, signal.SIGKILL)  # the process this suite started
        return True

    def wait(self, timeout: float) -> tuple[int, bool]:
        """Its exit code, and whether it had to be killed after ``timeout`` s."""
        killed = False
        try:
            code = self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            killed = self.kill()
            code = self.popen.wait()
        self.exited = time.time()
        self._reader.join(30)
        if self.popen.stdout is not None:
            self.popen.stdout.close()
        self._err.close()
        return code, killed

    def stderr_tail(self, lines: int = 3) -> str:
        text = self.errfile.read_text(encoding="utf-8", errors="replace").strip()
        return " | ".join(text.splitlines()[-lines:])


@dataclass
class Setup:
    """What every run of the suite shares."""

    plansmith: Path
    work: Path
    timeout: float
    start_delay: float
    delay_ms: str
    huge_mb: float
    deep: int
    run_limit: float

    def files(self, folder: Path) -> list[str]:
        """The domain, problem, ``--servers`` and ``--bindings`` arguments, the bindings
        written into ``folder`` with the suite's timeout."""
        text = (FILES / "bindings.yaml").read_text(encoding="utf-8")
        if text.count("    timeout: 2\n") != 4:
            raise SystemExit("bench/chaos/bindings.yaml: expected 4 lines 'timeout: 2'")
        bindings = folder / "bindings.yaml"
        bindings.write_text(text.replace("    timeout: 2\n", f"    timeout: {self.timeout:g}\n"))
        return [
            str(FILES / "domain.yaml"),
            str(FILES / "problem.yaml"),
            "--servers",
            str(FILES / "servers.json"),
            "--bindings",
            str(bindings),
        ]

    def env(
        self, folder: Path, *, start_delay: float, fault: str = "", at: str = ""
    ) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            CHAOS_PYTHON=sys.executable,
            CHAOS_SERVER=str(SERVER),
            CHAOS_LOG=str(folder / "calls.jsonl"),
            CHAOS_STATE=str(folder / "state"),
            CHAOS_START_DELAY=f"{start_delay:g}",
            CHAOS_DELAY_MS=self.delay_ms,
            CHAOS_HUGE_MB=f"{self.huge_mb:g}",
            CHAOS_DEEP=str(self.deep),
            CHAOS_FAULT=fault,
            CHAOS_FAULT_AT=at,
            CHAOS_FAULT_ONCE=str(folder / "fault-fired"),
        )
        return env

    def run(self, folder: Path, env: Mapping[str, str]) -> Proc:
        folder.mkdir(parents=True, exist_ok=True)
        args = [str(self.plansmith), "run", *self.files(folder)]
        args += ["--home", str(folder / "home"), "--yes", "--json"]
        return Proc(args, env, folder / "run.err")

    def resume(self, folder: Path, run_id: str, env: Mapping[str, str], n: int) -> Proc:
        args = [
            str(self.plansmith),
            "resume",
            run_id,
            "--home",
            str(folder / "home"),
            "--yes",
            "--json",
        ]
        return Proc(args, env, folder / f"resume-{n}.err")

    def show(self, folder: Path, run_id: str) -> list[dict[str, Any]]:
        """The run's recorded events (``plansmith show RUN --json``)."""
        done = subprocess.run(
            [str(self.plansmith), "show", run_id, "--home", str(folder / "home"), "--json"],
            capture_output=True,
            check=False,
            timeout=self.run_limit,
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"plansmith show {run_id}: exit {done.returncode}: {done.stderr[-500:]!r}"
            )
        return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


# -- reading a run -----------------------------------------------------------------------


def when(event: Mapping[str, Any]) -> float:
    """An event's ``time`` as seconds since the epoch."""
    return datetime.fromisoformat(str(event["time"]).replace("Z", "+00:00")).timestamp()


def plan_steps(events: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, list[str]]]:
    """Each step of the run's plan: its action and arguments."""
    for event in events:
        if event["type"] == "PlanReady":
            return {s["id"]: (s["action"], list(s["args"])) for s in event["plan"]["steps"]}
    return {}


def expected_outputs(action: str, args: Sequence[str]) -> dict[str, str]:
    """What the step ``action(args)`` outputs, from bench/chaos/values.py."""

    def value(x: str) -> str:
        return values.transform(x, values.fetch(x))

    def digest(x: str, y: str) -> str:
        return values.combine(f"{x}-{y}", value(x), value(y))

    if action == "fetch":
        return {"data": values.fetch(args[0])}
    if action == "transform":
        return {"value": value(args[0])}
    if action == "combine":
        return {"digest": digest(args[0], args[1])}
    if action == "report":
        parts = [digest(x, y) for x, y in values.JOINS]
        return {"summary": values.report("-".join(args), parts)}
    raise ValueError(f"no action {action!r} in the chaos domain")


def succeeded_at(events: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Each step's first ``StepSucceeded``: its time."""
    at: dict[str, float] = {}
    for event in events:
        if event["type"] == "StepSucceeded":
            at.setdefault(str(event["step"]), when(event))
    return at


def outputs(events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {str(e["step"]): e.get("outputs") for e in events if e["type"] == "StepSucceeded"}


def finished(events: Sequence[Mapping[str, Any]]) -> str | None:
    """The run's end state, or None when it has not finished."""
    ends = [e for e in events if e["type"] == "RunFinished"]
    return str(ends[-1]["state"]) if ends else None


def lost_outputs(final: Sequence[Mapping[str, Any]], must: set[str] | None) -> list[str]:
    """The steps whose outputs are not in ``final`` as they should be: the steps of
    ``must``, or of the whole plan when ``must`` is None."""
    steps = plan_steps(final)
    got = outputs(final)
    lost = []
    for step, (action, args) in sorted(steps.items()):
        if must is not None and step not in must:
            continue
        if got.get(step) != expected_outputs(action, args):
            lost.append(step)
    return lost


def calls(folder: Path) -> list[dict[str, Any]]:
    """The servers' call log of a trial (every record)."""
    path = folder / "calls.jsonl"
    if not path.exists():
        return []
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def duplicates(
    log: Sequence[Mapping[str, Any]], run_id: str, done: Mapping[str, float]
) -> list[str]:
    """Calls of a step that had already succeeded (its first ``StepSucceeded`` is earlier
    than the call's arrival at the server), as ``key@time``."""
    found = []
    for record in log:
        key = record.get("key")
        if record.get("event") != "call" or not isinstance(key, str):
            continue
        run, _, step = key.partition("/")
        if run == run_id and step in done and float(record["time"]) > done[step] + 0.001:
            found.append(f"{key}@{record['time']:.3f}")
    return found


def alive_servers(folder: Path) -> list[int]:
    """Processes of this trial's servers that are alive (not zombies): their environment
    holds its call log."""
    marker = f"CHAOS_LOG={folder / 'calls.jsonl'}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if state != "Z":
            found.append(int(entry.name))
    return found


def kill_point(events: Sequence[Mapping[str, Any]]) -> str:
    types = {e["type"] for e in events}
    if "RunFinished" in types:
        return POINTS[4]
    if "PlanReady" not in types:
        return POINTS[0]
    if "StepStarted" not in types:
        return POINTS[1]
    if set(plan_steps(events)) <= set(succeeded_at(events)):
        return POINTS[3]
    return POINTS[2]


# -- the first run -----------------------------------------------------------------------


@dataclass
class Calibration:
    """The uninterrupted run's timings, from reading its ``RunCreated``."""

    bound_after: float  # s to reading its PlanReady
    finished_after: float  # s to reading its RunFinished
    exit_lag: float  # s from reading RunFinished to the engine's exit
    wall: float  # s of the whole command


def calibrate(setup: Setup) -> Calibration:
    """An uninterrupted run: it must succeed with every output right; its timings place
    the kills, and its exit is what a run's exit is measured against."""
    folder = setup.work / "calibration"
    proc = setup.run(folder, setup.env(folder, start_delay=setup.start_delay))
    code, _ = proc.wait(setup.run_limit)
    created = proc.arrived.get("RunCreated")
    ready = proc.arrived.get("PlanReady")
    end = proc.arrived.get("RunFinished")
    if code != 0 or created is None or ready is None or end is None or proc.exited is None:
        raise SetupError(f"the uninterrupted run failed (exit {code}): {proc.stderr_tail()}")
    final = setup.show(folder, str(proc.events[0]["run_id"]))
    lost = lost_outputs(final, None)
    if lost:
        raise SetupError(f"the uninterrupted run has wrong outputs: {lost}")
    return Calibration(
        ready - created, end - created, proc.exited - end, proc.exited - proc.started
    )


class SetupError(Exception):
    """The suite cannot run: the uninterrupted run failed."""


# -- kill trials -------------------------------------------------------------------------


@dataclass
class KillTrial:
    n: int
    aimed_at: str  # "servers starting" or "steps"
    fraction: float  # where in that window, from the RNG
    delay: float = 0.0  # s after reading RunCreated (servers starting) or PlanReady (steps)
    run_id: str = ""
    point: str = ""
    exited_first: bool = False  # the engine had ended before the kill
    done_before: int = 0  # steps that had succeeded before the kill
    resumes: list[str] = field(default_factory=list)  # "exit CODE: stderr tail", each
    state: str | None = None
    resumed: bool = False
    sent_again: int = 0  # keys the resumed engine sent again (their first call's end unknown)
    duplicates: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    orphans: list[int] = field(default_factory=list)
    error: str = ""  # the suite's own failure in this trial (a traceback)
    seconds: float = 0.0


def kill_trial(setup: Setup, cal: Calibration, trial: KillTrial, resumes: int) -> KillTrial:
    started = time.time()
    folder = setup.work / f"kill-{trial.n:03d}"
    env = setup.env(folder, start_delay=setup.start_delay)
    proc = setup.run(folder, env)
    created = proc.wait_for("RunCreated", setup.run_limit)
    if created is None:
        proc.kill()
        proc.wait(setup.run_limit)
        trial.point = "no run recorded"
        trial.resumes.append(f"nothing to resume: no run recorded ({proc.stderr_tail()})")
        trial.seconds = time.time() - started
        return trial
    trial.run_id = run_id = str(created["run_id"])
    anchor = proc.arrived["RunCreated"]
    if trial.aimed_at == "servers starting":
        trial.delay = trial.fraction * cal.bound_after
    else:  # from PlanReady, over the time the steps took, and a tenth more
        ready = proc.wait_for("PlanReady", setup.run_limit)
        anchor = proc.arrived.get("PlanReady", time.time()) if ready is not None else time.time()
        trial.delay = trial.fraction * 1.1 * (cal.finished_after - cal.bound_after)
    time.sleep(max(0.0, anchor + trial.delay - time.time()))
    trial.exited_first = not proc.kill()
    proc.wait(setup.run_limit)
    killed_at = time.time()
    while alive_servers(folder) and time.time() < killed_at + ORPHAN_GRACE:
        time.sleep(0.05)
    trial.orphans = alive_servers(folder)
    before = setup.show(folder, run_id)
    trial.point = kill_point(before)
    done = set(succeeded_at(before))
    trial.done_before = len(done)
    calls_before = len(calls(folder))
    for attempt in range(1, resumes + 1):
        resume = setup.resume(folder, run_id, env, attempt)
        code, killed = resume.wait(setup.run_limit)
        tail = resume.stderr_tail(2)
        end = " (killed: it did not end)" if killed else ""
        trial.resumes.append(f"exit {code}{end}: {tail}"[:300])
        if code == 0 or "stopped before its plan was bound" in tail or "already finished" in tail:
            break
        if finished(setup.show(folder, run_id)) is not None:
            break
    final = setup.show(folder, run_id)
    trial.state = finished(final)
    trial.resumed = trial.state == "succeeded"
    log = calls(folder)
    keys_before = {r.get("key") for r in log[:calls_before] if r.get("event") == "call"}
    trial.sent_again = len(
        {r.get("key") for r in log[calls_before:] if r.get("event") == "call"} & keys_before
    )
    trial.duplicates = duplicates(log, run_id, succeeded_at(final))
    trial.lost = lost_outputs(final, None if trial.resumed else done)
    trial.seconds = time.time() - started
    return trial


# -- fault runs --------------------------------------------------------------------------


@dataclass
class FaultRun:
    n: int
    kind: str
    at: str
    run_id: str = ""
    fired: bool = False
    state: str | None = None
    failed: dict[str, str] = field(default_factory=dict)  # step: error class
    retried: dict[str, str] = field(default_factory=dict)  # step: error class
    fault_step: str = ""
    expected: str = ""
    observed: str = ""
    misclassified: list[str] = field(default_factory=list)
    worst_past_timeout: float | None = None  # s past the timeout, of the slowest timeout
    exit_lag: float | None = None  # s from reading RunFinished to the engine's exit
    hangs: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    bystanders: list[str] = field(default_factory=list)  # utf8: the calls in flight with it
    error: str = ""  # the suite's own failure in this run (a traceback)
    seconds: float = 0.0


def targets(kind: str) -> list[str]:
    """The calls a fault of ``kind`` may hit: ``tool:name``. Invalid UTF-8 hits a fetch,
    which starts with the seven others in flight beside it on its server."""
    fetches = [f"fetch:{x}" for x in values.CHAINS]
    if kind == "utf8":
        return fetches
    return (
        fetches
        + [f"transform:{x}" for x in values.CHAINS]
        + [f"combine:{x}-{y}" for x, y in values.JOINS]
    )


def step_of(steps: Mapping[str, tuple[str, list[str]]], at: str) -> str:
    tool, _, name = at.partition(":")
    for step, (action, args) in steps.items():
        if action == tool and "-".join(args) == name:
            return step
    return ""


def fault_run(setup: Setup, cal: Calibration, run: FaultRun) -> FaultRun:
    started = time.time()
    kind, at = run.kind, run.at
    folder = setup.work / f"fault-{run.n:03d}-{kind}"
    proc = setup.run(folder, setup.env(folder, start_delay=0, fault=kind, at=at))
    code, killed = proc.wait(setup.run_limit)
    if killed:
        run.hangs.append(f"the engine did not end within {setup.run_limit:g} s: killed")
    if proc.events:
        run.run_id = str(proc.events[0]["run_id"])
    run.fired = (folder / "fault-fired").exists()
    events = setup.show(folder, run.run_id) if run.run_id else []
    steps = plan_steps(events)
    run.fault_step = step_of(steps, at)
    run.state = finished(events)
    run.failed = {
        str(e["step"]): str(e["error_class"]) for e in events if e["type"] == "StepFailed"
    }
    run.retried = {
        str(e["step"]): str(e["error_class"]) for e in events if e["type"] == "StepRetrying"
    }
    state, cls = DOCUMENTED[kind]
    run.expected = f"{state}; {run.fault_step or at}: {cls or 'succeeds'}"
    attempts = ", ".join(f"{s}: {c}" for s, c in sorted({**run.retried, **run.failed}.items()))
    run.observed = f"{run.state}; {attempts or 'no failed attempt'} (exit {code})"
    log = calls(folder)
    run.misclassified = classify(run, kind, events, log)
    run.duplicates = duplicates(log, run.run_id, succeeded_at(events))
    done = set(succeeded_at(events))
    run.lost = lost_outputs(events, None if run.state == "succeeded" else done)
    # hangs: each timed-out call's wall time, from its arrival at its server
    arrivals: dict[str, float] = {}
    for record in log:
        if record.get("event") == "call" and isinstance(record.get("key"), str):
            arrivals[str(record["key"]).partition("/")[2]] = float(record["time"])
    for event in events:
        if event["type"] in ("StepFailed", "StepRetrying") and event["error_class"] == "timeout":
            step = str(event["step"])
            took = max(
                float(event.get("duration_ms") or 0) / 1000,
                when(event) - arrivals.get(step, when(event)),
            )
            past = took - setup.timeout
            run.worst_past_timeout = max(past, run.worst_past_timeout or past)
            if past > SLACK:
                run.hangs.append(
                    f"{step} timed out after {took:.2f} s (timeout {setup.timeout:g} s)"
                )
    end = proc.arrived.get("RunFinished")
    if end is not None and proc.exited is not None and not killed:
        run.exit_lag = proc.exited - end
        if run.exit_lag > cal.exit_lag + setup.timeout + SLACK:
            run.hangs.append(
                f"the engine exited {run.exit_lag:.2f} s after RunFinished (the"
                f" uninterrupted run: {cal.exit_lag:.2f} s)"
            )
    run.seconds = time.time() - started
    return run


def classify(
    run: FaultRun, kind: str, events: Sequence[Mapping[str, Any]], log: Sequence[Mapping[str, Any]]
) -> list[str]:
    """How the run differs from what docs/bindings.md documents for ``kind``."""
    state, cls = DOCUMENTED[kind]
    wrong: list[str] = []
    if not run.fired:
        wrong.append("the fault did not fire")
    if run.state != state:
        wrong.append(f"the run ended {run.state}, documented: {state}")
    step = run.fault_step
    attempts = {**run.retried, **run.failed}
    if kind == "kill":  # the faulted call and those in flight with it: transport_lost
        if run.failed:
            wrong.append(f"failed steps {run.failed}: transport_lost is re-sent once")
        others = {s: c for s, c in attempts.items() if c != "transport_lost"}
        if others:
            wrong.append(f"attempts not transport_lost: {others}")
        if step not in run.retried:
            wrong.append(f"{step} was not re-sent after transport_lost")
    elif kind == "stall":  # every call in flight on the stopped server times out
        if run.failed.get(step) != "timeout":
            wrong.append(f"{step}: {run.failed.get(step, 'not failed')}, documented: timeout")
        others = {s: c for s, c in attempts.items() if c != "timeout"}
        if others:
            wrong.append(f"attempts not timeout: {others}")
    elif cls is None:  # huge: nothing fails
        if attempts:
            wrong.append(f"failed attempts {attempts}: a right answer fails nothing")
    else:  # the faulted call fails with cls; no other attempt fails
        if run.failed.get(step) != cls:
            wrong.append(f"{step}: {run.failed.get(step, 'not failed')}, documented: {cls}")
        others = {s: c for s, c in attempts.items() if s != step}
        if others:
            wrong.append(f"other attempts failed: {others}")
    if kind == "utf8":  # the calls in flight with the bad answer keep theirs
        done = set(succeeded_at(events))
        for record in (r for r in log if r.get("event") == "inject"):
            for key in record.get("others", []):
                other = str(key).partition("/")[2]
                run.bystanders.append(other)
                if other not in done:
                    wrong.append(f"{other}, in flight with the bad answer, did not succeed")
    return wrong


# -- report ------------------------------------------------------------------------------


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def summary(kills: Sequence[KillTrial], faults: Sequence[FaultRun]) -> dict[str, Any]:
    return {
        "kill": {
            "trials": len(kills),
            "resumed": sum(t.resumed for t in kills),
            "duplicates": sum(len(t.duplicates) for t in kills),
            "lost_outputs": sum(len(t.lost) for t in kills),
            "orphans": sum(len(t.orphans) for t in kills),
            "errors": sum(bool(t.error) for t in kills),
        },
        "faults": {
            "trials": len(faults),
            "duplicates": sum(len(f.duplicates) for f in faults),
            "lost_outputs": sum(len(f.lost) for f in faults),
            "hangs_past_limit": sum(bool(f.hangs) for f in faults),
            "misclassified": sum(bool(f.misclassified) for f in faults),
            "errors": sum(bool(f.error) for f in faults),
        },
    }


def bars(total: Mapping[str, Any]) -> list[str]:
    """The bars missed."""
    k, f = total["kill"], total["faults"]
    missed = []
    if k["resumed"] != k["trials"]:
        missed.append(f"resumed {k['resumed']}/{k['trials']}")
    for name, value in (
        ("duplicates", k["duplicates"] + f["duplicates"]),
        ("lost outputs", k["lost_outputs"] + f["lost_outputs"]),
        ("orphans", k["orphans"]),
        ("hangs past the limit", f["hangs_past_limit"]),
        ("misclassified", f["misclassified"]),
        ("trials the suite itself failed", k["errors"] + f["errors"]),
    ):
        if value:
            missed.append(f"{name} {value}")
    return missed


def report(
    seed: int,
    setup: Setup,
    cal: Calibration,
    kills: Sequence[KillTrial],
    faults: Sequence[FaultRun],
) -> str:
    total = summary(kills, faults)
    k, f = total["kill"], total["faults"]
    out = [
        f"chaos suite: seed {seed}; timeout {setup.timeout:g} s; servers start after "
        f"{setup.start_delay:g} s; the uninterrupted run bound its plan {cal.bound_after:.2f} s "
        f"and finished {cal.finished_after:.2f} s after RunCreated",
        "",
        table(
            (
                "",
                "trials",
                "resumed",
                "duplicates",
                "lost outputs",
                "hangs past limit",
                "misclassified",
            ),
            [
                (
                    "engine SIGKILLed, resumed",
                    k["trials"],
                    k["resumed"],
                    k["duplicates"],
                    k["lost_outputs"],
                    "-",
                    "-",
                ),
                (
                    "server faults",
                    f["trials"],
                    "-",
                    f["duplicates"],
                    f["lost_outputs"],
                    f["hangs_past_limit"],
                    f["misclassified"],
                ),
            ],
        ),
    ]
    if kills:
        rows = []
        for point in (*POINTS, "no run recorded"):
            group = [t for t in kills if t.point == point]
            if group:
                codes = Counter(r.split(":")[0] for t in group for r in t.resumes)
                rows.append(
                    (
                        point,
                        len(group),
                        sum(t.resumed for t in group),
                        sum(len(t.duplicates) for t in group),
                        sum(len(t.lost) for t in group),
                        sum(t.sent_again for t in group),
                        ", ".join(f"{c} x{n}" for c, n in sorted(codes.items())),
                    )
                )
        out += [
            "",
            "kill points (from the run's log):",
            "",
            table(
                (
                    "killed",
                    "trials",
                    "resumed",
                    "duplicates",
                    "lost outputs",
                    "calls in flight sent again",
                    "resume exits",
                ),
                rows,
            ),
        ]
        if k["orphans"]:
            out.append(
                f"orphans: {k['orphans']} server(s) alive {ORPHAN_GRACE:g} s after their"
                " engine's kill"
            )
    if faults:
        fault_rows: list[tuple[object, ...]] = []
        for kind in KINDS:
            runs = [r for r in faults if r.kind == kind]
            if not runs:
                continue
            state, cls = DOCUMENTED[kind]
            seen = Counter(
                r.observed.split(" (exit")[0].split(";")[0]
                + "; "
                + ", ".join(sorted(set({**r.retried, **r.failed}.values())) or ["none"])
                for r in runs
            )
            worst = [r.worst_past_timeout for r in runs if r.worst_past_timeout is not None]
            lags = [r.exit_lag for r in runs if r.exit_lag is not None]
            fault_rows.append(
                (
                    kind,
                    len(runs),
                    f"{state}; {cls or 'none'}",
                    "; ".join(f"{s} x{n}" for s, n in seen.most_common()),
                    sum(bool(r.misclassified) for r in runs),
                    sum(bool(r.hangs) for r in runs),
                    f"{max(worst):+.2f}" if worst else "-",
                    f"{max(lags):.2f}" if lags else "-",
                )
            )
        out += [
            "",
            "faults (documented: run state; class of the failed or retried attempts):",
            "",
            table(
                (
                    "fault",
                    "runs",
                    "documented",
                    "observed",
                    "misclassified",
                    "hangs",
                    "worst s past timeout",
                    "worst exit s after RunFinished",
                ),
                fault_rows,
            ),
        ]
    missed = bars(total)
    out += ["", "bars: " + ("all met" if not missed else "MISSED: " + "; ".join(missed))]
    return "\n".join(out)


def guarded(
    function: Callable[..., Trial], setup: Setup, cal: Calibration, trial: Trial, *more: Any
) -> Trial:
    """``function(setup, cal, trial, *more)``; an exception is kept in ``trial.error``."""
    try:
        return function(setup, cal, trial, *more)
    except Exception:
        trial.error = traceback.format_exc()
        return trial


def line(trial: KillTrial | FaultRun) -> str:
    """One trial, as the suite prints it when it ends."""
    if trial.error:
        return f"{type(trial).__name__} {trial.n}: ERROR in the suite: {trial.error}"
    if isinstance(trial, KillTrial):
        return (
            f"kill {trial.n:3d}: {trial.aimed_at}, +{trial.delay:.3f} s -> {trial.point};"
            f" {trial.done_before} steps done; {'resumed' if trial.resumed else 'NOT resumed'}"
            f" ({len(trial.resumes)} resume(s), last: {(trial.resumes or ['-'])[-1]}); sent again"
            f" {trial.sent_again}, duplicates {len(trial.duplicates)}, lost {len(trial.lost)},"
            f" orphans {len(trial.orphans)}; {trial.seconds:.1f} s"
        )
    verdict = "; ".join(trial.misclassified) or "as documented"
    hangs = f"; HANG: {'; '.join(trial.hangs)}" if trial.hangs else ""
    return (
        f"fault {trial.n:3d}: {trial.kind} at {trial.at} ({trial.fault_step}) ->"
        f" {trial.observed}; {verdict}{hangs}; {trial.seconds:.1f} s"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add = parser.add_argument
    add("--trials", type=int, default=50, help="kill trials (default 50)")
    add("--faults", type=int, default=40, help="fault runs (default 40)")
    add("--seed", type=int, default=None, help="the RNG's seed (default: from the clock)")
    add("--kinds", default=",".join(KINDS), help="the fault kinds, taken in turn")
    add("--timeout", type=float, default=2.0, help="each binding's timeout, s (default 2)")
    add("--start-delay", type=float, default=0.3, help="s servers sleep before serving (kills)")
    add("--delay-ms", default="5-100", help="each call's time, ms: LO-HI (default 5-100)")
    add("--huge-mb", type=float, default=20, help="the huge answer's size, MB (default 20)")
    add("--deep", type=int, default=5000, help="the deep answer's nesting (default 5000)")
    add("--resumes", type=int, default=2, help="resumes a kill trial may take (default 2)")
    add("--jobs", type=int, default=1, help="trials run at the same time (default 1)")
    add("--run-limit", type=float, default=180, help="s a plansmith command may take")
    add("--plansmith", type=Path, default=Path(sys.executable).parent / "plansmith")
    add("--work", type=Path, default=None, help="keep the runs' files here (default: removed)")
    add("--json", action="store_true", help="one JSON document on stdout instead of tables")
    args = parser.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = set(kinds) - set(KINDS)
    if unknown or not kinds:
        parser.error(f"--kinds: unknown {sorted(unknown)}; known: {','.join(KINDS)}")
    seed = args.seed if args.seed is not None else int(time.time() * 1000) % 1_000_000
    out = sys.stderr if args.json else sys.stdout

    def say(text: str) -> None:
        print(text, file=out, flush=True)

    say(f"chaos: seed {seed} (the same trials again: --seed {seed})")
    rng = random.Random(seed)  # every draw made here, in order: --jobs changes none
    kills = [
        KillTrial(n, "servers starting" if n % 3 == 0 else "steps", rng.random())
        for n in range(args.trials)
    ]
    faults = []
    for n in range(args.faults):
        kind = kinds[n % len(kinds)]
        faults.append(FaultRun(n, kind, rng.choice(targets(kind))))
    work = args.work or Path(tempfile.mkdtemp(prefix="plansmith-chaos-"))
    work.mkdir(parents=True, exist_ok=True)
    setup = Setup(
        args.plansmith,
        work,
        args.timeout,
        args.start_delay,
        args.delay_ms,
        args.huge_mb,
        args.deep,
        args.run_limit,
    )
    began = time.time()
    try:
        cal = calibrate(setup)
        say(
            f"uninterrupted run: plan bound {cal.bound_after:.2f} s and run finished"
            f" {cal.finished_after:.2f} s after RunCreated; exited {cal.exit_lag:.2f} s later"
        )
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            futures: list[Future[KillTrial | FaultRun]] = [
                pool.submit(guarded, kill_trial, setup, cal, t, args.resumes) for t in kills
            ]
            futures += [pool.submit(guarded, fault_run, setup, cal, r) for r in faults]
            for future in as_completed(futures):
                say(line(future.result()))
    except SetupError as error:
        say(f"chaos: {error}")
        return 2
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    total = summary(kills, faults)
    missed = bars(total)
    seconds = time.time() - began
    if args.json:
        document = {
            "seed": seed,
            "seconds": round(seconds, 1),
            "timeout": args.timeout,
            "calibration": asdict(cal),
            "summary": total,
            "missed": missed,
            "kills": [asdict(t) for t in kills],
            "faults": [asdict(f) for f in faults],
        }
        print(json.dumps(document, indent=1))
    else:
        print()
        print(report(seed, setup, cal, kills, faults))
        print(f"\n{seconds:.0f} s in all")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
