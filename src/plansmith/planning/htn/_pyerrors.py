"""Errors raised by, or about, the functions of a Python-function domain."""

from __future__ import annotations

from types import TracebackType

from plansmith.errors import DomainError, Location
from plansmith.model import PyCallable

__all__ = ["function_location", "function_name", "code_error", "domain_error"]


def function_name(fn: PyCallable) -> str:
    return str(getattr(fn, "__name__", None) or type(fn).__name__)


def function_location(fn: PyCallable) -> Location | None:
    """Where ``fn`` is defined (file and first line), if it is Python code."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    return Location(code.co_filename, code.co_firstlineno)


def _raise_site(fn: PyCallable, trace: TracebackType | None) -> Location | None:
    """The deepest line of the traceback in ``fn``'s file (else its definition)."""
    code = getattr(fn, "__code__", None)
    found: Location | None = None
    while trace is not None:
        frame_code = trace.tb_frame.f_code
        if code is not None and frame_code.co_filename == code.co_filename:
            found = Location(frame_code.co_filename, trace.tb_lineno)
        trace = trace.tb_next
    return found or function_location(fn)


def code_error(fn: PyCallable, role: str, error: BaseException) -> DomainError:
    """A DomainError for an exception raised inside the domain function ``fn``."""
    out = DomainError(
        f"{role} {function_name(fn)} raised {type(error).__name__}: {error}",
        location=_raise_site(fn, error.__traceback__),
        hint=f"fix the {role}; plansmith calls it exactly as GTPyhop does",
    )
    out.__cause__ = error
    return out


def domain_error(fn: PyCallable | None, message: str, hint: str) -> DomainError:
    """A DomainError located at the definition of ``fn`` (when there is one)."""
    location = function_location(fn) if fn is not None else None
    return DomainError(message, location=location, hint=hint)
