"""How a run asks a person: the request a face gets for an ask step, and its reply.

A face that can ask (the terminal, MCP elicitation) gives the runner an ``Asker``: an
async function from an ``AskRequest`` to an ``AskReply``, or None when it cannot ask
now. With no asker, or None, the run waits in ``awaiting answer`` (its engine returns)
until ``Engine.answer`` records one; a face that shows forms (the web) answers so.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from plansmith.model import AnswerSchema, AnswerValue, JSONValue, StepArg

__all__ = ["AskRequest", "AskReply", "Asker"]


@dataclass(frozen=True, slots=True)
class AskRequest:
    """Ask step ``step`` (``action(args)``) of run ``run_id``: its rendered ``question``,
    the answer ``schema``, and the answer the plan ``assumed``."""

    run_id: str
    step: str
    action: str
    args: tuple[StepArg, ...]
    question: str
    schema: AnswerSchema
    assumed: JSONValue = None


@dataclass(frozen=True, slots=True)
class AskReply:
    """A person's ``answer`` (checked against the schema by the runner), ``by`` whom (as
    the face names them: ``cli:alice``, ``mcp:HOST``), or ``declined``: ``declined`` or
    ``cancelled`` when they would not answer (the domain's default is taken then, if it
    has one)."""

    answer: AnswerValue | None
    by: str = ""
    declined: str = ""


Asker = Callable[[AskRequest], Awaitable[AskReply | None]]
