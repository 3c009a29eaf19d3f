"""Follow-up runs (``Engine.run(..., after=RUN_ID)``): a new goal planned from the final
symbolic state of a finished run, whose outputs its steps read by reference; the
parent's steps are not called again (the counter server logs every call of ``work``)."""

from __future__ import annotations

import json
from pathlib import Path

import _engine_helpers as eh
import anyio
import pytest

from _shared_servers import problem_text
from plansmith.engine import (
    AFTER_KEY,
    Engine,
    RunInputs,
    build_report,
    inheritance,
    inherited_reads,
    report_markdown,
)
from plansmith.errors import InputError
from plansmith.execution import RunView, StepStarted

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def work_calls(log: Path) -> list[dict[str, object]]:
    """The calls of ``work`` the counter server logged (one JSON line each)."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def summarised_then_indexed(tmp_path: Path) -> tuple[RunInputs, RunInputs, Path]:
    """The parent's files (goal: d0 and d1 summarised) and the follow-up's (goal: d0 and
    d1 indexed; its ``index`` steps read ``${summarise(d).done}``), and the call log."""
    calls = tmp_path / "calls.jsonl"
    parent = eh.write_inputs(tmp_path, n=2, COUNTER_LOG=str(calls))
    parent.problem.write_text(problem_text(2, goal="summarised(d0), summarised(d1)"))
    child_problem = tmp_path / "indexed.yaml"
    child_problem.write_text(problem_text(2))
    child = RunInputs(parent.domain, child_problem, parent.servers, parent.bindings)
    return parent, child, calls


async def test_a_follow_up_reads_its_parents_outputs_without_calling_its_steps_again(
    tmp_path: Path,
) -> None:
    parent_inputs, child_inputs, calls = summarised_then_indexed(tmp_path)
    engine = Engine(tmp_path / "home")
    with anyio.fail_after(60):
        parent = await engine.run(parent_inputs, approve=True, run_id="parent")
        assert parent.state == "succeeded", parent.reason
        assert sorted(c["args"]["name"] for c in work_calls(calls)) == ["d0", "d1"]  # type: ignore[index]
        child = await engine.run(child_inputs, approve=True, run_id="child", after="parent")
    assert child.state == "succeeded", child.reason
    # the parent's steps (summarise: ``work``) were not called again: still 2 calls
    assert len(work_calls(calls)) == 2
    events = engine.log.events("child")
    started = [e for e in events if isinstance(e, StepStarted)]
    view = RunView.fold(events, "child")
    assert {view.steps[e.step].action for e in started} == {"index"}  # only the new steps
    assert len(started) == 2
    # ... which read the parent's outputs by reference (``${summarise(d).done}``)
    values = sorted(o["value"] for k, o in child.outputs.items() if k in view.steps)  # type: ignore[index]
    assert values == ["d0!", "d1!"]
    assert engine.log.run("child").inputs[AFTER_KEY] == "parent"
    reads = inherited_reads(view.run.bound)
    assert sorted(reads) == ["parent/s1", "parent/s2"]
    # the report names the parent and the inherited outputs the new steps read
    report = build_report("child", events, engine.log, {})
    assert report["after"] == "parent"
    assert sorted(i["producer"] for i in report["inherited"]) == ["parent/s1", "parent/s2"]
    assert {i["action"] for i in report["inherited"]} == {"summarise"}
    markdown = report_markdown(report)
    assert "Follows up run parent" in markdown
    assert "`parent/s1`" in markdown
    engine.close()


async def test_a_follow_up_of_a_follow_up_reads_the_grandparents_outputs(tmp_path: Path) -> None:
    parent_inputs, child_inputs, calls = summarised_then_indexed(tmp_path)
    engine = Engine(tmp_path / "home")
    with anyio.fail_after(60):
        assert (await engine.run(parent_inputs, approve=True, run_id="p")).state == "succeeded"
        # a follow-up with nothing to do: the goal holds in the parent's final state
        empty = await engine.run(parent_inputs, approve=True, run_id="c", after="p")
        assert empty.state == "succeeded", empty.reason
        assert not [e for e in engine.log.events("c") if isinstance(e, StepStarted)]
        grand = await engine.run(child_inputs, approve=True, run_id="g", after="c")
    assert grand.state == "succeeded", grand.reason
    assert len(work_calls(calls)) == 2  # summarise ran once per document, in ``p``
    view = RunView.fold(engine.log.events("g"), "g")
    assert sorted(inherited_reads(view.run.bound)) == ["p/s1", "p/s2"]
    got = inheritance(engine.log, "g")
    assert {str(a) for a in got.state if a.predicate == "indexed"} == {"indexed(d0)", "indexed(d1)"}
    engine.close()


async def test_a_resumed_follow_up_still_reads_its_parents_outputs(tmp_path: Path) -> None:
    parent_inputs, child_inputs, calls = summarised_then_indexed(tmp_path)
    engine = Engine(tmp_path / "home")
    with anyio.fail_after(60):
        assert (await engine.run(parent_inputs, approve=True, run_id="p")).state == "succeeded"
        with pytest.raises(Exception, match="awaits approval"):  # index is of tier write
            await engine.run(child_inputs, run_id="c", after="p")
        outcome = await engine.resume("c", approve=True)
    assert outcome.state == "succeeded", outcome.reason
    assert len(work_calls(calls)) == 2
    engine.close()


async def test_bad_after_is_refused_and_no_run_is_recorded(tmp_path: Path) -> None:
    parent_inputs, child_inputs, _ = summarised_then_indexed(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "domain.yaml").write_text(eh.DOMAIN.replace("domain: docs", "domain: papers"))
    (other / "problem.yaml").write_text(problem_text(1).replace("domain: docs", "domain: papers"))
    other_inputs = RunInputs(
        other / "domain.yaml", other / "problem.yaml", parent_inputs.servers, parent_inputs.bindings
    )
    engine = Engine(tmp_path / "home")
    with anyio.fail_after(60):
        assert (await engine.run(other_inputs, approve=True, run_id="o")).state == "succeeded"
        with pytest.raises(Exception, match="awaits approval"):
            await engine.run(child_inputs, run_id="waiting")
        before = {i.run_id for i in engine.log.runs()}
        cases = {
            "nope": "run nope is not in the run log",
            "o": "run o is of domain 'papers', not 'docs'",
            "waiting": "run waiting has not finished",
        }
        for after, message in cases.items():
            with pytest.raises(InputError, match=message) as info:
                await engine.run(child_inputs, approve=True, run_id=f"x-{after}", after=after)
            assert info.value.hint
            assert info.value.location is not None
            assert info.value.location.argument == "after"
    assert {i.run_id for i in engine.log.runs()} == before
    engine.close()


async def test_a_follow_up_reads_a_fact_its_parent_made_true(tmp_path: Path) -> None:
    # ``index(d)`` reads ``${fact(summarised(d)).done}``: the parent's step that made it true
    bindings = eh.BINDINGS.replace("${summarise(d).done}", "${fact(summarised(d)).done}")
    parent_inputs, child_inputs, calls = summarised_then_indexed(tmp_path)
    parent_inputs.bindings.write_text(bindings)
    engine = Engine(tmp_path / "home")
    with anyio.fail_after(60):
        assert (await engine.run(parent_inputs, approve=True, run_id="p")).state == "succeeded"
        child = await engine.run(child_inputs, approve=True, run_id="c", after="p")
    assert child.state == "succeeded", child.reason
    assert len(work_calls(calls)) == 2
    assert sorted(o["value"] for o in child.outputs.values() if "value" in o) == ["d0!", "d1!"]  # type: ignore[operator,index]
    engine.close()
