"""``${env.NAME}`` in a run's bindings: a replay does not depend on the environment of the
machine it runs on, and a resume with NAME unset names the steps that need it in one
problem, as ``run`` does."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import _engine_helpers as eh
import anyio
import pytest

from _shared_servers import SUMMARISE_BINDING, binding
from plansmith.engine import Engine
from plansmith.errors import ApprovalRequiredError, BindingError
from plansmith.execution import Event, step_histories

pytestmark = pytest.mark.anyio

NAME = "PLANSMITH_T_WORKDIR"
#: the index steps (s3, s4 of two documents) read the variable
BINDINGS = (
    "bindings:\n"
    + SUMMARISE_BINDING
    + binding(
        "index",
        "echo",
        f'{{x: "${{env.{NAME}}}/${{summarise(d).done}}"}}',
        "{value: $.structured.value}",
    )
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def per_step(events: list[Event]) -> dict[str, list[dict[str, object]]]:
    """Each step's events in order, without times, durations and seqs (parallel steps
    interleave)."""
    steps: dict[str, list[dict[str, object]]] = {}
    for event in events:
        fields = asdict(event)
        for when in ("seq", "time", "duration_ms"):
            fields.pop(when, None)
        steps.setdefault(getattr(event, "step", ""), []).append(fields)
    return steps


@pytest.mark.parametrize("value", [None, "/elsewhere"], ids=["unset", "other"])
async def test_replay_gives_the_record_whatever_the_environment_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    inputs = eh.write_inputs(tmp_path, n=2, bindings=BINDINGS)
    engine = Engine(tmp_path / "home")
    monkeypatch.setenv(NAME, "/work")
    with anyio.fail_after(60):
        outcome = await engine.run(inputs, approve=True, run_id="r-env")
        assert outcome.state == "succeeded", outcome.reason
        assert outcome.outputs["s3"] == {"value": "/work/d0!"}
        if value is None:
            monkeypatch.delenv(NAME)
        else:
            monkeypatch.setenv(NAME, value)
        replayed = await engine.replay("r-env")
    recorded = engine.log.events("r-env")
    assert step_histories(replayed) == step_histories(recorded)
    # every field of every event is the record's (keys, args, outputs), times aside
    assert per_step(replayed) == per_step(recorded)
    engine.close()


async def test_resume_with_an_unset_variable_names_its_steps_in_one_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inputs = eh.write_inputs(tmp_path, n=2, bindings=BINDINGS)
    engine = Engine(tmp_path / "home")
    monkeypatch.setenv(NAME, "/work")
    with anyio.fail_after(60):
        with pytest.raises(ApprovalRequiredError):
            await engine.run(inputs, run_id="r-wait")  # index is a write: it waits
        monkeypatch.delenv(NAME)
        with pytest.raises(BindingError) as resumed:
            await engine.resume("r-wait", approve=True)
        with pytest.raises(BindingError) as ran:
            await engine.run(inputs, approve=True, run_id="r-run")
    engine.close()
    error = resumed.value  # the one problem, itself (as for one step)
    assert error.message == (
        f"${{env.{NAME}}}: environment variable {NAME} is not set (in 2 steps: s3, s4)"
    )
    assert error.problems == ()
    assert error.location is not None
    assert (error.location.file, error.location.step) == (str(inputs.bindings), None)
    assert error.hint == f"export {NAME}=... before running plansmith"
    assert [str(error)] == [str(p) for p in ran.value.problems]  # as ``run`` says it
