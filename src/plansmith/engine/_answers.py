"""Answers to ask steps given from outside a run: ``plansmith answer``, the web form.

A run whose ask step found no face to ask waits (``awaiting answer``; its engine
returned). ``record_answer`` checks the answer against the step's schema (an
``AnswerError`` with the schema's reason leaves the run waiting, nothing recorded) and
records ``AnswerRecorded`` under the run's lease; the run then goes on when it is next
resumed (``Engine.answer`` does both).
"""

from __future__ import annotations

from plansmith.errors import AnswerError, ExecutionError, Location
from plansmith.execution import (
    AnswerRecorded,
    Emitter,
    RunLog,
    fold,
)
from plansmith.model import JSONValue, answer_from_text, answer_schema_from_json, check_answer

__all__ = ["record_answer"]


def record_answer(
    log: RunLog,
    run_id: str,
    step: str,
    value: JSONValue,
    *,
    by: str,
    as_text: bool = False,
) -> JSONValue:
    """Record ``value`` (``as_text``: typed text, read by the schema's type) as the answer
    to ask step ``step`` of ``run_id``; the checked answer. The caller holds the lease."""
    state = fold(run_id, log.events(run_id))
    if state.finished is not None:
        raise ExecutionError(
            f"run {run_id} has finished ({state.finished}): it waits for no answer",
            hint="make a new run to ask again",
        )
    waiting = state.awaiting_answer.get(step)
    if waiting is None:
        steps = ", ".join(state.awaiting_answer) or "none"
        raise AnswerError(
            f"step {step!r} of run {run_id} does not wait for an answer",
            location=Location(argument="step"),
            hint=f"the steps of run {run_id} that wait for one: {steps}",
        )
    schema = answer_schema_from_json(waiting.answer)
    where = f"the answer to step {step} ({waiting.question})"
    if as_text and isinstance(value, str):
        checked = answer_from_text(schema, value, where=where)
    else:
        checked = check_answer(schema, value, where=where)
    Emitter(log, run_id, last_seq=state.last_seq).emit(
        AnswerRecorded(run_id=run_id, step=step, answer=checked, by=by)
    )
    return checked
