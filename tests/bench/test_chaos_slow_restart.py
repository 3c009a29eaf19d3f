"""A killed server whose start-up outlasts the calls' timeout (the chaos suite's plan and
servers, bench/chaos/): servers that take 2.5 s to start, each binding's timeout 2 s,
``alpha`` SIGKILLs itself in the call ``fetch(c)`` while other fetches are in flight.
Each call in flight fails ``transport_lost`` at once and is re-sent after the restart,
which does not count against its timeout: the run succeeds, no step that had succeeded
is called again (a call still in the pipe when the server died may reach it only once),
and the server is started twice (once, then restarted once)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "chaos"
PLANSMITH = Path(sys.executable).parent / "plansmith"


def test_a_killed_server_whose_restart_outlasts_the_timeout_does_not_fail_the_run(
    tmp_path: Path,
) -> None:
    env = dict(os.environ)
    env.update(
        CHAOS_PYTHON=sys.executable,
        CHAOS_SERVER=str(BENCH / "server.py"),
        CHAOS_LOG=str(tmp_path / "calls.jsonl"),
        CHAOS_STATE=str(tmp_path / "state"),
        CHAOS_START_DELAY="2.5",
        CHAOS_FAULT="kill",
        CHAOS_FAULT_AT="fetch:c",
        CHAOS_FAULT_ONCE=str(tmp_path / "fired"),
    )
    args = [str(PLANSMITH), "run", str(BENCH / "domain.yaml"), str(BENCH / "problem.yaml")]
    args += ["--servers", str(BENCH / "servers.json"), "--bindings", str(BENCH / "bindings.yaml")]
    args += ["--home", str(tmp_path / "home"), "--yes", "--json"]
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300, check=False)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "fired").exists()  # the server was killed
    assert events[-1]["type"] == "RunFinished"
    assert events[-1]["state"] == "succeeded"
    retried = {e["step"]: e["error_class"] for e in events if e["type"] == "StepRetrying"}
    assert retried
    assert set(retried.values()) == {"transport_lost"}
    assert not [e for e in events if e["type"] == "StepFailed"]
    log = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    calls = Counter(r["key"] for r in log if r["event"] == "call")
    steps = {e["step"]: e for e in events if e["type"] == "StepSucceeded"}
    run_id = events[-1]["run_id"]
    again = {k for k, n in calls.items() if n > 1}
    # Only a retried call is sent again, at most once more. A retried call need not reach the
    # server twice: one still in the pipe when the server died was never read by it.
    assert again <= {f"{run_id}/{s}" for s in retried}
    assert max(calls.values()) <= 2
    assert set(calls) == {f"{run_id}/{s}" for s in steps}
    assert len(steps) == 21
    starts = Counter(r["server"] for r in log if r["event"] == "start")
    assert starts == {"alpha": 2, "beta": 1}
