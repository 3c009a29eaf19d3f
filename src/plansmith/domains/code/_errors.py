"""Structured tool errors: every refusal has a type, a code, a detail and a suggested fix.

Tools raise :class:`RefusedError` (the request is not allowed or malformed; an
:class:`~plansmith.errors.InputError`) or :class:`UnavailableError` (the server
cannot do it now: busy, timed out, a command failed to start; an
:class:`~plansmith.errors.ExecutionError`). Both carry a machine-readable
``code`` and whether a retry may help. :func:`error_result` turns any of them
into an ``isError`` MCP result whose ``structuredContent`` is::

    {"error": {"type": "refused", "code": "path_outside_sandbox",
               "detail": "...", "suggested_fix": "...", "retryable": false}}

and whose ``_meta`` carries ``io.plansmith/retryable`` (the executor's retry rule).
"""

from __future__ import annotations

import json
from typing import Any

from mcp.types import CallToolResult, TextContent

from plansmith.errors import ExecutionError, InputError, Location, PlansmithError

__all__ = ["RETRYABLE_META_KEY", "RefusedError", "UnavailableError", "error_result", "failure_of"]

# The same key the executor reads (plansmith.execution.RETRYABLE_META_KEY); repeated
# here so the server does not import the executor.
RETRYABLE_META_KEY = "io.plansmith/retryable"


class RefusedError(InputError):
    """The server refuses the request (outside the sandbox, above the tier, malformed)."""

    def __init__(
        self, code: str, detail: str, *, fix: str, path: str | None = None, retryable: bool = False
    ) -> None:
        super().__init__(detail, location=Location(path) if path else None, hint=fix)
        self.code = code
        self.retryable = retryable


class UnavailableError(ExecutionError):
    """The server cannot do it now (busy, timed out, the command did not start)."""

    def __init__(self, code: str, detail: str, *, fix: str, retryable: bool = True) -> None:
        super().__init__(detail, hint=fix)
        self.code = code
        self.retryable = retryable


def failure_of(error: BaseException) -> RefusedError | UnavailableError | None:
    """The structured error inside ``error`` (itself or a cause), if there is one."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, RefusedError | UnavailableError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _kind(error: PlansmithError) -> str:
    return "refused" if isinstance(error, RefusedError) else "unavailable"


def error_result(error: RefusedError | UnavailableError, **extra: Any) -> CallToolResult:
    """The ``isError`` result for ``error``, with its structured form."""
    body: dict[str, Any] = {
        "type": _kind(error),
        "code": error.code,
        "detail": error.message,
        "suggested_fix": error.hint or "",
        "retryable": error.retryable,
    }
    if error.location is not None and error.location.file is not None:
        body["path"] = error.location.file
    body.update(extra)
    structured = {"error": body}
    text = f"{body['type']} [{error.code}]: {error.message}"
    if error.hint:
        text += f" (fix: {error.hint})"
    return CallToolResult(
        content=[
            TextContent(type="text", text=text),
            TextContent(type="text", text=json.dumps(structured, sort_keys=True)),
        ],
        structured_content=structured,
        is_error=True,
        _meta={RETRYABLE_META_KEY: error.retryable},
    )
