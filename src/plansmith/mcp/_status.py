"""A run's status as the MCP face shows it: one fold of its log (the table's
``RunView``), and how its drive ended in this process when it ended without a
``RunFinished`` (it could not start); the questions its ask steps wait on."""

from __future__ import annotations

from plansmith.engine import RunHandle, plan_progress
from plansmith.execution import RunView, StepState
from plansmith.mcp._types import Question, RunStatus
from plansmith.model import answer_json_schema, answer_schema_from_json

__all__ = ["run_status", "questions_of", "ANSWER_HINT"]

#: how a host answers a run that waits for one (``RunStatus.hint``)
ANSWER_HINT = (
    "the run waits for a person: ask the user, then call answer_question(run_id, step,"
    " answer) with an answer the question's schema allows; or call await_run(run_id),"
    " which asks the user itself when the host supports MCP elicitation"
)


def questions_of(view: RunView) -> tuple[Question, ...]:
    """The ask steps of the run that wait for an answer, in the order they asked."""
    questions = []
    for waiting in view.run.awaiting_answer.values():
        schema = answer_schema_from_json(waiting.answer)
        assumed = waiting.assumed
        questions.append(
            Question(
                waiting.step,
                waiting.action,
                waiting.question,
                answer_json_schema(schema),
                schema.describe(),
                assumed if isinstance(assumed, str | bool | int | float) else None,
                waiting.time,
            )
        )
    return tuple(questions)


def _state(
    view: RunView, handle: RunHandle | None, elsewhere: bool, ended: BaseException | None
) -> str:
    """``starting`` (being driven here or by its own process, not running yet),
    ``awaiting approval`` or ``approved`` (made, held), ``running``, ``awaiting
    answer`` (its drive stopped at ask steps), how it finished, or ``failed`` when its
    drive here ended short of that (``ended``: why)."""
    if view.finished is not None:
        return view.finished
    if handle is None and ended is not None:
        return "failed"
    if handle is None and view.run.awaiting_answer:
        return "awaiting answer"
    if view.started is not None:
        return "running"
    if handle is not None or (elsewhere and view.state == "approved"):
        return "starting"
    return view.state


def run_status(
    view: RunView,
    handle: RunHandle | None,
    *,
    elsewhere: bool = False,
    ended: BaseException | None = None,
) -> RunStatus:
    """State, progress, steps in flight, failures and replans, from the view; ``handle``:
    the run's drive in this process, if any; ``elsewhere``: a process of its own was
    started to drive it (``--detach-runs``); ``ended``: why its last drive here ended
    before the run finished (``RunTable.last_error``)."""
    done, total = plan_progress(view)
    state = _state(view, handle, elsewhere, ended)
    error = view.reason if view.finished == "failed" else None
    if state == "cancelled":
        error = f"cancelled: {view.reason or 'no reason recorded'}"
    if error is None and view.finished is None and ended is not None:
        error = f"{type(ended).__name__}: {ended}"
    return RunStatus(
        view.run_id,
        view.plan_hash or "",
        state,
        done,
        total,
        round(100.0 * done / total, 1) if total else (100.0 if state == "succeeded" else 0.0),
        in_flight=() if view.finished is not None else view.in_flight,
        failures=tuple(s.id for s in view.steps.values() if s.state is StepState.FAILED),
        replans=len(view.replans),
        error=error,
        questions=() if view.finished is not None else questions_of(view),
        hint=ANSWER_HINT if state == "awaiting answer" else None,
    )
