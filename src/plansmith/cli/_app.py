"""The Typer application and the error boundary shared by every command."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Annotated, NoReturn, ParamSpec, TypeVar

import typer

from plansmith.errors import PlansmithError

__all__ = ["app", "exit_code", "fail", "guarded"]

app = typer.Typer(
    name="plansmith",
    help="Plan first, then act: an MCP-native planning and orchestration engine.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",  # a docstring's lines join into one paragraph
)


def _print_version(value: bool) -> None:
    if value:
        from plansmith.cli import version_line

        typer.echo(version_line())
        raise typer.Exit


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print plansmith's version and exit.",
            is_eager=True,
            callback=_print_version,
        ),
    ] = False,
) -> None:
    """Plan first, then act: an MCP-native planning and orchestration engine."""


P = ParamSpec("P")
R = TypeVar("R")


def exit_code(error: PlansmithError) -> int:
    """The exit code of ``error``: its class's (``plansmith.errors``)."""
    return error.exit_code


_ERROR_TEXT = 20_000  # characters of an error's text printed (a listing of 20 problems fits)
_ERROR_LINES = 200


def fail(error: PlansmithError) -> NoReturn:
    """Print ``error`` (location, message, hint) on stderr and exit with its code; an
    internal error (a fault of plansmith's code, not of the input) with the traceback of
    its cause, for a bug report."""
    from plansmith.cli._printable import printable

    # a message may quote what a server or tool wrote (its stderr, a replan's reason):
    # shown escaped and bounded, as the live view shows it
    sys.stderr.write(f"error: {printable(str(error), _ERROR_TEXT, lines=_ERROR_LINES)}\n")
    cause = error.__cause__
    if error.message.startswith("internal error") and cause is not None:
        import traceback

        sys.stderr.write("".join(traceback.format_exception(cause)))
    raise typer.Exit(exit_code(error))


def guarded(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn plansmith errors raised by a command into a message and an exit code."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except PlansmithError as error:
            fail(error)

    return wrapper
