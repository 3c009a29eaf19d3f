"""A run's approval policy is recorded and used at resume; a view that stops or cancels a
run before its runner runs ends it (failed or cancelled) with nothing called; a resume
whose steps need an environment variable that is not set is refused before approval."""

from __future__ import annotations

from pathlib import Path

import _engine_helpers as eh
import anyio
import pytest
from test_engine_run_guards import CATALOG

from _shared_servers import INDEX_BINDING, binding, problem_text
from plansmith.binding import load_bindings
from plansmith.engine import Engine, RunInputs, RunTools, load_problem_files, make_plan
from plansmith.errors import ApprovalRequiredError, BindingError, ExecutionError
from plansmith.execution import (
    ApprovalPolicy,
    Event,
    PlanApproved,
    RunCancelled,
    RunFinished,
    StepStarted,
    ToolCall,
    ToolResult,
    fold,
)
from plansmith.model import Tier

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Counting:
    def __init__(self) -> None:
        self.calls: list[ToolCall] = []

    async def invoke(self, call: ToolCall) -> ToolResult:
        self.calls.append(call)
        return ToolResult(structured={"done": f"{call.step}!", "value": "v"})


def read_only(tmp: Path, bindings: str = eh.BINDINGS) -> RunInputs:
    inputs = eh.write_inputs(tmp, n=1, bindings=bindings)
    inputs.problem.write_text(problem_text(1, goal="summarised(d0)"))
    return inputs


async def test_resume_approves_by_the_policy_the_run_was_made_with(tmp_path: Path) -> None:
    inputs = read_only(tmp_path)
    engine = Engine(tmp_path / "home")
    strict = ApprovalPolicy(frozenset(Tier))  # a person approves every tier, read too
    with anyio.fail_after(60):
        with pytest.raises(ApprovalRequiredError):
            await engine.run(inputs, policy=strict, run_id="r-strict")
        with pytest.raises(ApprovalRequiredError):
            await engine.resume("r-strict")  # not approved: the run's policy still holds
        assert not any(isinstance(e, PlanApproved) for e in engine.log.events("r-strict"))
        outcome = await engine.resume("r-strict", approve=True)
    assert outcome.state == "succeeded", outcome.reason
    approved = [e for e in engine.log.events("r-strict") if isinstance(e, PlanApproved)]
    assert [e.by for e in approved] == ["person"]
    engine.close()


def test_a_run_recorded_without_a_policy_has_the_default_one() -> None:
    from plansmith.engine import POLICY_KEY, recorded_policy

    assert recorded_policy({"domain": "/d.yaml"}) == ApprovalPolicy()
    assert recorded_policy({POLICY_KEY: "none"}) == ApprovalPolicy(frozenset())
    assert recorded_policy({POLICY_KEY: "execute,read,write"}) == ApprovalPolicy(frozenset(Tier))


async def test_a_view_that_stops_a_run_at_plan_ready_ends_it_failed(tmp_path: Path) -> None:
    inputs = read_only(tmp_path)
    engine = Engine(tmp_path / "home")

    def veto(event: Event) -> None:
        if event.type == "PlanReady":
            raise ExecutionError("plan is not the one the user approved")

    with anyio.fail_after(60):
        with pytest.raises(ExecutionError, match="not the one the user approved"):
            await engine.run(inputs, subscribe=veto, run_id="vetoed")
        state = fold("vetoed", engine.log.events("vetoed"))
        assert (state.finished, state.finished_reason) == (
            "failed",
            "plan is not the one the user approved",
        )
        outcome = await engine.resume("vetoed", approve=True)  # finished: nothing runs
    assert outcome.state == "failed"
    assert not any(isinstance(e, StepStarted) for e in engine.log.events("vetoed"))
    engine.close()


@pytest.mark.parametrize("at", ["RunCreated", "PlanReady", "AwaitingApproval", "PlanApproved"])
async def test_cancel_from_a_view_before_the_runner_starts_no_step(tmp_path: Path, at: str) -> None:
    inputs = eh.write_inputs(tmp_path, n=2)
    engine = Engine(tmp_path / "home")
    problem = load_problem_files(inputs.domain, inputs.problem)
    invoker = Counting()
    answers: list[bool] = []

    def view(event: Event) -> None:
        if event.type == at and not answers:
            answers.append(engine.cancel("r-c", "over budget"))

    with anyio.fail_after(30):
        outcome = await engine.run_plan(
            make_plan(problem),
            problem.domain,
            load_bindings(inputs.bindings),
            RunTools(CATALOG, invoker),
            inputs={},
            run_id="r-c",
            approve=at != "AwaitingApproval",  # that one: a person has not approved yet
            subscribe=view,
        )
    assert answers == [True]
    assert (outcome.state, outcome.reason) == ("cancelled", "over budget")
    events = engine.log.events("r-c")
    assert not any(isinstance(e, StepStarted) for e in events)
    assert invoker.calls == []
    assert isinstance(events[-1], RunFinished)
    assert events[-1].state == "cancelled"
    engine.close()


