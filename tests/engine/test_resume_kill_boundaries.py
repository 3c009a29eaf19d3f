"""SIGKILL the engine at each boundary of a run's life, then resume: the run finishes,
no step that succeeded before the kill is called again, and each step keeps one key."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import _engine_helpers as eh
import anyio
import pytest

from plansmith.engine import Engine
from plansmith.execution import PlanReady, StepSucceeded

pytestmark = pytest.mark.anyio

CHILD = Path(__file__).parent / "_boundary_kill_child.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _calls(log: Path) -> list[dict[str, object]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("boundary", "nth"),
    [
        ("RunCreated", "1"),  # its servers are starting: no plan bound yet
        ("PlanReady", "1"),
        ("PlanApproved", "1"),
        ("StepStarted", "2"),  # calls in flight
        ("StepSucceeded", "last"),  # every step done, the run not finished
    ],
)
async def test_a_run_killed_at_any_boundary_resumes_and_calls_no_finished_step_again(
    tmp_path: Path, boundary: str, nth: str
) -> None:
    call_log = tmp_path / "calls.jsonl"
    inputs = eh.write_inputs(tmp_path, n=4, COUNTER_LOG=str(call_log))
    home = tmp_path / "home"
    args = [sys.executable, str(CHILD), str(home), "r-b", boundary, nth]
    args += [str(p) for p in inputs.to_dict().values()]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    with anyio.fail_after(120):
        code = await anyio.to_thread.run_sync(
            lambda: subprocess.run(args, env=env, stderr=subprocess.PIPE, check=False)
        )
    assert code.returncode == -signal.SIGKILL, code.stderr.decode()

    engine = Engine(home)
    before = engine.log.events("r-b")
    assert before[-1].type == boundary  # killed right there
    done_before = {f"r-b/{e.step}" for e in before if isinstance(e, StepSucceeded)}
    calls_before = len(_calls(call_log))
    # the approval the killed run was given (``approve=True``) is in the log only once
    # ``PlanApproved`` is: before that, the resumed run asks for it again
    with anyio.fail_after(120):
        outcome = await engine.resume("r-b", approve=True)
    assert outcome.state == "succeeded", outcome.reason
    after = _calls(call_log)[calls_before:]
    assert not {c["key"] for c in after} & done_before  # no finished step called again
    keys: dict[str, set[object]] = {}
    for c in _calls(call_log):
        keys.setdefault(str(c["args"]["name"]), set()).add(c["key"])  # type: ignore[index]
    assert keys
    assert all(len(k) == 1 for k in keys.values())
    events = engine.log.events("r-b")
    assert len([e for e in events if isinstance(e, PlanReady)]) == 1
    succeeded = [e.step for e in events if isinstance(e, StepSucceeded)]
    assert len(succeeded) == len(set(succeeded))  # each step succeeded once in the log

    fresh_dir = tmp_path / "fresh"
    fresh_dir.mkdir()
    with anyio.fail_after(120):
        fresh = await Engine(tmp_path / "home2").run(eh.write_inputs(fresh_dir, n=4), approve=True)
    assert fresh.outputs == outcome.outputs  # the same results as a run never killed
    engine.close()
