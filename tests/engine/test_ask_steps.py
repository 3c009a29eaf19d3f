"""Ask steps: a person decides inside a plan. With no face to ask, the run waits
(``awaiting answer``), survives its engine, and goes on once answered; an answer other
than the one the plan assumed is planned from; a declined question takes the default."""

from __future__ import annotations

from pathlib import Path

import pytest

from _ask_domain import work_calls, write_ask_inputs
from plansmith.engine import Engine
from plansmith.errors import AnswerError
from plansmith.execution import (
    AnswerRecorded,
    AskReply,
    AskRequest,
    AwaitingAnswer,
    Replanned,
    RunView,
    StepStarted,
    step_histories,
)
from plansmith.formats import load_domain


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _events(home: Path, run_id: str) -> list[object]:
    engine = Engine(home)
    try:
        return list(engine.log.events(run_id))
    finally:
        engine.close()


@pytest.mark.anyio
async def test_a_run_with_no_one_to_ask_waits_survives_its_engine_and_takes_the_answer_branch(
    tmp_path: Path,
) -> None:
    inputs, calls = write_ask_inputs(tmp_path)
    home = tmp_path / "home"
    engine = Engine(home)
    try:
        outcome = await engine.run(inputs, approve=True)
    finally:
        engine.close()
    assert outcome.state == "awaiting answer"
    run_id = outcome.run_id
    assert work_calls(calls) == ["summarise-doc1"]  # nothing after the ask ran
    events = _events(home, run_id)
    waiting = [e for e in events if isinstance(e, AwaitingAnswer)]
    assert len(waiting) == 1
    assert waiting[0].question.startswith("The summary of doc1 is ")  # rendered, with output
    assert waiting[0].answer == {"type": "enum", "choices": ["as_is", "redact"], "default": "as_is"}
    view = RunView.fold(events, run_id)
    assert view.state == "awaiting answer"
    assert view.to_dict()["awaiting_answer"][0]["step"] == waiting[0].step

    # a new engine (the first one is gone): a wrong answer is refused, the run waits on
    engine = Engine(home)
    try:
        with pytest.raises(AnswerError) as refused:
            engine.record_answer(run_id, waiting[0].step, "shred", by="cli:alice")
        assert "not one of the choices" in refused.value.message
        assert refused.value.hint == "answer one of: as_is, redact"
        assert RunView.fold(engine.log.events(run_id), run_id).state == "awaiting answer"
        outcome = await engine.answer(run_id, waiting[0].step, "redact", by="cli:alice")
    finally:
        engine.close()
    assert outcome.state == "succeeded", outcome.reason
    # the answer's branch: redact, then index with the answer; summarise not called again
    assert work_calls(calls) == ["summarise-doc1", "redact-doc1", "index-doc1-redact"]
    events = _events(home, run_id)
    answers = [e for e in events if isinstance(e, AnswerRecorded)]
    assert [(a.answer, a.by, a.declined) for a in answers] == [("redact", "cli:alice", "")]
    assert answers[0].time
    replans = [e for e in events if isinstance(e, Replanned)]
    assert len(replans) == 1
    assert replans[0].failed == ()
    assert "answered 'redact'" in replans[0].reason

    # a replay: the answer given from outside is the record's, between its two parts
    engine = Engine(home)
    try:
        replayed = await engine.replay(run_id)
    finally:
        engine.close()
    assert step_histories(replayed) == step_histories(events)


@pytest.mark.anyio
async def test_a_face_that_asks_gets_the_question_and_its_answer_is_recorded_with_who_gave_it(
    tmp_path: Path,
) -> None:
    inputs, calls = write_ask_inputs(tmp_path)
    asked: list[AskRequest] = []

    async def person(request: AskRequest) -> AskReply:
        asked.append(request)
        return AskReply("as_is", by="test:bob")

    engine = Engine(tmp_path / "home", asker=person)
    try:
        outcome = await engine.run(inputs, approve=True)
        events = list(engine.log.events(outcome.run_id))
    finally:
        engine.close()
    assert outcome.state == "succeeded", outcome.reason
    assert len(asked) == 1
    assert asked[0].schema.choices == ("as_is", "redact")
    assert asked[0].assumed == "as_is"
    assert asked[0].args == ("doc1",)
    # the assumed answer: the plan stands, no replan, no redaction
    assert work_calls(calls) == ["summarise-doc1", "index-doc1-as_is"]
    assert not [e for e in events if isinstance(e, Replanned)]
    answer = next(e for e in events if isinstance(e, AnswerRecorded))
    assert (answer.answer, answer.by) == ("as_is", "test:bob")


