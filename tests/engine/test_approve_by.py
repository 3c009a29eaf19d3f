"""Approval at the engine: ``Engine.approve(run_id, plan_hash, by)`` and
``plansmith approve RUN_ID HASH`` refuse any other hash and record who approved."""

from __future__ import annotations

import re
from pathlib import Path

import _engine_helpers as eh
import anyio
import pytest
from _engine_helpers import files, invoke

from plansmith.engine import Engine
from plansmith.errors import ApprovalRequiredError, InputError
from plansmith.execution import PlanApproved, PlanReady


def _awaiting(tmp_path: Path) -> tuple[str, str]:
    """A run that awaits approval (its plan has a write step): its home and id."""
    inputs = eh.write_inputs(tmp_path, n=2)
    home = str(tmp_path / "home")
    code, _, err = invoke("run", *files(inputs), "--home", home)
    assert code == 6, err
    return home, re.findall(r"plansmith resume (r-\w+)", err)[0]


def _plan_hash(home: str, run_id: str) -> str:
    engine = Engine(home)
    try:
        return next(e.plan_hash for e in engine.log.events(run_id) if isinstance(e, PlanReady))
    finally:
        engine.close()


def test_the_cli_approves_by_hash_and_the_log_says_who(tmp_path: Path) -> None:
    home, run_id = _awaiting(tmp_path)
    right = _plan_hash(home, run_id)
    wrong = "sha256:" + "0" * 64
    engine = Engine(home)
    n = len(engine.log.events(run_id))
    engine.close()

    code, _, err = invoke("approve", run_id, wrong, "--home", home)
    assert code == 2
    assert f"plan {wrong} is not the plan of run {run_id}" in err
    engine = Engine(home)
    assert len(engine.log.events(run_id)) == n  # nothing recorded
    engine.close()

    code, _, err = invoke("approve", run_id, right, "--home", home)
    assert code == 0, err
    engine = Engine(home)
    approved = [e for e in engine.log.events(run_id) if isinstance(e, PlanApproved)]
    engine.close()
    assert len(approved) == 1
    assert approved[0].plan_hash == right
    assert approved[0].by == "person"
    assert approved[0].approver.startswith("cli:")


@pytest.mark.anyio
async def test_the_engine_refuses_another_hash_and_records_the_approver(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=2)
    engine = Engine(tmp_path / "home")
    with pytest.raises(ApprovalRequiredError), anyio.fail_after(60):
        await engine.run(inputs, run_id="r-a")
    right = next(e.plan_hash for e in engine.log.events("r-a") if isinstance(e, PlanReady))
    n = len(engine.log.events("r-a"))
    with pytest.raises(InputError, match="is not the plan of run r-a"):
        await engine.approve("r-a", right[:-1] + "x", by="web:127.0.0.1")
    assert len(engine.log.events("r-a")) == n
    with pytest.raises(InputError, match="plan_hash must be the plan's hash"):
        await engine.approve("r-a", "", by="web:127.0.0.1")
    with anyio.fail_after(60):
        outcome = await engine.approve("r-a", right, by="web:127.0.0.1")
    assert outcome.state == "succeeded", outcome.reason
    approved = [e for e in engine.log.events("r-a") if isinstance(e, PlanApproved)]
    assert [(e.by, e.approver) for e in approved] == [("person", "web:127.0.0.1")]
    engine.close()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_run_and_resume_with_yes_record_the_terminal_user_as_approver(tmp_path: Path) -> None:
    home, run_id = _awaiting(tmp_path)
    code, _, err = invoke("resume", run_id, "--yes", "--home", home)
    assert code == 0, err
    (tmp_path / "again").mkdir()
    inputs = eh.write_inputs(tmp_path / "again", n=1)
    code, _, err = invoke("run", *files(inputs), "--yes", "--home", home)
    assert code == 0, err
    engine = Engine(home)
    approvers = [
        e.approver
        for info in engine.log.runs()
        for e in engine.log.events(info.run_id)
        if isinstance(e, PlanApproved)
    ]
    engine.close()
    assert len(approvers) == 2
    assert all(a.startswith("cli:") for a in approvers)
