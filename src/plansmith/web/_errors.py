"""Errors as HTTP answers: a typed JSON body with the message, location and hint.

Input errors are 422 (a missing run is 404), planning failures 422, a request the
run's state does not allow now 409, a server that does not start 424. Anything else
is a 500 with a short body and no traceback.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
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

__all__ = ["ErrorBody", "ErrorOut", "install_error_handlers", "status_for", "ERROR_RESPONSES"]


class ErrorBody(BaseModel):
    type: str
    message: str
    location: str | None = None
    hint: str | None = None
    details: list[Any] = []


class ErrorOut(BaseModel):
    error: ErrorBody


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (401, 404, 409, 422, 424)
}


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


def _body(kind: str, message: str, **more: Any) -> dict[str, Any]:
    return {"error": {"type": kind, "message": message, **more}}


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers that turn every error into a JSON body (see the docstring)."""

    async def plansmith_error(_: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, PlansmithError)
        location = str(error.location) if error.location else None
        problems = [str(p) for p in getattr(error, "problems", ())]
        body = _body(
            type(error).__name__,
            error.message,
            location=location,
            hint=error.hint,
            details=problems,
        )
        return JSONResponse(body, status_code=status_for(error))

    async def invalid_request(_: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RequestValidationError)
        details = [
            {"loc": [str(x) for x in e.get("loc", ())], "msg": str(e.get("msg", ""))}
            for e in error.errors()
        ]
        first = details[0] if details else {"loc": [], "msg": "invalid request"}
        message = f"{'.'.join(first['loc'])}: {first['msg']}"
        return JSONResponse(
            _body("RequestValidationError", message, details=details), status_code=422
        )

    async def http_error(_: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, HTTPException)
        return JSONResponse(
            _body("HTTPError", str(error.detail)),
            status_code=error.status_code,
            headers=getattr(error, "headers", None),
        )

    async def internal_error(_: Request, error: Exception) -> JSONResponse:
        return JSONResponse(
            _body("InternalError", f"internal error: {type(error).__name__}"), status_code=500
        )

    app.add_exception_handler(PlansmithError, plansmith_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, internal_error)
