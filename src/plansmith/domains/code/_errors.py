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

import errno
import json
from typing import Any

from mcp.types import CallToolResult, TextContent

from plansmith.errors import ExecutionError, InputError, Location, PlansmithError

__all__ = [
    "RETRYABLE_META_KEY",
    "RefusedError",
    "UnavailableError",
    "error_result",
    "failure_of",
    "os_failure",
]

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


#: what the file system's refusals mean to a caller: errno -> (code, what, fix)
_OS_REFUSALS: dict[int, tuple[str, str, str]] = {
    errno.ELOOP: (
        "symlink_loop",
        "too many levels of symbolic links (a link that leads back to itself)",
        "name a real file or folder, not a link loop; list_directory shows the links",
    ),
    errno.ENOENT: (
        "not_found",
        "no such file or folder (it may have been removed while the call ran)",
        "list_directory shows what exists now; retry if it was being rewritten",
    ),
    errno.ENOTDIR: (
        "not_a_directory",
        "a part of the path is not a folder (it may have been replaced while the call ran)",
        "list_directory shows what exists now",
    ),
    errno.EISDIR: ("not_a_file", "it is a directory", "name a file"),
    errno.EACCES: ("permission_denied", "permission denied", "pick another file"),
    errno.EPERM: ("permission_denied", "operation not permitted", "pick another file"),
    errno.EROFS: ("permission_denied", "the file system is read-only", "pick another file"),
    errno.ENAMETOOLONG: ("name_too_long", "the name is too long", "use a shorter path"),
}

_OS_UNAVAILABLE = {errno.ENOSPC: "no space left on the device", errno.EDQUOT: "disk quota exceeded"}


def os_failure(error: OSError, path: str | None = None) -> RefusedError | UnavailableError | None:
    """The typed error for a file system error the caller can act on (a link loop, a
    path that vanished or changed while the call ran, no permission, a full disk), or
    None for any other ``OSError`` (a fault of the server). ``path`` names the file in
    the caller's terms (the OS's own name may be a temporary file or a descriptor's)."""
    number = error.errno
    if number in _OS_UNAVAILABLE:
        return UnavailableError(
            "disk_full",
            f"cannot write {path or 'the file'}: {_OS_UNAVAILABLE[number]}",
            fix="free some space on the server, then retry",
        )
    if number is None or number not in _OS_REFUSALS:
        return None
    code, what, fix = _OS_REFUSALS[number]
    return RefusedError(code, f"{path}: {what}" if path else what, fix=fix, path=path)


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