async def test_cancel_from_a_view_at_awaiting_approval_cancels_the_run(tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"  # the counter server's record of its calls
    inputs = eh.write_inputs(tmp_path, n=2, COUNTER_LOG=str(calls))
    engine = Engine(tmp_path / "home")
    answers: list[bool] = []

    def view(event: Event) -> None:
        if event.type == "AwaitingApproval" and not answers:
            answers.append(engine.cancel("r-aw", "over budget"))

    with anyio.fail_after(60):
        # the default policy wants a person for the write steps, and none approves
        outcome = await engine.run(inputs, run_id="r-aw", subscribe=view)
        assert answers == [True]
        assert (outcome.state, outcome.reason) == ("cancelled", "over budget")
        events = engine.log.events("r-aw")
        assert [e.type for e in events][-3:] == ["AwaitingApproval", "RunCancelled", "RunFinished"]
        assert isinstance(events[-2], RunCancelled)
        assert events[-2].reason == "over budget"
        assert isinstance(events[-1], RunFinished)
        assert (events[-1].state, events[-1].reason) == ("cancelled", "over budget")
        later = await engine.resume("r-aw", approve=True)  # finished: nothing runs
    assert (later.state, later.reason) == ("cancelled", "over budget")
    assert engine.log.events("r-aw") == events
    assert not any(isinstance(e, StepStarted | PlanApproved) for e in events)
    assert not calls.exists()  # the server was never called
    engine.close()


async def test_cancel_from_a_view_at_awaiting_approval_on_resume_cancels_the_run(
    tmp_path: Path,
) -> None:
    calls = tmp_path / "calls.jsonl"
    inputs = eh.write_inputs(tmp_path, n=2, COUNTER_LOG=str(calls))
    engine = Engine(tmp_path / "home")

    def view(event: Event) -> None:
        if event.type == "AwaitingApproval":
            engine.cancel("r-aw2", "not today")

    with anyio.fail_after(60):
        with pytest.raises(ApprovalRequiredError):
            await engine.run(inputs, run_id="r-aw2")
        outcome = await engine.resume("r-aw2", subscribe=view)
        assert (outcome.state, outcome.reason) == ("cancelled", "not today")
        later = await engine.resume("r-aw2", approve=True)
    assert later.state == "cancelled"
    events = engine.log.events("r-aw2")
    assert [e.type for e in events][-2:] == ["RunCancelled", "RunFinished"]
    assert not any(isinstance(e, StepStarted | PlanApproved) for e in events)
    assert not calls.exists()
    engine.close()


async def test_resume_with_an_unset_environment_variable_is_refused_before_approval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bindings = (
        "bindings:\n"
        + binding(
            "summarise",
            "work",
            '{name: "${env.PLANSMITH_T_NAME}-${d}"}',
            '{done: "$.structured.done"}',
        )
        + INDEX_BINDING
    )
    inputs = eh.write_inputs(tmp_path, n=1, bindings=bindings)
    engine = Engine(tmp_path / "home")
    monkeypatch.setenv("PLANSMITH_T_NAME", "x")
    with anyio.fail_after(60):
        with pytest.raises(ApprovalRequiredError):
            await engine.run(inputs, run_id="r-env")
        monkeypatch.delenv("PLANSMITH_T_NAME")
        before = engine.log.events("r-env")
        with pytest.raises(
            BindingError, match="environment variable PLANSMITH_T_NAME is not set"
        ) as info:
            await engine.resume("r-env", approve=True)
    assert info.value.exit_code == 2
    assert info.value.hint == "export PLANSMITH_T_NAME=... before running plansmith"
    assert info.value.location is not None
    assert info.value.location.step == "s1"
    assert info.value.location.file == str(inputs.bindings)
    assert engine.log.events("r-env") == before  # not approved, nothing recorded
    engine.close()
