"""The engine end to end over a real stdio MCP server: run, approval, check, replan, replay."""

from __future__ import annotations

import subprocess
import sys
import typing
from pathlib import Path

import _engine_helpers as eh
import anyio
import pytest

from plansmith.engine import Engine, RunInputs
from plansmith.errors import ApprovalRequiredError, BindingError, ExecutionError
from plansmith.execution import Event, MemoryRunLog, Replanned, StepSucceeded

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def shape(events: list[Event]) -> list[tuple[str, str, int]]:
    """Events without times and run ids, per step in order (parallel steps may interleave)."""
    rows = [
        (e.type, getattr(e, "step", ""), getattr(e, "attempt", 0))
        for e in events
        if e.type not in ("RunCreated",)
    ]
    return sorted(rows, key=lambda r: (r[1], rows.index(r)))


async def test_run_over_stdio_succeeds_and_replay_gives_the_same_events(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=2)
    engine = Engine(tmp_path / "home")
    seen: list[Event] = []
    with anyio.fail_after(60):
        outcome = await engine.run(inputs, approve=True, subscribe=seen.append)
        replayed = await engine.replay(outcome.run_id)
    assert outcome.state == "succeeded", outcome.reason
    index_out = [v for k, v in outcome.outputs.items() if k in ("s3", "s4")]
    assert sorted(o["value"] for o in index_out) == ["d0!", "d1!"]  # type: ignore[index]
    recorded = engine.log.events(outcome.run_id)
    assert [e.seq for e in recorded] == list(range(1, len(recorded) + 1))
    assert [e.type for e in seen] == [e.type for e in recorded]
    assert shape(replayed) == shape(recorded)
    engine.close()


