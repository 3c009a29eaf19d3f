"""The CLI's error boundary: a message and an exit code; an internal error also the
traceback of its cause."""

from __future__ import annotations

import pytest
import typer

from plansmith.cli._app import fail
from plansmith.errors import ExecutionError


def _raised(error: ExecutionError, cause: BaseException | None) -> ExecutionError:
    try:
        try:
            if cause is not None:
                raise cause
        except BaseException as inner:
            raise error from inner
        raise error
    except ExecutionError as caught:
        return caught


def test_an_internal_error_is_printed_with_its_cause_s_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    error = _raised(ExecutionError("internal error: KeyError: 'x'"), KeyError("x"))
    with pytest.raises(typer.Exit) as exited:
        fail(error)
    err = capsys.readouterr().err
    assert exited.value.exit_code == error.exit_code
    assert err.startswith("error: internal error: KeyError: 'x'\n")
    assert "Traceback (most recent call last)" in err
    assert "in _raised" in err


def test_an_input_error_is_printed_without_a_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    error = _raised(ExecutionError("cannot write the run log: disk full"), OSError(28, "full"))
    with pytest.raises(typer.Exit):
        fail(error)
    assert "Traceback" not in capsys.readouterr().err


def test_an_error_quoting_a_server_s_escape_codes_prints_them_escaped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    error = ExecutionError("server 'x' said: \x1b[2J\x1b[32mall good\x1b[0m")
    with pytest.raises(typer.Exit):
        fail(error)
    err = capsys.readouterr().err
    assert "\x1b" not in err
    assert "server 'x' said: \\x1b[2J\\x1b[32mall good" in err