@pytest.mark.anyio
async def test_a_declined_question_takes_the_declared_default_and_is_logged_as_declined(
    tmp_path: Path,
) -> None:
    inputs, calls = write_ask_inputs(tmp_path)

    async def declines(request: AskRequest) -> AskReply:
        return AskReply(None, by="mcp:host", declined="declined")

    engine = Engine(tmp_path / "home", asker=declines)
    try:
        outcome = await engine.run(inputs, approve=True)
        events = list(engine.log.events(outcome.run_id))
    finally:
        engine.close()
    assert outcome.state == "succeeded", outcome.reason
    answer = next(e for e in events if isinstance(e, AnswerRecorded))
    assert (answer.answer, answer.by, answer.declined) == ("as_is", "mcp:host", "declined")
    assert work_calls(calls) == ["summarise-doc1", "index-doc1-as_is"]


@pytest.mark.anyio
async def test_a_cancelled_question_with_no_default_fails_the_run_with_the_reason(
    tmp_path: Path,
) -> None:
    inputs, calls = write_ask_inputs(tmp_path, default=None)

    async def cancels(request: AskRequest) -> AskReply:
        return AskReply(None, by="mcp:host", declined="cancelled")

    engine = Engine(tmp_path / "home", asker=cancels)
    try:
        outcome = await engine.run(inputs, approve=True)
        events = list(engine.log.events(outcome.run_id))
    finally:
        engine.close()
    assert outcome.state == "failed"
    assert outcome.reason is not None
    assert "the question was cancelled and review declares no default answer" in outcome.reason
    answer = next(e for e in events if isinstance(e, AnswerRecorded))
    assert (answer.answer, answer.declined) == (None, "cancelled")
    assert work_calls(calls) == ["summarise-doc1"]


@pytest.mark.anyio
async def test_a_replay_reproduces_an_answered_run_without_asking(tmp_path: Path) -> None:
    inputs, _ = write_ask_inputs(tmp_path)

    async def person(request: AskRequest) -> AskReply:
        return AskReply("redact", by="test:bob")

    home = tmp_path / "home"
    engine = Engine(home, asker=person)
    try:
        outcome = await engine.run(inputs, approve=True)
    finally:
        engine.close()
    assert outcome.state == "succeeded", outcome.reason

    async def nobody(request: AskRequest) -> AskReply:
        raise AssertionError("a replay asked")

    engine = Engine(home, asker=nobody)
    try:
        recorded = list(engine.log.events(outcome.run_id))
        replayed = await engine.replay(outcome.run_id)
    finally:
        engine.close()
    assert step_histories(replayed) == step_histories(recorded)
    answers = [e for e in replayed if isinstance(e, AnswerRecorded)]
    assert [(a.answer, a.by) for a in answers] == [("redact", "test:bob")]
    assert sum(isinstance(e, StepStarted) for e in replayed) == 4


def test_the_state_after_an_ask_has_the_effects_of_its_answer_not_the_assumed_one(
    tmp_path: Path,
) -> None:
    from plansmith.execution import current_state
    from plansmith.formats import load_problem
    from plansmith.model import Step

    inputs, _ = write_ask_inputs(tmp_path)
    problem = load_problem(inputs.problem, load_domain(inputs.domain))
    steps = [Step("s1", "summarise", ("doc1",)), Step("s2", "review", ("doc1",))]
    assumed = {str(a) for a in current_state(problem, steps)}
    answered = {str(a) for a in current_state(problem, steps, {"s2": "redact"})}
    assert "reviewed(doc1)" in assumed
    assert "redaction_wanted(doc1)" not in assumed
    assert "redaction_wanted(doc1)" in answered
    assert "reviewed(doc1)" not in answered


@pytest.mark.anyio
async def test_a_follow_up_starts_from_the_state_the_answer_made(tmp_path: Path) -> None:
    """The parent answered ``redact`` and failed at the redaction: its final state holds
    ``redaction_wanted`` (its answer's effect, not the assumed one's), so the follow-up
    redacts first, then indexes; the summary is not made again."""
    from plansmith.engine import RunInputs

    inputs, calls = write_ask_inputs(tmp_path)
    broken = tmp_path / "broken-bindings.yaml"
    text = inputs.bindings.read_text()
    broken.write_text(
        text.replace(
            'tool: work\n    arguments: {name: "redact-${d}"}', "tool: fail\n    arguments: {}"
        )
    )
    parent_inputs = RunInputs(inputs.domain, inputs.problem, inputs.servers, broken)

    async def person(request: AskRequest) -> AskReply:
        return AskReply("redact", by="test:bob")

    engine = Engine(tmp_path / "home", asker=person)
    try:
        parent = await engine.run(parent_inputs, approve=True)
        assert parent.state == "failed", parent.reason
        follow = await engine.run(inputs, approve=True, after=parent.run_id)
    finally:
        engine.close()
    assert follow.state == "succeeded", follow.reason
    assert work_calls(calls) == ["summarise-doc1", "redact-doc1", "index-doc1-redact"]
