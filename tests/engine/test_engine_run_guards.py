"""The engine's public API refuses misuse with typed errors before anything is written:
an existing or malformed run id, inputs that are not JSON, a config of another type, a
max_parallel below 1, a closed engine; and a closed engine, or one with active runs, says
so."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import _engine_helpers as eh
import anyio
import pytest

from _shared_servers import problem_text
from plansmith.binding import ToolCatalog, ToolSpec, load_bindings
from plansmith.engine import Engine, RunInputs, RunTools, load_problem_files, make_plan
from plansmith.errors import ApprovalRequiredError, ExecutionError, InputError
from plansmith.execution import (
    ApprovalPolicy,
    Event,
    MemoryRunLog,
    RunLog,
    ToolCall,
    ToolResult,
)
from plansmith.model import Domain, Plan

pytestmark = pytest.mark.anyio

CATALOG = ToolCatalog(
    (("counter", (ToolSpec("work", {"type": "object"}), ToolSpec("echo", {"type": "object"}))),)
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Local:
    """Answers every call at once (or, with ``block``, waits for ``release``)."""

    def __init__(self, *, block: bool = False) -> None:
        self.entered = anyio.Event()
        self.release = anyio.Event()
        if not block:
            self.release.set()

    async def invoke(self, call: ToolCall) -> ToolResult:
        self.entered.set()
        await self.release.wait()
        return ToolResult(structured={"done": f"{call.step}!", "value": "v"})


def planned(inputs: RunInputs) -> tuple[Plan, Domain]:
    problem = load_problem_files(inputs.domain, inputs.problem)
    return make_plan(problem), problem.domain


def made(tmp: Path) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    return tmp


def read_only_inputs(tmp: Path) -> RunInputs:
    inputs = eh.write_inputs(made(tmp), n=1)
    inputs.problem.write_text(problem_text(1, goal="summarised(d0)"))
    return inputs


@pytest.mark.parametrize("kind", ["sqlite", "memory"])
async def test_run_plan_with_an_existing_run_id_is_refused_and_keeps_the_run(
    tmp_path: Path, kind: str
) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    log: RunLog | None = MemoryRunLog() if kind == "memory" else None
    engine = Engine(tmp_path / "home", log=log)
    plan, domain = planned(inputs)
    args = (plan, domain, load_bindings(inputs.bindings), RunTools(CATALOG, Local()))
    with anyio.fail_after(30):
        with pytest.raises(ApprovalRequiredError):
            await engine.run_plan(*args, inputs={"ticket": "T-1"}, run_id="T-1")
        before = engine.log.run("T-1"), engine.log.events("T-1")
        with pytest.raises(InputError, match="run T-1 already exists") as info:
            await engine.run_plan(*args, inputs={"ticket": 2}, run_id="T-1", approve=True)
    assert info.value.hint is not None
    assert "resume it" in info.value.hint
    assert (engine.log.run("T-1"), engine.log.events("T-1")) == before
    engine.close()


@pytest.mark.parametrize("kind", ["sqlite", "memory"])
def test_a_run_log_never_overwrites_a_run(tmp_path: Path, kind: str) -> None:
    engine = Engine(tmp_path / "home", log=MemoryRunLog() if kind == "memory" else None)
    engine.log.create_run("r-1", "2026-01-01T00:00:00.000Z", {"a": 1})
    with pytest.raises(InputError, match="run r-1 already exists"):
        engine.log.create_run("r-1", "2026-01-02T00:00:00.000Z", {"a": 2})
    assert engine.log.run("r-1").inputs == {"a": 1}
    engine.close()


async def test_run_with_an_existing_run_id_is_refused_before_planning(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    engine = Engine(tmp_path / "home")
    with anyio.fail_after(60):
        with pytest.raises(ApprovalRequiredError):
            await engine.run(inputs, run_id="job-42")
        before = engine.log.run("job-42")
        with pytest.raises(InputError, match="run job-42 already exists"):
            await engine.run(inputs, run_id="job-42", approve=True)
        assert engine.log.run("job-42") == before
        outcome = await engine.resume("job-42", approve=True)
    assert outcome.state == "succeeded"
    engine.close()


@pytest.mark.parametrize(
    "run_id", ["../../x", "/tmp/abs", "a/b", ".hidden", "", "x" * 129, "a b", "..", 7]
)
async def test_a_run_id_that_is_not_one_path_component_is_refused(
    tmp_path: Path, run_id: object
) -> None:
    inputs = eh.write_inputs(made(tmp_path / "in"), n=1)
    engine = Engine(tmp_path / "home")
    plan, domain = planned(inputs)
    with anyio.fail_after(30):
        with pytest.raises(InputError, match="letters, digits"):
            await engine.run(inputs, approve=True, run_id=run_id)  # type: ignore[arg-type]
        with pytest.raises(InputError, match="letters, digits"):
            await engine.run_plan(
                plan,
                domain,
                load_bindings(inputs.bindings),
                RunTools(CATALOG, Local()),
                inputs={},
                approve=True,
                run_id=run_id,  # type: ignore[arg-type]
            )
    assert engine.log.runs() == []
    written = {p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()}
    assert all(p.parts[0] in ("in", "home") for p in written)
    engine.close()


def test_the_engines_own_run_ids_and_dotted_ones_are_accepted() -> None:
    from plansmith.engine import check_run_id

    engine = Engine(log=MemoryRunLog())
    for run_id in (engine.new_run_id(), "job-42", "T_1.retry", "a" * 128):
        assert check_run_id(run_id) == run_id


async def test_run_plan_refuses_inputs_that_are_not_json_before_writing(tmp_path: Path) -> None:
    inputs = eh.write_inputs(made(tmp_path / "in"), n=1)
    engine = Engine(tmp_path / "home")
    plan, domain = planned(inputs)
    args = (plan, domain, load_bindings(inputs.bindings))
    with anyio.fail_after(30):
        for bad in ({"src": Path("/d")}, {"x": float("nan")}, {"x": {1, 2}}, [1]):
            with pytest.raises(InputError, match="JSON"):
                await engine.run_plan(*args, RunTools(CATALOG, Local()), inputs=bad)  # type: ignore[arg-type]
        with pytest.raises(InputError, match="ServersConfig or RunTools"):
            await engine.run_plan(*args, {"mcpServers": {}}, inputs={})  # type: ignore[arg-type]
        with pytest.raises(InputError, match="RunInputs"):
            await engine.run(str(inputs.domain))  # type: ignore[arg-type]
    assert engine.log.runs() == []
    assert not (tmp_path / "home" / "runs").exists() or not any(
        (tmp_path / "home" / "runs").iterdir()
    )
    engine.close()


@pytest.mark.parametrize("max_parallel", [0, -1, True, 2.0])
async def test_a_max_parallel_below_one_is_refused_before_a_run_is_created(
    tmp_path: Path, max_parallel: Any
) -> None:
    inputs = eh.write_inputs(made(tmp_path / "in"), n=1)
    engine = Engine(tmp_path / "home")
    plan, domain = planned(inputs)
    with anyio.fail_after(60):
        with pytest.raises(ApprovalRequiredError):  # a run to resume, awaiting approval
            await engine.run(inputs, run_id="r-1")
        before = engine.log.runs(), engine.log.events("r-1")
        calls = {
            "run": lambda: engine.run(inputs, approve=True, max_parallel=max_parallel),
            "run_plan": lambda: engine.run_plan(
                plan,
                domain,
                load_bindings(inputs.bindings),
                RunTools(CATALOG, Local()),
                inputs={},
                approve=True,
                max_parallel=max_parallel,
            ),
            "resume": lambda: engine.resume("r-1", approve=True, max_parallel=max_parallel),
            "take_over_expired": lambda: engine.take_over_expired(max_parallel=max_parallel),
        }
        for name, call in calls.items():
            with pytest.raises(
                InputError, match=f"max_parallel must be .* not {max_parallel!r}"
            ) as info:
                await call()
            assert (
                info.value.hint
                == "max_parallel is the number of steps in flight at most: 1 or more"
            ), name
    assert (engine.log.runs(), engine.log.events("r-1")) == before  # no new run, nothing written
    engine.close()


def test_an_unknown_tier_is_an_input_error_with_a_hint() -> None:
    with pytest.raises(InputError, match="unknown 'exec'") as info:
        ApprovalPolicy.parse("write,exec")
    assert isinstance(info.value, ValueError)  # as before, for callers that catch that
    assert info.value.hint is not None
    assert "read, write, execute" in info.value.hint
    assert ApprovalPolicy.parse(ApprovalPolicy().text()) == ApprovalPolicy()
    assert ApprovalPolicy.parse(ApprovalPolicy(frozenset()).text()) == ApprovalPolicy(frozenset())


async def test_a_closed_engine_refuses_runs_with_a_typed_error(tmp_path: Path) -> None:
    inputs = eh.write_inputs(made(tmp_path / "in"), n=1)
    engine = Engine(tmp_path / "home")
    engine.close()
    engine.close()  # closing twice is closing once
    plan, domain = planned(inputs)
    calls = {
        "run": lambda: engine.run(inputs, approve=True),
        "run_plan": lambda: engine.run_plan(
            plan, domain, load_bindings(inputs.bindings), RunTools(CATALOG, Local()), inputs={}
        ),
        "resume": lambda: engine.resume("r-1"),
        "check": lambda: engine.check(inputs),
        "replay": lambda: engine.replay("r-1"),
    }
    for name, call in calls.items():
        with pytest.raises(ExecutionError, match="the engine is closed"):
            await call()
        assert name


async def test_closing_an_engine_with_an_active_run_is_refused_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    inputs = read_only_inputs(tmp_path / "in")
    engine = Engine(tmp_path / "home")
    plan, domain = planned(inputs)
    invoker = Local(block=True)
    outcomes = []

    async def go() -> None:
        outcomes.append(
            await engine.run_plan(
                plan,
                domain,
                load_bindings(inputs.bindings),
                RunTools(CATALOG, invoker),
                inputs={},
                run_id="r-live",
            )
        )

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(go)
            await invoker.entered.wait()
            with pytest.raises(ExecutionError, match="run\\(s\\) r-live are active"):
                engine.close()
            invoker.release.set()
    assert outcomes[0].state == "succeeded"
    engine.close()
    reopened = Engine(tmp_path / "home")
    assert reopened.leases is not None
    assert reopened.leases.holder("r-live") is None
    reopened.close()


async def test_an_engine_is_a_context_manager_that_closes(tmp_path: Path) -> None:
    with Engine(tmp_path / "a") as engine:
        pass
    with pytest.raises(ExecutionError, match="closed"):
        await engine.replay("r-1")
    async with Engine(tmp_path / "b") as other:
        pass
    with pytest.raises(ExecutionError, match="closed"):
        await other.replay("r-1")


async def _async_view(event: Event) -> None:  # what a subscriber must not be
    del event


class _AsyncCallable:
    async def __call__(self, event: Event) -> None:
        del event


@pytest.mark.parametrize("view", [_async_view, _AsyncCallable()])
async def test_an_async_subscriber_is_refused_before_anything_is_written(
    tmp_path: Path, view: Callable[[Event], object]
) -> None:
    inputs = eh.write_inputs(made(tmp_path / "in"), n=1)
    engine = Engine(tmp_path / "home")
    plan, domain = planned(inputs)
    args = (plan, domain, load_bindings(inputs.bindings), RunTools(CATALOG, Local()))
    async_view: Callable[[Event], None] = view  # type: ignore[assignment]
    with anyio.fail_after(30):
        with pytest.raises(InputError, match="must be a plain function"):
            await engine.run(inputs, approve=True, run_id="r-a", subscribe=async_view)
        with pytest.raises(InputError, match="must be a plain function"):
            await engine.run_plan(*args, inputs={}, approve=True, subscribe=async_view)
        assert engine.log.runs() == []
        assert not (tmp_path / "home" / "runs").exists()
        with pytest.raises(ApprovalRequiredError):  # a run awaiting approval
            await engine.run(inputs, run_id="r-c")
        before = engine.log.events("r-c")
        with pytest.raises(InputError, match="must be a plain function"):
            await engine.resume("r-c", approve=True, subscribe=async_view)
        assert engine.log.events("r-c") == before
        assert engine.leases is not None
        assert engine.leases.holder("r-c") is None
        assert await engine.resume("r-c", approve=True) == await engine.resume("r-c")
        with pytest.raises(InputError, match="must be a plain function"):  # finished: too
            await engine.resume("r-c", subscribe=async_view)
        with pytest.raises(InputError, match="must be a plain function"):  # each run taken
            await engine.take_over_expired(subscribe=async_view)
        with pytest.raises(InputError, match="must be a plain function"):
            await engine.keep_taking_over(subscribe=async_view)
    assert [r.run_id for r in engine.log.runs()] == ["r-c"]
    engine.close()


def test_a_closed_engine_refuses_changed_inputs_with_a_typed_error(tmp_path: Path) -> None:
    engine = Engine(tmp_path / "home")
    engine.close()
    with pytest.raises(ExecutionError, match="the engine is closed") as info:
        engine.changed_inputs("r-1")
    assert info.value.hint is not None
    assert "damaged" not in info.value.hint