async def test_write_tier_waits_for_approval_then_resume_yes_runs(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    engine = Engine(tmp_path / "home")
    with anyio.fail_after(60):
        with pytest.raises(ApprovalRequiredError) as info:
            await engine.run(inputs, run_id="r-wait")
        assert "sha256:" in info.value.message
        types = [e.type for e in engine.log.events("r-wait")]
        assert types[-1] == "AwaitingApproval"
        assert "StepStarted" not in types
        outcome = await engine.resume("r-wait", approve=True)
    assert outcome.state == "succeeded"
    approved = [e for e in engine.log.events("r-wait") if e.type == "PlanApproved"]
    assert len(approved) == 1
    assert approved[0].plan_hash.startswith("sha256:")
    engine.close()


async def test_check_reports_every_binding_problem_with_its_location(tmp_path: Path) -> None:
    bad = """\
bindings:
  summarise:
    server: counter
    tool: no_such_tool
    arguments: {name: "${d}"}
  summarise_alt:
    server: nowhere
    tool: work
  index:
    server: counter
    tool: echo
    arguments: {x: "${summarise(d).missing}", y: "${fetch(d).out}", z: "${q}"}
"""
    inputs = eh.write_inputs(tmp_path, n=1, bindings=bad)
    engine = Engine(tmp_path / "home")
    with anyio.fail_after(60), pytest.raises(BindingError) as info:
        await engine.check(inputs)
    text = str(info.value)
    assert "no tool 'no_such_tool'" in text
    assert "bindings.yaml:4" in text
    assert "no step fetch(d0)" in text
    assert "bindings.yaml:12" in text
    assert "no parameter 'q'" in text
    engine.close()


async def test_failed_action_is_replanned_with_another_action(tmp_path: Path) -> None:
    failing = eh.BINDINGS.replace(
        '    tool: work\n    arguments: {name: "${d}"}',
        '    tool: fail\n    arguments: {message: "down"}',
        1,
    )
    failing = failing.replace('"${summarise(d).done}"', '"${d}"')
    inputs = eh.write_inputs(tmp_path, n=1, bindings=failing)
    engine = Engine(tmp_path / "home")
    with anyio.fail_after(60):
        outcome = await engine.run(inputs, approve=True)
    assert outcome.state == "succeeded", outcome.reason
    events = engine.log.events(outcome.run_id)
    types = [e.type for e in events]
    assert "StepFailed" in types
    assert "Replanned" in types
    done = [e for e in events if isinstance(e, StepSucceeded)]
    assert [e.action for e in done] == ["summarise_alt", "index"]
    engine.close()


async def test_replan_needing_a_tier_the_approval_did_not_cover_stops_the_run(
    tmp_path: Path,
) -> None:
    failing = eh.BINDINGS.replace(
        '    tool: work\n    arguments: {name: "${d}"}',
        '    tool: fail\n    arguments: {message: "down"}',
        1,
    )
    failing = failing.replace('"${summarise(d).done}"', '"${d}"')
    failing = failing.replace(
        '    arguments: {name: "alt-${d}"}\n',
        '    arguments: {name: "alt-${d}"}\n    tier: execute\n',
    )
    inputs = eh.write_inputs(tmp_path, n=1, bindings=failing)
    engine = Engine(tmp_path / "home")
    with anyio.fail_after(60):
        outcome = await engine.run(inputs, approve=True)
    assert outcome.state == "failed"
    assert "needs tier(s) execute" in (outcome.reason or "")
    events = engine.log.events(outcome.run_id)
    assert "Replanned" not in [e.type for e in events]
    assert not [e for e in events if getattr(e, "action", "") == "summarise_alt"]
    engine.close()


def _htn_with_summarise_down(tmp_path: Path) -> RunInputs:
    """Two documents to publish (HTN), where ``summarise`` always fails: each
    ``publish`` is replanned with its next method (``summarise_alt``)."""
    failing = eh.BINDINGS.replace(
        '    tool: work\n    arguments: {name: "${d}"}',
        '    tool: fail\n    arguments: {message: "down"}',
        1,
    )
    failing = failing.replace('"${summarise(d).done}"', '"${d}"')
    return eh.write_inputs(tmp_path, n=2, bindings=failing, htn=True)


#: the steps that succeed in such a run, in order
BY_THE_NEXT_METHOD = [
    ("summarise_alt", ("d0",)),
    ("index", ("d0",)),
    ("summarise_alt", ("d1",)),
    ("index", ("d1",)),
]


async def test_htn_run_replans_with_the_next_method(tmp_path: Path) -> None:
    inputs = _htn_with_summarise_down(tmp_path)
    engine = Engine(tmp_path / "home")
    with anyio.fail_after(60):
        outcome = await engine.run(inputs, approve=True)
    assert outcome.state == "succeeded", outcome.reason
    events = engine.log.events(outcome.run_id)
    done = [(e.action, e.args) for e in events if isinstance(e, StepSucceeded)]
    assert done == BY_THE_NEXT_METHOD
    assert [e.type for e in events].count("Replanned") == 2
    engine.close()


async def test_an_htn_run_killed_after_a_replan_resumes_to_the_same_end(tmp_path: Path) -> None:
    """The log a killed engine leaves just after the first replan: the resumed run
    replans again from the plan in force (not from the first plan, whose finished task
    would seem to remain and could no longer be decomposed), as the run did unkilled."""
    inputs = _htn_with_summarise_down(tmp_path)
    whole = Engine(tmp_path / "home")
    with anyio.fail_after(60):
        outcome = await whole.run(inputs, approve=True, max_parallel=1)
    recorded = whole.log.events(outcome.run_id)
    info = whole.log.run(outcome.run_id)
    whole.close()
    assert outcome.state == "succeeded", outcome.reason
    cut = next(k for k, e in enumerate(recorded) if isinstance(e, Replanned)) + 1
    killed = Engine(tmp_path / "killed")  # what an engine killed there left
    killed.log.create_run(outcome.run_id, info.created, info.inputs)
    for event in recorded[:cut]:
        killed.log.append(event)
    killed.log.flush()
    killed.close()
    done = subprocess.run(  # the CLI, as a user resumes it (its own event loop)
        [
            *(str(Path(sys.executable).parent / "plansmith"), "resume", outcome.run_id),
            *("--yes", "--max-parallel", "1", "--home", str(tmp_path / "killed")),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    code, err = done.returncode, done.stderr
    assert code == 0, err
    # the plan in force: the replan's four steps, not those it replaced
    assert f"run {outcome.run_id}: resumed with 0 of 4 steps done" in " ".join(err.split())
    killed = Engine(tmp_path / "killed")
    events = killed.log.events(outcome.run_id)
    killed.close()
    done = [(e.action, e.args) for e in events if isinstance(e, StepSucceeded)]
    assert done == BY_THE_NEXT_METHOD
    assert [e.type for e in events].count("Replanned") == 2


async def test_replay_of_a_log_missing_an_outcome_is_a_clear_error(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    engine = Engine(tmp_path / "home")
    with anyio.fail_after(60):
        outcome = await engine.run(inputs, approve=True)
    recorded = engine.log.events(outcome.run_id)
    engine.close()
    lost = next(e for e in recorded if isinstance(e, StepSucceeded))
    damaged = MemoryRunLog()  # the same run with one step's end gone
    damaged.create_run(outcome.run_id, "", {})
    for event in recorded:
        if event is not lost:
            damaged.append(event)
    with anyio.fail_after(60), pytest.raises(ExecutionError) as info:
        await Engine(tmp_path / "home2", log=damaged).replay(outcome.run_id)
    assert f"attempt 1 of step {lost.step}" in info.value.message
    assert info.value.location.step == lost.step
    assert info.value.hint


def test_run_inputs_take_text_or_paths_and_read_back_paths() -> None:
    import dataclasses

    named = ("d.yaml", "p.yaml", "s.json", "b.yaml")
    from_text = RunInputs("d.yaml", "p.yaml", "s.json", "b.yaml")  # typed: str | Path
    from_paths = RunInputs(*(Path(n) for n in named))
    by_keyword = RunInputs(
        domain=Path("d.yaml"), problem="p.yaml", servers="s.json", bindings=Path("b.yaml")
    )
    assert from_text == from_paths == by_keyword
    assert hash(from_text) == hash(from_paths)
    assert all(isinstance(getattr(from_text, k), Path) for k in from_text.to_dict())
    assert from_text.to_dict() == {
        "domain": "d.yaml",
        "problem": "p.yaml",
        "servers": "s.json",
        "bindings": "b.yaml",
    }
    assert repr(from_text) == (
        "RunInputs(domain=PosixPath('d.yaml'), problem=PosixPath('p.yaml'),"
        " servers=PosixPath('s.json'), bindings=PosixPath('b.yaml'))"
    )
    changed = dataclasses.replace(from_text, domain=Path("other.yaml"))
    assert changed.domain == Path("other.yaml")
    assert RunInputs.from_dict(from_text.to_dict()) == from_text
    with pytest.raises(dataclasses.FrozenInstanceError):
        from_text.domain = Path("x")  # type: ignore[misc]
    # what a type checker reads: text or a path in, a path out
    taken = typing.get_type_hints(RunInputs.__init__)
    assert [taken[k] for k in from_text.to_dict()] == [str | Path] * 4
    assert set(typing.get_type_hints(RunInputs).values()) == {Path}
