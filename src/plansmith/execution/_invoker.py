"""The tool-invoker protocol: one call of one tool, and what came back.

Every way of calling a tool (MCP servers, a recording, a replay, the fake used
by unit tests) implements :class:`ToolInvoker`. A call that fails for a reason
other than the tool's own verdict raises :class:`plansmith.errors.ToolCallError`
with its error class; an ``is_error`` result is returned, and the runner
classifies it as ``tool_error``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Protocol

from plansmith.execution._json_values import parse_json_text
from plansmith.model import JSONValue

__all__ = [
    "ErrorClass",
    "ProgressFn",
    "ToolCall",
    "ToolResult",
    "ToolInvoker",
    "ReadyFn",
    "IDEMPOTENCY_META_KEY",
    "RETRYABLE_META_KEY",
]

IDEMPOTENCY_META_KEY = "io.plansmith/idempotency-key"
RETRYABLE_META_KEY = "io.plansmith/retryable"

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]


class ErrorClass(StrEnum):
    """How a call failed; each class has its own retry rule (see ``_policy``)."""

    TRANSPORT_LOST = "transport_lost"
    TIMEOUT = "timeout"
    TOOL_ERROR = "tool_error"
    PROTOCOL_ERROR = "protocol_error"
    EXTRACTION_ERROR = "extraction_error"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One attempt at calling ``tool`` on ``server`` for plan step ``step``.

    ``key`` is the idempotency key: the same for every attempt of the step and
    for a resumed run. ``timeout`` is in seconds (None: no limit).
    """

    server: str
    tool: str
    arguments: dict[str, JSONValue]
    key: str
    step: str = ""
    attempt: int = 1
    timeout: float | None = None
    on_progress: ProgressFn | None = field(default=None, compare=False, repr=False)
    #: extra ``_meta`` entries for the call (for example W3C ``traceparent``)
    meta: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool returned: structured content, the text content joined, the error flag."""

    structured: dict[str, JSONValue] | None = None
    text: str = ""
    is_error: bool = False
    retryable: bool = False

    def document(self, *, parse_json: bool = True) -> dict[str, JSONValue]:
        """The document output JSONPaths are evaluated over (formats.md, Bindings).

        ``parse_json=False`` leaves ``json`` null, for extractors that do not read it.
        Text that is not JSON gives null: not its syntax, ``NaN`` or ``Infinity``, a
        number past a float's range, or nesting too deep to parse (``parse_json_text``).
        """
        parsed = parse_json_text(self.text) if parse_json and self.text else None
        return {
            "structured": self.structured,
            "text": self.text,
            "json": parsed,
            "is_error": self.is_error,
        }

    @staticmethod
    def of(
        structured: dict[str, JSONValue] | None, text: str, is_error: bool, retryable: bool
    ) -> ToolResult:
        """``ToolResult(structured, text, is_error, retryable)`` without the frozen
        dataclass ``__init__`` (which calls ``object.__setattr__`` per field): a tool
        pool makes one per call."""
        result = _NEW(ToolResult)
        s = _RESULT_SETTERS
        s[0](result, structured)
        s[1](result, text)
        s[2](result, is_error)
        s[3](result, retryable)
        return result

    def to_dict(self) -> dict[str, JSONValue]:
        return {
            "structured": self.structured,
            "text": self.text,
            "is_error": self.is_error,
            "retryable": self.retryable,
        }

    @staticmethod
    def from_dict(data: dict[str, JSONValue]) -> ToolResult:
        structured = data.get("structured")
        return ToolResult(
            structured=structured if isinstance(structured, dict) else None,
            text=str(data.get("text") or ""),
            is_error=bool(data.get("is_error")),
            retryable=bool(data.get("retryable")),
        )


_NEW = object.__new__
_RESULT_SETTERS = tuple(getattr(ToolResult, f.name).__set__ for f in fields(ToolResult))
assert tuple(f.name for f in fields(ToolResult)) == ("structured", "text", "is_error", "retryable")


class ToolInvoker(Protocol):
    """Calls tools. Raises ``ToolCallError`` for transport, timeout and protocol failures.

    An invoker may also have a ``ready`` (``ReadyFn``): ``TimeoutInvoker`` awaits what it
    returns for a call before that call's clock starts (the MCP pool's: the call's server
    started, or restarted). A wrapper that has an inner invoker passes its ``ready`` on.
    """

    async def invoke(self, call: ToolCall) -> ToolResult: ...


#: ``ready(call)``: None when ``call`` can be sent now, else what to await until it can
#: (without a timeout of its own: the call's timeout starts after it)
ReadyFn = Callable[[ToolCall], Awaitable[object] | None]
