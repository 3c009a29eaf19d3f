"""Ask steps through the face: ``await_run`` asks the host's user, ``answer_question``
takes an answer from any host.

A run the face drives has no one to ask in-process: when it reaches an ask step, its
drive stops and the run waits (``awaiting answer``; ``get_run_status``, ``list_runs``
and the run's resources show the questions, each with its answer schema).

``await_run(run_id)`` waits until the run is driven no more (finished, or waiting for
an answer). When a question waits and the host supports MCP form elicitation, it asks
the host's user that question, with a schema of one property, ``answer`` (the
question's answer schema as JSON Schema), records the answer (``by`` ``mcp:`` and the
client's name) and lets the run go on, then waits again. The asking is a resolver
returning ``Elicit``, so it works in both protocol eras: on a 2026-07-28 connection the
call returns an ``InputRequiredResult`` and the client calls again with the answer
(``Client.call_tool`` does it), on a 2025-11-25 one the server sends
``elicitation/create`` in the call. A user who declines (or cancels) is recorded so:
the step takes the domain's default answer, or fails saying there is none. One
question is asked per call; the result lists those still waiting.

``answer_question(run_id, step, answer)`` needs no elicitation: an answer outside the
question's schema is a tool error with the schema's reason, and the run keeps waiting.
"""

# No `from __future__ import annotations`: the SDK evaluates the closures' annotations.

from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import (
    AcceptedElicitation,
    CancelledElicitation,
    Context,
    DeclinedElicitation,
    Elicit,
    MCPServer,
    Resolve,
)
from pydantic import BaseModel, Field, create_model

from plansmith.errors import PlansmithError
from plansmith.mcp._hints import acts
from plansmith.mcp._owner import Owners, tool_error
from plansmith.mcp._service import Declined, FaceService
from plansmith.mcp._types import Question, RunStatus

__all__ = ["add_ask_tools", "answer_model", "can_elicit", "elicit_message"]

T = TypeVar("T")
Outcome = AcceptedElicitation[Any] | DeclinedElicitation | CancelledElicitation
MAX_WAIT = 3600.0  # seconds one await_run call may wait for its run
_ELICITED_HINT = (
    "the host cannot ask its user (no MCP elicitation): ask the user yourself, then call"
    " answer_question(run_id, step, answer)"
)


async def _guard(work: Callable[[], Awaitable[T]]) -> T:
    try:
        return await work()
    except PlansmithError as error:
        raise tool_error(error) from None


def can_elicit(ctx: Context) -> bool:
    """Whether the client declared form elicitation (a bare ``elicitation: {}`` counts)."""
    caps = ctx.client_capabilities
    elicitation = caps.elicitation if caps is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def answer_model(schema: Mapping[str, Any]) -> type[BaseModel]:
    """The elicitation's form: one property, ``answer``, the question's answer schema
    (``schema``: a JSON Schema property, as ``plansmith.model.answer_json_schema``
    gives it), with its default if it has one."""
    kind: Any = {"boolean": bool, "integer": int, "number": float}.get(str(schema.get("type")), str)
    if schema.get("enum"):
        kind = Literal.__getitem__(tuple(str(c) for c in schema["enum"]))
    names = {
        "minimum": "ge",
        "maximum": "le",
        "minLength": "min_length",
        "maxLength": "max_length",
        "pattern": "pattern",
    }
    given = {names[k]: v for k, v in schema.items() if k in names and v is not None}
    default = schema.get("default")
    field: Any = Field(default=default, **given) if default is not None else Field(**given)
    model: type[BaseModel] = create_model("Answer", answer=(kind, field))
    return model


def elicit_message(run_id: str, question: Question) -> str:
    """What the host shows its user: the question, and where it comes from."""
    return (
        f"{question.question}\n\n(plansmith run {run_id}, step {question.step}:"
        f" answer {question.expects})"
    )


