"""``plansmith run D P --after RUN_ID``: a follow-up run, planned from the final state of
a finished run; its steps read that run's outputs, whose steps are not called again."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))

import _engine_helpers as eh

import plansmith.cli._run  # noqa: F401  (registers the commands on the app)
from _shared_servers import problem_text
from plansmith.engine import Engine

invoke, files = eh.invoke, eh.files


def _work_calls(log: Path) -> int:
    return len([line for line in log.read_text().splitlines() if line.strip()])


def _inputs(tmp_path: Path) -> tuple[list[str], list[str], Path, str]:
    """The parent's and the follow-up's arguments (goals: summarised, then indexed), the
    counter server's call log, and --home."""
    calls = tmp_path / "calls.jsonl"
    inputs = eh.write_inputs(tmp_path, n=2, COUNTER_LOG=str(calls))
    inputs.problem.write_text(problem_text(2, goal="summarised(d0), summarised(d1)"))
    (tmp_path / "indexed.yaml").write_text(problem_text(2))
    parent = files(inputs)
    child = [parent[0], str(tmp_path / "indexed.yaml"), *parent[2:]]
    return parent, child, calls, str(tmp_path / "home")


def _run_id(out: str) -> str:
    run_id: str = json.loads(out.splitlines()[0])["run_id"]
    return run_id


def test_run_after_plans_from_the_parents_end_and_calls_none_of_its_steps(
    tmp_path: Path,
) -> None:
    parent_args, child_args, calls, home = _inputs(tmp_path)
    code, out, err = invoke("run", *parent_args, "--json", "--home", home)
    assert code == 0, err
    parent = _run_id(out)
    assert _work_calls(calls) == 2

    code, out, err = invoke(
        "run", *child_args, "--after", parent, "--yes", "--json", "--home", home
    )
    assert code == 0, err
    child = _run_id(out)
    events = [json.loads(line) for line in out.splitlines()]
    assert events[0]["inputs"]["after"] == parent
    started = [e for e in events if e["type"] == "StepStarted"]
    assert len(started) == 2  # the two index steps; summarise is not called again
    assert _work_calls(calls) == 2
    succeeded = [e["outputs"]["value"] for e in events if e["type"] == "StepSucceeded"]
    assert sorted(succeeded) == ["d0!", "d1!"]  # read from the parent by reference

    code, out, err = invoke("show", child, "--home", home)
    assert code == 0, err
    assert f"after: {parent}" in out
    assert f"inherited: {parent}/s1, read by" in out

    code, _, err = invoke("replay", child, "--home", home)  # offline, as recorded
    assert code == 0, err

    engine = Engine(home)  # the parent's log is as it was: nothing written to it
    assert [e.type for e in engine.log.events(parent)][-1] == "RunFinished"
    engine.close()


def test_run_after_a_bad_run_is_bad_input_and_records_no_run(tmp_path: Path) -> None:
    parent_args, child_args, _, home = _inputs(tmp_path)
    code, out, err = invoke("run", *parent_args, "--json", "--home", home)
    assert code == 0, err
    code, _, err = invoke("run", *child_args, "--json", "--home", home)  # index: write tier
    assert code == 6, err
    code, out, _ = invoke("runs", "--json", "--home", home)
    before = out
    for after, said in (
        ("no-such-run", "run no-such-run is not in the run log"),
        (_run_id(before.splitlines()[-1]), "has not finished"),
    ):
        code, _, err = invoke("run", *child_args, "--after", after, "--yes", "--home", home)
        assert code == 2, err
        assert said in err
        assert "hint:" in err
    code, out, _ = invoke("runs", "--json", "--home", home)
    assert out == before
