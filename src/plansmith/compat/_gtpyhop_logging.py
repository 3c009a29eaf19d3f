"""GTPyhop's structured logging (``gtpyhop.logging_system``): per-session loggers
that keep their entries in memory, with GTPyhop 2.0.2's names and behaviour.

A session's logger is ``get_logger(session_id)``; ``PlannerSession`` logs its
operations there, and ``PlanResult.logs`` holds them. Under the ``gtpyhop``
alias this module is ``gtpyhop.logging_system``.
"""

from __future__ import annotations

import contextlib
import io
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

__all__ = [
    "LogLevel",
    "LogEntry",
    "LogHandler",
    "StdoutLogHandler",
    "StructuredLogHandler",
    "StructuredLogger",
    "LegacyPrintReplacer",
    "LoggingStats",
    "get_logger",
    "destroy_logger",
    "get_logging_stats",
]


class LogLevel(Enum):
    """Logging levels, ordered by their values."""

    DEBUG = 0
    INFO = 1
    WARNING = 2
    ERROR = 3


@dataclass
class LogEntry:
    """One entry: time since the logger's start, level, component, message, context."""

    timestamp: float
    level: LogLevel
    component: str
    message: str
    context: dict[str, Any] = field(default_factory=dict)
    thread_id: int | None = None

    def __post_init__(self) -> None:
        if self.thread_id is None:
            self.thread_id = threading.get_ident()


class LogHandler:
    """What a logger sends its entries to: GTPyhop's base class, whose subclasses
    (``StdoutLogHandler``, ``StructuredLogHandler``, a user's own) implement ``handle``;
    the base raises ``NotImplementedError`` as GTPyhop's does."""

    def handle(self, entry: LogEntry) -> None:
        raise NotImplementedError


class StdoutLogHandler(LogHandler):
    """Prints each entry with ``format_string`` (fields and context keys)."""

    def __init__(self, format_string: str = "{component}> {message}") -> None:
        self.format_string = format_string

    def handle(self, entry: LogEntry) -> None:
        print(
            self.format_string.format(
                timestamp=entry.timestamp,
                level=entry.level.name,
                component=entry.component,
                message=entry.message,
                **entry.context,
            )
        )


class StructuredLogHandler(LogHandler):
    """Keeps the entries in a list."""

    def __init__(self) -> None:
        self.entries: list[LogEntry] = []
        self._lock = threading.Lock()

    def handle(self, entry: LogEntry) -> None:
        with self._lock:
            self.entries.append(entry)

    def get_entries(self, min_level: LogLevel = LogLevel.DEBUG) -> list[LogEntry]:
        with self._lock:
            return [e for e in self.entries if e.level.value >= min_level.value]

    def clear(self) -> None:
        with self._lock:
            self.entries.clear()

    def to_dict_list(self, min_level: LogLevel = LogLevel.INFO) -> list[dict[str, Any]]:
        """The entries at ``min_level`` or above, as dicts."""
        return [
            {
                "timestamp": e.timestamp,
                "level": e.level.name,
                "component": e.component,
                "message": e.message,
                "context": e.context,
                "thread_id": e.thread_id,
            }
            for e in self.get_entries(min_level)
        ]


class StructuredLogger:
    """A session's logger; its ``structured_handler`` keeps every entry."""

    def __init__(self, session_id: str, base_time: float | None = None) -> None:
        self.session_id = session_id
        self.base_time = base_time or time.time()
        self.handlers: list[LogHandler] = []
        self._lock = threading.Lock()
        self.structured_handler = StructuredLogHandler()
        self.add_handler(self.structured_handler)

    def add_handler(self, handler: LogHandler) -> None:
        with self._lock:
            self.handlers.append(handler)

    def remove_handler(self, handler: LogHandler) -> None:
        with self._lock:
            if handler in self.handlers:
                self.handlers.remove(handler)

    def log(
        self,
        level: LogLevel,
        component: str,
        message: str,
        context: dict[str, Any] | None = None,
    ) -> None:
        entry = LogEntry(time.time() - self.base_time, level, component, message, context or {})
        with self._lock:
            for handler in self.handlers:
                try:
                    handler.handle(entry)
                except Exception as error:  # a handler's fault must not stop planning
                    print(f"Log handler error: {error}", file=sys.stderr)

    def debug(self, component: str, message: str, **context: Any) -> None:
        self.log(LogLevel.DEBUG, component, message, context)

    def info(self, component: str, message: str, **context: Any) -> None:
        self.log(LogLevel.INFO, component, message, context)

    def warning(self, component: str, message: str, **context: Any) -> None:
        self.log(LogLevel.WARNING, component, message, context)

    def error(self, component: str, message: str, **context: Any) -> None:
        self.log(LogLevel.ERROR, component, message, context)

    def get_logs(self, min_level: LogLevel = LogLevel.INFO) -> list[dict[str, Any]]:
        return self.structured_handler.to_dict_list(min_level)

    def clear_logs(self) -> None:
        self.structured_handler.clear()

    @contextlib.contextmanager
    def capture_stdout(self) -> Iterator[io.StringIO]:
        """Capture what is printed in the block; log each non-blank line at INFO."""
        captured = io.StringIO()
        try:
            with contextlib.redirect_stdout(captured):
                yield captured
        finally:
            for line in captured.getvalue().strip().split("\n"):
                if line.strip():
                    self.info("stdout_capture", line.strip())


_LOGGERS: dict[str, StructuredLogger] = {}
_LOGGERS_LOCK = threading.Lock()


def get_logger(session_id: str) -> StructuredLogger:
    """The session's logger, created on first use."""
    with _LOGGERS_LOCK:
        if session_id not in _LOGGERS:
            _LOGGERS[session_id] = StructuredLogger(session_id)
        return _LOGGERS[session_id]


def destroy_logger(session_id: str) -> bool:
    """Forget the session's logger; whether there was one."""
    with _LOGGERS_LOCK:
        return _LOGGERS.pop(session_id, None) is not None


class LegacyPrintReplacer:
    """Logs verbose-conditional messages and prints them as ``component> message``."""

    def __init__(
        self, logger: StructuredLogger, component: str, min_verbose_level: int = 1
    ) -> None:
        self.logger = logger
        self.component = component
        self.min_verbose_level = min_verbose_level

    def print_if_verbose(self, message: str, verbose_level: int, current_verbose: int) -> None:
        if current_verbose < verbose_level:
            return
        if verbose_level >= self.min_verbose_level:
            level = LogLevel.INFO if verbose_level <= 2 else LogLevel.DEBUG
            self.logger.log(level, self.component, message, {"verbose_level": verbose_level})
        print(f"{self.component}> {message}")


@dataclass
class LoggingStats:
    """How many entries a logger holds, by level, and about how much memory."""

    total_entries: int = 0
    entries_by_level: dict[str, int] = field(default_factory=dict)
    memory_usage_mb: float = 0.0
    avg_log_time_ms: float = 0.0


def get_logging_stats(logger: StructuredLogger) -> LoggingStats:
    """Counts of the logger's entries (all levels) and an estimate of their size."""
    entries = logger.structured_handler.get_entries()
    stats = LoggingStats(total_entries=len(entries))
    for entry in entries:
        name = entry.level.name
        stats.entries_by_level[name] = stats.entries_by_level.get(name, 0) + 1
    if entries:
        size = sum(len(str(e.message)) + len(str(e.context)) + 100 for e in entries)
        stats.memory_usage_mb = size / (1024 * 1024)
    return stats
