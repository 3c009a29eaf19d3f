"""The gate every tool call passes, in this order, before and after the tool body runs.

1. the session (its worktree is created on the first call; an expired one is refused);
2. an audit record of the call (arguments redacted);
3. the tool must exist and its tier must be within the server's tier;
4. the arguments must satisfy the tool's JSON Schema (no unknown properties);
5. an idempotency key in ``_meta`` replays the first result of that key;
6. a backpressure slot must be free, else ``busy`` at once;
7. the body runs under its timeout class (fast, medium, slow);
8. any failure becomes a structured ``isError`` result;
9. every string of the result is redacted, and the outcome is audited.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any

import anyio
import jsonschema
from mcp.types import CallToolResult, TextContent

from plansmith.domains.code._audit import AuditLog
from plansmith.domains.code._backpressure import Backpressure
from plansmith.domains.code._config import ServerConfig
from plansmith.domains.code._errors import (
    RefusedError,
    UnavailableError,
    error_result,
    failure_of,
    os_failure,
)
from plansmith.domains.code._idempotency import key_of
from plansmith.domains.code._redact import redact, redact_value
from plansmith.domains.code._sessions import Session, SessionManager
from plansmith.domains.code._tiers import TOOL_TIERS, TOOL_TIMEOUTS, Tier, TimeoutClass, allowed

__all__ = ["Gate", "current_session"]

_log = logging.getLogger(__name__)
_CURRENT: ContextVar[Session] = ContextVar("plansmith_code_session")

Body = Callable[[dict[str, Any]], Awaitable[CallToolResult]]


def current_session() -> Session:
    """The session of the call being served (set by the gate)."""
    return _CURRENT.get()


def _os_failure_of(error: BaseException) -> RefusedError | UnavailableError | None:
    """A file system error no tool typed itself (a link loop, a folder removed while the
    call ran, ...) as the typed error it means. The tools reach sandbox files relative
    to a folder's descriptor, so such an error names a relative path (or none); one
    that names an absolute path is about the server's own files, and stays a fault."""
    seen: BaseException | None = error  # the SDK wraps what a tool raised: its cause
    while seen is not None:
        if isinstance(seen, OSError):
            name = seen.filename if isinstance(seen.filename, str) else None
            if name is not None and name.startswith(("/", "..")):
                return None  # a file of the server's own (its logs): a fault, not a refusal
            return os_failure(seen, redact(name) if name else None)
        seen = seen.__cause__ or seen.__context__
    return None


