"""``resume`` of a run whose files changed since it began: the recorded plan goes on, and
the person is told which file changed and what that means (``Engine.changed_inputs``
for Python). A run recorded before digests were kept resumes as it did, without a word."""

from __future__ import annotations

import json
import re
from pathlib import Path

import _engine_helpers as eh
import anyio
import pytest

from plansmith.engine import Engine, RunInputs

invoke, files = eh.invoke, eh.files


def _home(tmp: Path) -> list[str]:
    return ["--home", str(tmp / "home")]


def _awaiting(tmp: Path, inputs: RunInputs) -> str:
    """A run of ``inputs`` stopped awaiting approval; its id."""
    code, _, err = invoke("run", *files(inputs), *_home(tmp))
    assert code == 6, err
    return re.findall(r"plansmith resume (r-\w+)", err)[0]


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning:")]


def test_resume_warns_naming_each_input_file_changed_since_the_run_began(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1).resolved()  # as the run records them
    run_id = _awaiting(tmp_path, inputs)
    inputs.domain.write_text(inputs.domain.read_text() + "# edited after the run began\n")
    inputs.servers.write_text(inputs.servers.read_text() + "\n")
    code, _, err = invoke("resume", run_id, "--yes", *_home(tmp_path))
    assert code == 0, err  # the recorded plan goes on
    assert _warnings(err) == [
        f"warning: run {run_id}: its domain file {inputs.domain} changed since the run"
        " began: the run goes on with the plan it recorded; a replan would use the file"
        " as it is now",
        f"warning: run {run_id}: its servers file {inputs.servers} changed since the run"
        " began: the run goes on with the plan it recorded, and its tool servers are"
        " started from the file as it is now",
    ]
    assert f"run {run_id}: resumed with 0 of 2 steps done" in err


def test_resume_warns_before_it_stops_again_for_approval(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1).resolved()
    run_id = _awaiting(tmp_path, inputs)
    inputs.bindings.write_text(inputs.bindings.read_text() + "# edited\n")
    code, _, err = invoke("resume", run_id, *_home(tmp_path))  # no --yes: still awaiting
    assert code == 6
    assert len(_warnings(err)) == 1
    assert f"its bindings file {inputs.bindings} changed since the run began" in err


def test_resume_of_a_run_whose_files_did_not_change_gives_no_warning(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    run_id = _awaiting(tmp_path, inputs)
    inputs.problem.write_text(inputs.problem.read_text())  # written again, the same bytes
    code, _, err = invoke("resume", run_id, "--yes", *_home(tmp_path))
    assert code == 0, err
    assert _warnings(err) == []
    assert "changed" not in err


def test_a_run_records_the_sha256_of_each_input_file(tmp_path: Path) -> None:
    import hashlib

    inputs = eh.write_inputs(tmp_path, n=1)
    run_id = _awaiting(tmp_path, inputs)
    _, out, _ = invoke("show", run_id, "--json", *_home(tmp_path))
    recorded = json.loads(out.splitlines()[0])["inputs"]
    for kind in ("domain", "problem", "servers", "bindings"):
        path = Path(recorded[kind])
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert recorded[f"{kind}_digest"] == f"sha256:{digest}"


def test_a_run_recorded_without_digests_resumes_without_a_warning(tmp_path: Path) -> None:
    from plansmith.binding import load_bindings
    from plansmith.engine import load_problem_files, make_plan
    from plansmith.errors import ApprovalRequiredError
    from plansmith.servers import load_servers

    inputs = eh.write_inputs(tmp_path, n=1)
    problem = load_problem_files(inputs.domain, inputs.problem)
    engine = Engine(tmp_path / "home")
    old = inputs.resolved().to_dict()  # what plansmith recorded before it kept digests

    async def record() -> None:
        config = load_servers(inputs.servers)
        bindings = load_bindings(inputs.bindings)
        await engine.run_plan(
            make_plan(problem), problem.domain, bindings, config, inputs=old, run_id="r-old"
        )

    with pytest.raises(ApprovalRequiredError):
        anyio.run(record)
    inputs.domain.write_text(inputs.domain.read_text() + "# edited\n")
    assert engine.changed_inputs("r-old") == ()
    engine.close()
    code, _, err = invoke("resume", "r-old", "--yes", *_home(tmp_path))
    assert code == 0, err
    assert _warnings(err) == []


def test_changed_inputs_gives_each_changed_or_gone_file_with_what_it_means(
    tmp_path: Path,
) -> None:
    from plansmith.engine import ChangedInput

    inputs = eh.write_inputs(tmp_path, n=1).resolved()
    run_id = _awaiting(tmp_path, inputs)
    engine = Engine(tmp_path / "home")
    assert engine.changed_inputs(run_id) == ()
    inputs.bindings.write_text(inputs.bindings.read_text() + "# edited\n")
    inputs.problem.unlink()
    changed = engine.changed_inputs(run_id)
    engine.close()
    assert [(c.kind, c.path, c.now is None) for c in changed] == [
        ("problem", inputs.problem, True),
        ("bindings", inputs.bindings, False),
    ]
    assert all(isinstance(c, ChangedInput) and c.recorded.startswith("sha256:") for c in changed)
    assert changed[0].meaning.startswith("it is gone")
    assert "a replan would use the file as it is now" in changed[1].meaning


def test_resume_of_a_run_whose_input_file_is_gone_is_a_typed_error_naming_it(
    tmp_path: Path,
) -> None:
    inputs = eh.write_inputs(tmp_path, n=1).resolved()
    run_id = _awaiting(tmp_path, inputs)
    inputs.domain.unlink()
    code, out, err = invoke("resume", run_id, "--yes", *_home(tmp_path))
    assert code == 2
    assert out == ""
    assert err.startswith(f"error: {inputs.domain}: ")
    assert "Traceback" not in err
    assert _warnings(err) == []  # the error says it; no "changed" besides
