"""``Engine.retry`` / ``plansmith retry``: a failed run, its cause fixed, goes on from
its log; the steps that succeeded are not called again."""

from __future__ import annotations

import json
from pathlib import Path

import _engine_helpers as eh
import anyio
import pytest
from _engine_helpers import files, invoke

from plansmith.engine import Engine
from plansmith.errors import ExecutionError
from plansmith.execution import RunRetried, StepFailed, StepSucceeded


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _work_keys(log: Path) -> list[str]:
    return [json.loads(line)["key"] for line in log.read_text().splitlines() if line.strip()]


def _failing_run(tmp_path: Path) -> tuple[eh.RunInputs, Path, str, str]:
    """A run whose ``index`` of d1 fails (the server refuses its value): failed."""
    calls = tmp_path / "calls.jsonl"
    inputs = eh.write_inputs(tmp_path, n=3, COUNTER_LOG=str(calls), COUNTER_ECHO_REFUSES="d1!")
    home = tmp_path / "home"
    code, out, err = invoke("run", *files(inputs), "--yes", "--json", "--home", str(home))
    assert code == 5, err
    return inputs, calls, str(home), json.loads(out.splitlines()[0])["run_id"]


def _fix(inputs: eh.RunInputs, calls: Path) -> None:
    """The cause fixed: the server no longer refuses (its servers file edited)."""
    inputs.servers.write_text(eh.servers_json(env={"COUNTER_LOG": str(calls)}, indent=2))


def test_a_failed_run_retried_once_its_cause_is_fixed_succeeds_without_recalling_done_steps(
    tmp_path: Path,
) -> None:
    inputs, calls, home, run_id = _failing_run(tmp_path)
    engine = Engine(home)
    before = engine.log.events(run_id)
    engine.close()
    failed = [e.step for e in before if isinstance(e, StepFailed)]
    assert failed
    assert before[-1].type == "RunFinished"
    done = {e.step for e in before if isinstance(e, StepSucceeded)}
    keys_before = _work_keys(calls)
    assert len(keys_before) == 3  # every summarise ran once

    code, _, err = invoke("resume", run_id, "--home", home)  # a finished run: not resumed
    assert code == 5
    assert "nothing to resume" in err

    _fix(inputs, calls)
    code, out, err = invoke("retry", run_id, "--home", home, "--json")
    assert code == 0, err
    assert _work_keys(calls) == keys_before  # no summarise called again
    engine = Engine(home)
    events = engine.log.events(run_id)
    engine.close()
    retried = [e for e in events if isinstance(e, RunRetried)]
    assert len(retried) == 1
    assert retried[0].by.startswith("cli:")
    after = [e for e in events[events.index(retried[0]) :] if isinstance(e, StepSucceeded)]
    assert {e.step for e in after} == set(failed)  # only the failed step ran again
    assert not {e.step for e in after} & done
    assert events[-1].type == "RunFinished"
    assert json.loads(out.splitlines()[-1])["state"] == "succeeded"


@pytest.mark.anyio
async def test_retry_refuses_a_run_that_has_not_finished_or_that_succeeded(
    tmp_path: Path,
) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    engine = Engine(tmp_path / "home")
    with anyio.fail_after(60):
        outcome = await engine.run(inputs, approve=True, run_id="r-ok")
    assert outcome.state == "succeeded"
    with pytest.raises(ExecutionError, match="succeeded: there is nothing to retry"):
        await engine.retry("r-ok")
    n = len(engine.log.events("r-ok"))
    assert len(engine.log.events("r-ok")) == n  # nothing recorded
    engine.close()


@pytest.mark.anyio
async def test_a_retried_run_that_fails_again_can_be_retried_again(tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    inputs = eh.write_inputs(tmp_path, n=3, COUNTER_LOG=str(calls), COUNTER_ECHO_REFUSES="d1!")
    engine = Engine(tmp_path / "home")
    run_id = "r-f"
    with anyio.fail_after(60):
        first = await engine.run(inputs, approve=True, run_id=run_id)
    assert first.state == "failed"
    with anyio.fail_after(60):
        again = await engine.retry(run_id, by="test")  # the cause not fixed yet
    assert again.state == "failed"
    _fix(inputs, calls)
    with anyio.fail_after(60):
        outcome = await engine.retry(run_id, by="test")
    assert outcome.state == "succeeded", outcome.reason
    events = engine.log.events(run_id)
    assert [e.by for e in events if isinstance(e, RunRetried)] == ["test", "test"]
    assert len(_work_keys(calls)) == 3
    engine.close()
