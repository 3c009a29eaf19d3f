"""The MCP SDK's log records, as one line each: no traceback on the user's terminal.

The SDK logs a line a server writes to stdout that is not JSON-RPC (a start-up banner,
a stray ``print``) with ``logger.exception``: a traceback through pydantic for each
such line, on plansmith's stderr, which buries the run's own output. The message and
the error's first line say all there is to say; the session goes on as before.
"""

from __future__ import annotations

import logging
import re

__all__ = ["quiet_sdk_tracebacks"]

#: the SDK's loggers that log a server's bad output with its traceback
_LOGGERS = ("mcp.client.stdio", "mcp.shared.session", "mcp.client.session")
_MOST = 200  # characters of the error's first line kept
_HEADER = re.compile(r"\d+ validation errors? for ")


class _OneLine(logging.Filter):
    """Fold a record's exception into its message (its first line) and drop the traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        info = record.exc_info
        if info is not None and info[1] is not None:
            error = info[1]
            lines = [line.strip() for line in str(error).splitlines() if line.strip()]
            if len(lines) > 1 and _HEADER.match(lines[0]):
                lines = lines[1:]  # pydantic's "1 validation error for ...": the next says what
            first = lines[0] if lines else ""
            if len(first) > _MOST:
                first = first[: _MOST - 1] + "…"
            record.msg = f"{record.getMessage()}: {first or type(error).__name__}"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


_FILTER = _OneLine()


def quiet_sdk_tracebacks() -> None:
    """Fold the SDK's tracebacks into one line each (idempotent)."""
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
