"""Errors as HTTP answers: a typed JSON body with the message, location and hint.

Every error body is built by ``error_response``, so it always has the five keys
``type``, ``message``, ``location``, ``hint`` and ``details`` (null or empty where
there is nothing to say). Input errors are 422 (a missing run is 404), planning
failures 422, a request the run's state does not allow now 409, a server that does not
start 424, a missing token 401 (and a foreign ``Host`` 400, see ``_hosts``; a
cross-site state-changing request 403 and one not sent as JSON 415, see
``_same_origin``, raised as ``RequestRefusedError``). Anything
else is a 500 with a short body and no traceback.

A request for a page (any path outside ``/api/``) gets the same error as an HTML page
instead, with the same status, so a browser shows it readably; ``/api/*`` is always JSON.
Where the API's answer points to its schema (an unknown path, a method it does not take,
a bad request), the page's answer points a person to the pages instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from plansmith.errors import (
    ApprovalRequiredError,
    ExecutionError,
    InputError,
    PlanningError,
    PlansmithError,
    RunNotFoundError,
    ServerStartError,
)
from plansmith.web._html import html_page

__all__ = [
    "ErrorBody",
    "ErrorOut",
    "RequestRefusedError",
    "error_response",
    "is_page_request",
    "install_error_handlers",
    "status_for",
    "ERROR_RESPONSES",
]

#: where the API's request schemas are (the hint of a bad request or an unknown path)
_SCHEMA_HINT = "the API's operations and their request schemas are in /openapi.json"

#: the same hint for a person in a browser: the pages there are (``_pages``)
_PAGES_HINT = (
    "the pages are / (the domains and their problems), /runs (the runs),"
    " /plan?domain=D&problem=P (the plan of a problem), and for a run"
    " /runs/RUN_ID (the run live), /runs/RUN_ID/plan and /runs/RUN_ID/report"
)

#: what to say about the HTTP errors of the app and of routing: (location, hint)
_HTTP_ERRORS: dict[int, tuple[str | None, str | None]] = {
    401: (
        "header.authorization",
        "send the server's token (plansmith serve --token T) as the header "
        "`Authorization: Bearer T`; the event stream also takes it as `?token=T`",
    ),
    404: (None, _SCHEMA_HINT),
    405: (None, _SCHEMA_HINT),
}


class ErrorBody(BaseModel):
    """One error: every key is always there (null or empty when there is nothing)."""

    type: str
    message: str
    location: str | None
    hint: str | None
    details: list[Any]


class ErrorOut(BaseModel):
    error: ErrorBody


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 404, 409, 415, 422, 424)
}


class RequestRefusedError(Exception):
    """A request the app refuses before its operation runs, answered with ``status``
    and the usual error body (``kind`` is its ``type``)."""

    def __init__(
        self,
        status: int,
        kind: str,
        message: str,
        *,
        location: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.location = location
        self.hint = hint


def status_for(error: PlansmithError) -> int:
    if isinstance(error, RunNotFoundError):
        return 404
    if isinstance(error, ServerStartError):
        return 424
    if isinstance(error, ApprovalRequiredError | ExecutionError):
        return 409
    if isinstance(error, InputError | PlanningError):
        return 422
    return 409


def is_page_request(request: Request | None) -> bool:
    """Whether an error answers a page (HTML) rather than the API (JSON)."""
    return request is not None and not request.url.path.startswith(("/api/", "/openapi.json"))


def error_response(
    status: int,
    kind: str,
    message: str,
    *,
    location: str | None = None,
    hint: str | None = None,
    details: Sequence[Any] = (),
    headers: Mapping[str, str] | None = None,
    request: Request | None = None,
) -> Response:
    """The one builder of error answers: ``{"error": {type, message, location, hint,
    details}}`` with ``status``; for a page ``request``, the same as an HTML page (whose
    hint names the pages where the API's names its schema)."""
    page = is_page_request(request)
    if page and hint == _SCHEMA_HINT:
        hint = _PAGES_HINT
    error = ErrorBody(
        type=kind, message=message, location=location, hint=hint, details=list(details)
    )
    if page:
        return _error_page(status, error, headers)
    return JSONResponse(ErrorOut(error=error).model_dump(), status_code=status, headers=headers)


def _error_page(status: int, error: ErrorBody, headers: Mapping[str, str] | None) -> Response:
    rows = [("error", f"{error.type} (HTTP {status})"), ("message", error.message)]
    rows += [(k, v) for k, v in (("where", error.location), ("hint", error.hint)) if v]
    items = "".join(f"<dt>{k}</dt><dd>{escape(v)}</dd>" for k, v in rows)
    body = (
        f"<h1>{escape(error.type)}</h1>"
        f'<p class="message" role="alert">{escape(error.message)}</p>'
        f'<dl class="detail">{items}</dl><p><a href="/">back to the domains</a></p>'
    )
    return html_page(error.type, body, status=status, headers=dict(headers or {}))


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers that turn every error into a JSON body (or, for a page, an
    HTML page; see the docstring)."""

    async def plansmith_error(request: Request, error: Exception) -> Response:
        assert isinstance(error, PlansmithError)
        return error_response(
            status_for(error),
            type(error).__name__,
            error.message,
            location=str(error.location) if error.location else None,
            hint=error.hint,
            details=[str(p) for p in getattr(error, "problems", ())],
            request=request,
        )

    async def invalid_request(request: Request, error: Exception) -> Response:
        assert isinstance(error, RequestValidationError)
        details = [
            {"loc": [str(x) for x in e.get("loc", ())], "msg": str(e.get("msg", ""))}
            for e in error.errors()
        ]
        first = details[0] if details else {"loc": [], "msg": "invalid request"}
        location = ".".join(first["loc"]) or None
        return error_response(
            422,
            "RequestValidationError",
            f"{location or 'request'}: {first['msg']}",
            location=location,
            hint=_SCHEMA_HINT,
            details=details,
            request=request,
        )

    async def http_error(request: Request, error: Exception) -> Response:
        assert isinstance(error, HTTPException)
        location, hint = _HTTP_ERRORS.get(error.status_code, (None, None))
        return error_response(
            error.status_code,
            "HTTPError",
            str(error.detail),
            location=location,
            hint=hint,
            headers=getattr(error, "headers", None),
            request=request,
        )

    async def refused(request: Request, error: Exception) -> Response:
        assert isinstance(error, RequestRefusedError)
        return error_response(
            error.status,
            error.kind,
            error.message,
            location=error.location,
            hint=error.hint,
            request=request,
        )

    async def internal_error(request: Request, error: Exception) -> Response:
        return error_response(
            500,
            "InternalError",
            f"internal error: {type(error).__name__}",
            hint="the server's log has the traceback",
            request=request,
        )

    app.add_exception_handler(PlansmithError, plansmith_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(RequestRefusedError, refused)
    app.add_exception_handler(Exception, internal_error)
