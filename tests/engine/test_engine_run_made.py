"""Runs a run maker makes (``Engine.run_made``): recorded with the maker's name and
arguments, made again by the maker when another engine approves, resumes or retries
them (the plan bound in the log is the one that runs), and refused before anything is
recorded when the maker is not there or refuses its arguments. The tools are a real
stdio server (the counter)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import _engine_helpers as eh
import anyio
import pytest

from plansmith.binding import load_bindings
from plansmith.engine import (
    MADE_KEY,
    Engine,
    MadeRun,
    MakeContext,
    RunInputs,
    RunMaker,
    load_problem_files,
    make_plan,
)
from plansmith.errors import ApprovalRequiredError, InputError
from plansmith.model import JSONValue
from plansmith.servers import load_servers

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _maker(inputs: RunInputs, made: list[MakeContext]) -> RunMaker:
    """A maker of the docs domain's run over ``n`` documents (its one argument)."""

    def make(args: Mapping[str, JSONValue], context: MakeContext) -> MadeRun:
        n = args.get("n")
        if not isinstance(n, int) or n < 1:
            raise InputError(f"n {n!r} is not a count of documents")
        made.append(context)
        problem = load_problem_files(inputs.domain, inputs.problem)
        bindings = load_bindings(inputs.bindings)
        return MadeRun(make_plan(problem), problem.domain, bindings, load_servers(inputs.servers))

    return make


async def test_a_made_run_records_its_maker_and_arguments_and_runs(tmp_path: Path) -> None:
    made: list[MakeContext] = []
    engine = Engine(tmp_path / "home", makers={"docs": _maker(eh.write_inputs(tmp_path), made)})
    with anyio.fail_after(60):
        outcome = await engine.run_made("docs", {"n": 2}, approve=True, owner="me")
    info = engine.log.run(outcome.run_id)
    engine.close()
    assert outcome.state == "succeeded", outcome.reason
    assert info.inputs[MADE_KEY] == {"maker": "docs", "args": {"n": 2}}
    assert info.inputs["owner"] == "me"
    assert [c.run_id for c in made] == [outcome.run_id]
    assert made[0].run_dir == tmp_path / "home" / "runs" / outcome.run_id


async def test_a_held_made_run_is_made_again_and_run_by_another_engine(tmp_path: Path) -> None:
    made: list[MakeContext] = []
    maker = _maker(eh.write_inputs(tmp_path), made)
    first = Engine(tmp_path / "home", makers={"docs": maker})
    with anyio.fail_after(60), pytest.raises(ApprovalRequiredError) as caught:
        await first.run_made("docs", {"n": 2}, hold=True, run_id="r-held")
    first.close()
    assert "plansmith resume r-held --yes" in (caught.value.hint or "")
    second = Engine(tmp_path / "home", makers={"docs": maker})
    plan_hash = next(e for e in second.log.events("r-held") if e.type == "PlanReady").plan_hash  # type: ignore[attr-defined]
    with anyio.fail_after(60):
        outcome = await second.approve("r-held", plan_hash, by="a person")
    kinds = [e.type for e in second.log.events("r-held")]
    second.close()
    assert outcome.state == "succeeded", outcome.reason
    assert len(made) == 2  # made by the first engine, and again by the second
    assert kinds.count("PlanReady") == 1  # the plan of the log ran, bound once


async def test_a_cancelled_made_run_is_retried_from_its_maker(tmp_path: Path) -> None:
    made: list[MakeContext] = []
    engine = Engine(tmp_path / "home", makers={"docs": _maker(eh.write_inputs(tmp_path), made)})
    with anyio.fail_after(60), pytest.raises(ApprovalRequiredError):
        await engine.run_made("docs", {"n": 1}, hold=True, run_id="r-1")
    assert engine.cancel("r-1", "not now")
    with anyio.fail_after(60):
        outcome = await engine.retry("r-1", by="a person", approve=True)
    kinds = [e.type for e in engine.log.events("r-1")]
    engine.close()
    assert outcome.state == "succeeded", outcome.reason
    assert "RunRetried" in kinds


async def test_a_maker_not_there_or_refusing_its_arguments_records_nothing(
    tmp_path: Path,
) -> None:
    made: list[MakeContext] = []
    engine = Engine(tmp_path / "home", makers={"docs": _maker(eh.write_inputs(tmp_path), made)})
    with pytest.raises(InputError, match="no run maker named 'nope'") as caught:
        await engine.run_made("nope", {})
    assert "docs" in (caught.value.hint or "")
    with pytest.raises(InputError, match="n 0 is not a count"):
        await engine.run_made("docs", {"n": 0})
    with pytest.raises(InputError):
        await engine.run_made("docs", {"n": object()})  # type: ignore[dict-item]
    runs = engine.log.runs()
    engine.close()
    assert runs == []
    assert made == []
