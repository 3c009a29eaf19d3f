"""Each tool's structured output against its ``outputSchema``, by a compiled validator.

The SDK's ``call_tool`` checks every result with python-jsonschema (about 19 µs of a
130 µs in-memory call, measured in a run: docs/benchmarks-archive.md, Executor). The pool sends
``tools/call`` itself (``ClientSession.send_request``) and asks this module first: a
jsonschema-rs validator, compiled once per tool and server start, answers in about
0.2 µs (``bench_executor.py --parts``). It only ever says yes for the SDK: when it
says no, or cannot compile a schema (a remote ``$ref``: it fetches nothing) or read a
value (a non-string key), the SDK's own ``validate_tool_result`` decides and gives its
error. So a result the SDK refuses is
refused with the SDK's message, and one it accepts is accepted.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import jsonschema_rs
from mcp.types import CallToolResult

from plansmith.binding import ToolSpec

__all__ = ["OutputChecks"]

#: a tool whose schema did not compile here: the SDK checks each of its results
_SDK_ONLY = object()


class OutputChecks:
    """The output checks of one server's listed tools (as the pool listed them)."""

    __slots__ = ("_schemas", "_validators")

    def __init__(self, tools: Iterable[ToolSpec]) -> None:
        self._schemas: dict[str, dict[str, Any] | None] = {t.name: t.output_schema for t in tools}
        self._validators: dict[str, Any] = {}

    def listed(self, tool: str) -> bool:
        """Whether ``tool`` was listed (the SDK lists again for one that was not)."""
        return tool in self._schemas

    def forget(self, tool: str) -> None:
        """Leave ``tool``'s results to the SDK from now on (its listing changed: the
        SDK listed it again, and knows its schema now)."""
        self._schemas.pop(tool, None)
        self._validators.pop(tool, None)

    def passes(self, tool: str, result: CallToolResult) -> bool:
        """True when ``result`` needs no closer look: an error result, a tool with no
        output schema, or structured content the compiled validator accepts. False:
        the SDK's validation decides."""
        if result.is_error:
            return True  # the SDK checks no error result either
        validator = self._validators.get(tool)
        if validator is None:
            schema = self._schemas.get(tool)
            if schema is None:
                return True
            validator = self._validators[tool] = _compiled(schema)
        if validator is _SDK_ONLY:
            return False
        structured = result.structured_content
        if structured is None and "structured_content" not in result.model_fields_set:
            return False  # no structured content at all: the SDK's error says so
        try:
            return bool(validator.is_valid(structured))
        except Exception:  # a value it cannot read (a non-string key): the SDK decides
            return False


def _compiled(schema: dict[str, Any]) -> Any:
    """jsonschema-rs's validator of ``schema``, as the SDK's reads it: formats are not
    asserted, nothing is fetched; ``_SDK_ONLY`` when it does not compile."""
    try:
        return jsonschema_rs.validator_for(schema, validate_formats=False, offline=True)
    except Exception:  # an invalid schema, a $ref it may not fetch: the SDK's error says
        return _SDK_ONLY
