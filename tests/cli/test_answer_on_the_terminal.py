"""Ask steps from the CLI: with no terminal the run waits (exit 8) and ``plansmith
answer`` goes on with it; at a terminal (tmux) the question is asked at a prompt, a
refused answer is asked again with the schema's reason, and the run takes its branch."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from _ask_domain import work_calls, write_ask_inputs
from plansmith.engine import Engine
from plansmith.execution import AnswerRecorded, AwaitingAnswer, RunView

PLANSMITH = [sys.executable, "-m", "plansmith"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PLANSMITH, *args], capture_output=True, text=True, timeout=300, check=False
    )


def _files(inputs: object) -> list[str]:
    return [
        str(inputs.domain),  # type: ignore[attr-defined]
        str(inputs.problem),  # type: ignore[attr-defined]
        "--servers",
        str(inputs.servers),  # type: ignore[attr-defined]
        "--bindings",
        str(inputs.bindings),  # type: ignore[attr-defined]
    ]


def _log(home: Path, run_id: str) -> list[object]:
    engine = Engine(home)
    try:
        return list(engine.log.events(run_id))
    finally:
        engine.close()


def test_a_run_with_no_terminal_waits_and_plansmith_answer_goes_on_with_it(
    tmp_path: Path,
) -> None:
    inputs, calls = write_ask_inputs(tmp_path)
    home = tmp_path / "home"
    ran = _cli("run", *_files(inputs), "--yes", "--home", str(home))
    assert ran.returncode == 8, ran.stderr
    assert "wait for an answer" in ran.stderr
    assert "plansmith answer" in ran.stderr
    engine = Engine(home)
    try:
        run_id = engine.list()[0].run_id
    finally:
        engine.close()
    waiting = next(e for e in _log(home, run_id) if isinstance(e, AwaitingAnswer))

    listed = _cli("runs", "--home", str(home))
    assert "awaiting answer" in listed.stdout, listed.stdout + listed.stderr
    shown = _cli("show", run_id, "--home", str(home))
    assert f"step {waiting.step} (review) waits for an answer" in shown.stdout, shown.stdout
    assert f"plansmith answer {run_id} {waiting.step} VALUE (one of: as_is, redact)" in shown.stdout

    refused = _cli("answer", run_id, waiting.step, "shred", "--home", str(home))
    assert refused.returncode == 2
    assert "'shred' is not one of the choices" in refused.stderr
    assert "answer one of: as_is, redact" in refused.stderr
    assert RunView.fold(_log(home, run_id), run_id).state == "awaiting answer"  # type: ignore[arg-type]

    answered = _cli("answer", run_id, waiting.step, "redact", "--home", str(home))
    assert answered.returncode == 0, answered.stderr
    assert work_calls(calls) == ["summarise-doc1", "redact-doc1", "index-doc1-redact"]
    answer = next(e for e in _log(home, run_id) if isinstance(e, AnswerRecorded))
    assert answer.answer == "redact"
    assert answer.by.startswith("cli:")


def _pane(session: str) -> str:
    return subprocess.run(
        ["tmux", "capture-pane", "-p", "-J", "-S", "-200", "-t", session],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def _wait_for(session: str, text: str, after: int = 0) -> str:
    """The pane once ``text`` shows in it (after its first ``after`` occurrences)."""
    deadline = time.monotonic() + 120  # a guard against a hang, not a pace
    while time.monotonic() < deadline:
        pane = _pane(session)
        if pane.count(text) > after:
            return pane
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never showed in the terminal:\n{_pane(session)}")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_person_at_the_terminal_answers_the_question_and_the_run_takes_its_branch(
    tmp_path: Path,
) -> None:
    inputs, calls = write_ask_inputs(tmp_path)
    home = tmp_path / "home"
    session = f"plansmith-ask-{uuid.uuid4().hex[:8]}"
    command = shlex.join([*PLANSMITH, "run", *_files(inputs), "--yes", "--home", str(home)])
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "160"}
    subprocess.run(
        [
            "tmux",
            "new-session",
            "-d",
            "-s",
            session,
            "-x",
            "160",
            "-y",
            "50",
            f"{command}; echo EXIT=$?; sleep 3600",
        ],
        check=True,
        env=env,
    )
    try:
        pane = _wait_for(session, "answer>")
        assert "publish it as it is, or redact it first?" in pane
        assert "answer one of: as_is, redact [default: as_is]" in pane
        subprocess.run(["tmux", "send-keys", "-t", session, "shred", "Enter"], check=True)
        pane = _wait_for(session, "answer>", after=1)  # asked again, with the reason
        assert "'shred' is not one of the choices" in pane
        subprocess.run(["tmux", "send-keys", "-t", session, "redact", "Enter"], check=True)
        pane = _wait_for(session, "EXIT=")
        assert "EXIT=0" in pane, pane
        assert "run succeeded" in pane
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
    assert work_calls(calls) == ["summarise-doc1", "redact-doc1", "index-doc1-redact"]
    engine = Engine(home)
    try:
        run_id = engine.list()[0].run_id
        events = list(engine.log.events(run_id))
    finally:
        engine.close()
    answer = next(e for e in events if isinstance(e, AnswerRecorded))
    assert answer.answer == "redact"
    assert answer.by.startswith("cli:")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_at_the_terminal_the_bio_question_answered_top5_trims_the_homologues(
    tmp_path: Path,
) -> None:
    import json

    from plansmith.domains import bio
    from plansmith.execution import StepSucceeded

    tools = ("blastn", "mafft", "fasttree")
    missing = [t for t in tools if t not in bio.detect_tools()]
    if missing:
        pytest.skip(f"not installed: {missing}")
    data = {"gene": bio.DATA_DIR / "query.gb", "family": bio.DATA_DIR / "family.fasta"}
    home = tmp_path / "home"
    home.mkdir()
    problem = bio.write_problem(home / "problem.yaml", "reviewed family report", data)
    (home / "servers.json").write_text(json.dumps(bio.server_config(data, home)))
    words = [
        "run", str(bio.DOMAIN_DIR / "domain.yaml"), str(problem),
        "--servers", str(home / "servers.json"),
        "--bindings", str(bio.DOMAIN_DIR / "bindings.yaml"),
        "--yes", "--home", str(home),
    ]  # fmt: skip
    session = f"plansmith-bio-{uuid.uuid4().hex[:8]}"
    command = shlex.join([*PLANSMITH, *words])
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "160"}
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "50",
         f"{command}; echo EXIT=$?; sleep 3600"],
        check=True,
        env=env,
    )  # fmt: skip
    try:
        pane = _wait_for(session, "answer>")
        assert "Align every homologue, or only the top 5?" in pane
        assert "answer one of: all, top5 [default: all]" in pane
        subprocess.run(["tmux", "send-keys", "-t", session, "top5", "Enter"], check=True)
        pane = _wait_for(session, "EXIT=")
        assert "EXIT=0" in pane, pane
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
    engine = Engine(home)
    try:
        run_id = engine.list()[0].run_id
        events = list(engine.log.events(run_id))
    finally:
        engine.close()
    answer = next(e for e in events if isinstance(e, AnswerRecorded))
    assert answer.answer == "top5"
    done = [e.action for e in events if isinstance(e, StepSucceeded)]
    assert done.index("review_homologues") < done.index("keep_top_hits") < done.index("align_mafft")