def _strict(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {**schema, "additionalProperties": False}


def _redacted(result: CallToolResult) -> CallToolResult:
    """``result`` with every string redacted; the text of a structured result is its JSON."""
    structured = result.structured_content
    if structured is not None and not result.is_error:
        structured = redact_value(structured)
        content: list[Any] = [TextContent(type="text", text=json.dumps(structured))]
    else:
        structured = redact_value(structured) if structured is not None else None
        content = [
            TextContent(type="text", text=redact(c.text)) if isinstance(c, TextContent) else c
            for c in result.content
        ]
    return CallToolResult(
        content=content, structured_content=structured, is_error=result.is_error, _meta=result.meta
    )


class Gate:
    """Applies the server's guarantees around each tool body."""

    def __init__(
        self, config: ServerConfig, sessions: SessionManager, pressure: Backpressure
    ) -> None:
        self.config = config
        self.sessions = sessions
        self.pressure = pressure
        self._validators: dict[str, jsonschema.protocols.Validator] = {}
        self._server_audit: AuditLog | None = None
        self._opening = anyio.Lock()

    @property
    def ready(self) -> bool:
        """Whether the tools' input schemas are known."""
        return bool(self._validators)

    def set_schemas(self, schemas: Mapping[str, Mapping[str, Any]]) -> None:
        """The input schemas of the registered tools (checked before every call)."""
        for name, schema in schemas.items():
            strict = _strict(schema)
            cls = jsonschema.validators.validator_for(strict)
            cls.check_schema(strict)
            self._validators[name] = cls(strict)

    def _timeout(self, tool: str) -> float:
        klass = TOOL_TIMEOUTS.get(tool, TimeoutClass.FAST)
        times = self.config.timeouts
        return {TimeoutClass.FAST: times.fast, TimeoutClass.MEDIUM: times.medium}.get(
            klass, times.slow
        )

    def _check(self, tool: str, arguments: dict[str, Any]) -> None:
        if tool not in TOOL_TIERS or tool not in self._validators:
            raise RefusedError(
                "unknown_tool", f"there is no tool {tool!r}", fix="list_tools shows the tools"
            )
        if not allowed(self.config.tier, tool):
            raise RefusedError(
                "tier_denied",
                f"{tool} needs the {TOOL_TIERS[tool]} tier; this server runs at the "
                f"{self.config.tier} tier",
                fix="have a person approve a plan for a server started at a higher tier",
            )
        errors = sorted(self._validators[tool].iter_errors(arguments), key=lambda e: list(e.path))
        if errors:
            first = errors[0]
            where = "/".join(str(p) for p in first.absolute_path) or "(arguments)"
            message = first.message[:300]
            if first.validator == "pattern":
                message = f"{str(first.instance)[:80]!r} is not an allowed value here"
            raise RefusedError(
                "invalid_arguments",
                f"{where}: {message}"
                + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""),
                fix="send arguments that match the tool's inputSchema",
            )

    async def _admitted(
        self, session: Session, tool: str, arguments: dict[str, Any], body: Body
    ) -> CallToolResult:
        async with self.pressure.slot():
            token = _CURRENT.set(session)
            try:
                with anyio.fail_after(self._timeout(tool)):
                    return await body(arguments)
            except TimeoutError:
                raise UnavailableError(
                    "timeout",
                    f"{tool} took longer than its {self._timeout(tool):g} s limit",
                    fix="narrow the request (a smaller path, fewer tests) or retry later",
                    retryable=TOOL_TIERS[tool] is Tier.READ,
                ) from None
            finally:
                _CURRENT.reset(token)

    async def _session(self) -> Session:
        if self.sessions.has():
            return self.sessions.get()
        async with self._opening:  # one worktree per session, even if its first calls race
            return await anyio.to_thread.run_sync(self.sessions.get)

    def _audit_for(self, session: Session | None) -> AuditLog:
        if session is not None:
            return session.audit
        if self._server_audit is None:
            self._server_audit = AuditLog(self.config.audit_log, "-")
        return self._server_audit

    async def call(
        self, tool: str, arguments: dict[str, Any], meta: Mapping[str, Any] | None, body: Body
    ) -> CallToolResult:
        """Serve one tool call through every check; always returns a result."""
        started = time.perf_counter()
        session: Session | None = None
        replayed = False
        key: str | None = None
        try:
            live = session = await self._session()
            key = key_of(meta)
            live.audit.append("call", tool=tool, arguments=arguments, key=key)
            self._check(tool, arguments)
            if key is not None:
                result, replayed = await live.once.run(
                    key, tool, arguments, lambda: self._admitted(live, tool, arguments, body)
                )
            else:
                result = await self._admitted(live, tool, arguments, body)
        except Exception as error:  # every failure becomes a structured result
            failure = failure_of(error) or _os_failure_of(error)
            if failure is None:
                _log.exception("tool %s failed unexpectedly", tool)
                failure = UnavailableError(
                    "internal_error",
                    f"{tool} failed unexpectedly",
                    fix="report this",
                    retryable=False,
                )
            result = error_result(failure)
        result = _redacted(result)
        outcome = "error" if result.is_error else ("replayed" if replayed else "ok")
        code = (
            (result.structured_content or {}).get("error", {}).get("code")
            if result.is_error
            else None
        )
        self._audit_for(session).append(
            "result",
            tool=tool,
            key=key,
            outcome=outcome,
            code=code,
            ms=round((time.perf_counter() - started) * 1000, 3),
        )
        return result
