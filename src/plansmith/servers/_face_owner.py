"""Which client session a call belongs to, and plansmith errors as typed tool errors."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from mcp.server.mcpserver.exceptions import ToolError

from plansmith.errors import PlansmithError

__all__ = ["owner_of", "tool_error", "SESSION_HEADER"]

SESSION_HEADER = "x-plansmith-session"


def owner_of(headers: Mapping[str, str] | None) -> str:
    """The owner of a call: its bearer token, its MCP session, or its plansmith session header.

    stdio and in-process connections have no headers: one client per server, ``local``.
    Over HTTP the 2025-11-25 era has an ``mcp-session-id``; the 2026-07-28 era has no
    session at all, so clients name theirs with an ``Authorization`` token or the
    ``X-Plansmith-Session`` header. A call with none of these is ``anonymous``.
    """
    if headers is None:
        return "local"
    lowered = {k.lower(): v for k, v in headers.items()}
    auth = lowered.get("authorization")
    if auth:
        return "token:" + hashlib.sha256(auth.encode()).hexdigest()[:16]
    session = lowered.get("mcp-session-id")
    if session:
        return "mcp-session:" + session
    named = lowered.get(SESSION_HEADER)
    if named:
        return "session:" + named
    return "anonymous"


def tool_error(error: PlansmithError) -> ToolError:
    """``ErrorType: message`` with its location and hint: what the host shows the user."""
    return ToolError(f"{type(error).__name__}: {error}")
