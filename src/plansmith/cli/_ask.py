"""Asking on the terminal: an ask step's question, answered at a prompt.

``plansmith run`` (and resume, retry, approve, answer) asks here when its standard input
is a terminal and its output is not ``--json``: the live progress pauses, the question
shows with what the answer may be, and a typed answer is checked against the schema
(asked again, with the schema's reason, when it is refused). An empty line takes the
default, when the domain declares one; end of input (Ctrl-D) declines the question.
Elsewhere the run waits (``awaiting answer``) for ``plansmith answer``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import anyio
from rich.console import Console
from rich.markup import escape

from plansmith.cli._person import cli_person
from plansmith.errors import AnswerError
from plansmith.execution import Asker, AskReply, AskRequest
from plansmith.model import answer_from_text

__all__ = ["terminal_asker", "can_ask_here"]


def can_ask_here() -> bool:
    """Whether a person can answer at this terminal (stdin and stderr are terminals)."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def terminal_asker(
    console: Console,
    pause: Callable[[], None] = lambda: None,
    go_on: Callable[[], None] = lambda: None,
) -> Asker:
    """An asker that prompts on ``console`` (``pause`` and ``go_on`` stop and restart
    the live progress around the prompt)."""

    def prompt(request: AskRequest) -> AskReply:
        schema = request.schema
        default = "" if schema.default is None else f" [default: {schema.default}]"
        console.print(
            f"[bold]question[/] from step {escape(request.step)}"
            f" {escape(request.action)}({escape(', '.join(map(str, request.args)))}):"
        )
        console.print(f"  {escape(request.question)}")
        console.print(f"  answer {escape(schema.describe())}{escape(default)}")
        while True:
            try:
                text = console.input("answer> ")
            except EOFError:
                console.print("no answer: the question is declined")
                return AskReply(None, by=cli_person(), declined="declined")
            if not text.strip() and schema.default is not None:
                return AskReply(schema.default, by=cli_person())
            try:
                value = answer_from_text(schema, text)
            except AnswerError as error:
                console.print(f"[red]{escape(error.message)}[/]: {escape(error.hint or '')}")
                continue
            return AskReply(value, by=cli_person())

    async def ask(request: AskRequest) -> AskReply:
        pause()
        try:
            return await anyio.to_thread.run_sync(prompt, request, abandon_on_cancel=True)
        finally:
            go_on()

    return ask