def add_ask_tools(
    server: MCPServer,
    service: FaceService,
    owners: Owners,
    follow: Callable[[str], None] = lambda _: None,
) -> None:
    """``await_run`` and ``answer_question`` on ``server`` (see the module docstring);
    ``follow(run_id)``: the run goes on, its updates are to be published."""

    def owner(ctx: Context) -> str:
        return owners.owner(ctx.headers, ctx.protocol_version)

    def person(ctx: Context) -> str:
        """Who answers, as the run log names them: ``mcp:`` and the client's name (its
        owner when it gives none)."""
        params = ctx.session.client_params
        name = params.client_info.name if params is not None else ""
        return f"mcp:{name or owners.label(ctx.headers, ctx.protocol_version)}"

    async def waiting_question(run_id: str, wait_seconds: float, ctx: Context) -> Question | None:
        """Once the run is driven no more: the first question it waits on, if any."""

        async def moved(status: RunStatus) -> None:
            await ctx.report_progress(status.done, status.total or None, message=status.state)

        wait = min(max(wait_seconds, 0.0), MAX_WAIT)
        status = await _guard(
            lambda: service.settle(run_id, owner=owner(ctx), wait=wait, moved=moved)
        )
        if status.state != "awaiting answer" or not status.questions:
            return None
        return status.questions[0]

    async def elicit_answer(
        run_id: str,
        asked: Annotated[Question | None, Resolve(waiting_question)],
        ctx: Context,
    ) -> Elicit[Any] | None:
        if asked is None or not can_elicit(ctx):
            return None
        return Elicit(elicit_message(run_id, asked), answer_model(asked.schema))

    @server.tool(
        **acts(
            "Wait for a run, asking its questions",
            destructive=True,
            idempotent=False,
            open_world=True,
        )
    )
    async def await_run(
        run_id: str,
        ctx: Context,
        asked: Annotated[Question | None, Resolve(waiting_question)],
        reply: Annotated[Outcome, Resolve(elicit_answer)],
        wait_seconds: float = 120.0,
    ) -> RunStatus:
        """Wait (at most ``wait_seconds``) until the run finishes or waits for a
        person's answer; a question it waits on is asked of the user through MCP
        elicitation when the host supports it, and the run goes on with the answer
        (declined: the question's default answer, if it has one). Returns the run's
        status: ``awaiting answer`` lists the questions still waiting (call again, or
        answer_question); ``running`` when the wait ran out (call again)."""

        async def work() -> RunStatus:
            who = owner(ctx)
            wait = min(max(wait_seconds, 0.0), MAX_WAIT)
            if asked is None or (isinstance(reply, AcceptedElicitation) and reply.data is None):
                status = service.get_run_status(run_id, owner=who)
                if status.state == "awaiting answer" and not can_elicit(ctx):
                    return _with_hint(status, _ELICITED_HINT)
                return status
            follow(run_id)
            status = service.get_run_status(run_id, owner=who)
            if asked.step not in {q.step for q in status.questions}:  # answered meanwhile
                return await service.settle(run_id, owner=who, wait=wait)
            if isinstance(reply, AcceptedElicitation):
                await service.answer(
                    run_id, asked.step, reply.data.answer, owner=who, by=person(ctx)
                )
            else:
                declined: Declined = (
                    "declined" if isinstance(reply, DeclinedElicitation) else "cancelled"
                )
                await service.decline(run_id, asked.step, declined, owner=who, by=person(ctx))
            return await service.settle(run_id, owner=who, wait=wait)

        return await _guard(work)

    @server.tool(
        **acts("Answer a run's question", destructive=True, idempotent=False, open_world=True)
    )
    async def answer_question(
        run_id: str, step: str, answer: str | bool | int | float, ctx: Context
    ) -> RunStatus:
        """Answer the question ask step ``step`` of a run waits on (``get_run_status``
        lists them, each with its answer schema); the run goes on. A text answer is read
        by the schema's type (``yes``, ``12``). An answer the schema does not allow is
        refused with the reason, and the run keeps waiting."""

        async def work() -> RunStatus:
            status = await service.answer(
                run_id,
                step,
                answer,
                owner=owner(ctx),
                by=person(ctx),
                as_text=isinstance(answer, str),
            )
            follow(run_id)
            return status

        return await _guard(work)


def _with_hint(status: RunStatus, hint: str) -> RunStatus:
    return RunStatus(**{**vars(status), "hint": hint})
