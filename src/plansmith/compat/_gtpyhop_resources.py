"""GTPyhop's ``ResourceManager``: timeouts, cooperative cancellation and memory tracking.

As in GTPyhop 2.0.2, with one difference: ``with_timeout`` always waits for the
call in a daemon thread (GTPyhop's Windows path), never with ``SIGALRM``, which
works only in the main thread and only to the second. ``PlannerSession`` does not
use it: plansmith's planner enforces ``timeout_ms`` itself.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from typing import Any, ClassVar

from plansmith.compat._gtpyhop_memory import (
    MEMORY_TRACKING_AVAILABLE,
    MemoryMonitor,
    MemoryTracker,
    rss_mb,
)

__all__ = ["ResourceManager", "PlanningTimeoutError"]


class PlanningTimeoutError(Exception):
    """Planning exceeded its time limit (GTPyhop's name)."""


class ResourceManager:
    """Process-wide timeouts, cancellation flags and per-session memory tracking."""

    _cancellation_flags: ClassVar[dict[str, threading.Event]] = {}
    _memory_tracker: ClassVar[MemoryTracker | None] = None
    _memory_monitor: ClassVar[MemoryMonitor | None] = None
    _sampling_interval: ClassVar[float] = 0.1

    @staticmethod
    def _get_tracker() -> MemoryTracker | None:
        if ResourceManager._memory_tracker is None and MEMORY_TRACKING_AVAILABLE:
            ResourceManager._memory_tracker = MemoryTracker()
        return ResourceManager._memory_tracker

    @staticmethod
    def _get_monitor(sampling_interval: float | None = None) -> MemoryMonitor | None:
        interval = (
            sampling_interval
            if sampling_interval is not None
            else ResourceManager._sampling_interval
        )
        monitor = ResourceManager._memory_monitor
        if monitor is not None and monitor.sampling_interval != interval:
            ResourceManager._memory_monitor = None
        if ResourceManager._memory_monitor is None and MEMORY_TRACKING_AVAILABLE:
            ResourceManager._memory_monitor = MemoryMonitor(sampling_interval=interval)
            ResourceManager._sampling_interval = interval
        return ResourceManager._memory_monitor

    @staticmethod
    def reset() -> None:
        """Stop the monitor, forget the tracker and the flags, collect garbage."""
        if ResourceManager._memory_monitor is not None:
            ResourceManager._memory_monitor.stop()
        ResourceManager._memory_monitor = None
        ResourceManager._memory_tracker = None
        ResourceManager._cancellation_flags.clear()
        ResourceManager._sampling_interval = 0.1
        gc.collect()

    @staticmethod
    def with_timeout(
        timeout_ms: int | None = None, session_id: str | None = None
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """A decorator: the call raises PlanningTimeoutError after ``timeout_ms``
        (and sets the session's cancellation flag); None or <= 0: no limit."""

        def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                if timeout_ms is None or timeout_ms <= 0:
                    return func(*args, **kwargs)
                return ResourceManager._timeout_with_thread(
                    func, timeout_ms, session_id, *args, **kwargs
                )

            return wrapper

        return decorator

    @staticmethod
    def _timeout_with_thread(
        func: Callable[..., Any],
        timeout_ms: int,
        session_id: str | None,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        outcome: dict[str, Any] = {}

        def target() -> None:
            try:
                outcome["result"] = func(*args, **kwargs)
            except Exception as error:
                outcome["error"] = error

        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        thread.join(timeout_ms / 1000)
        if thread.is_alive():
            if session_id:
                ResourceManager.set_cancellation_flag(session_id)
            raise PlanningTimeoutError(f"Planning timed out after {timeout_ms}ms")
        if "error" in outcome:
            raise outcome["error"]
        return outcome.get("result")

    @staticmethod
    def set_cancellation_flag(session_id: str) -> None:
        ResourceManager._cancellation_flags.setdefault(session_id, threading.Event()).set()

    @staticmethod
    def clear_cancellation_flag(session_id: str) -> None:
        if session_id in ResourceManager._cancellation_flags:
            ResourceManager._cancellation_flags[session_id].clear()

    @staticmethod
    def check_cancellation(session_id: str) -> None:
        """Raise PlanningTimeoutError if the session's cancellation flag is set."""
        flag = ResourceManager._cancellation_flags.get(session_id)
        if flag is not None and flag.is_set():
            raise PlanningTimeoutError("Planning cancelled due to timeout")

    @staticmethod
    def start_memory_tracking(session_id: str, sampling_interval: float | None = None) -> bool:
        """Track the session's memory (and sample it in the background); False if
        the memory cannot be read."""
        tracker = ResourceManager._get_tracker()
        monitor = ResourceManager._get_monitor(sampling_interval)
        if tracker is None:
            return False
        tracker.start_session_tracking(session_id)
        baseline = rss_mb()
        if monitor is not None and baseline is not None:
            monitor.start_monitoring(session_id, baseline)
        return True

    @staticmethod
    def get_memory_usage(session_id: str) -> dict[str, Any]:
        """``memory_mb`` and ``peak_memory_mb`` of the session, above its baseline."""
        tracker = ResourceManager._get_tracker()
        monitor = ResourceManager._get_monitor()
        stats: dict[str, Any] = (
            tracker.get_session_memory(session_id)
            if tracker is not None
            else {"memory_mb": 0.0, "peak_memory_mb": 0.0}
        )
        if monitor is not None:
            monitor.sample_now(session_id)
            with monitor._lock:
                data = monitor.monitoring_sessions.get(session_id)
                if data and data["samples"]:
                    peak = max(data["samples"]) - data["baseline_memory"]
                    stats["peak_memory_mb"] = max(stats["peak_memory_mb"], peak)
        return stats

    @staticmethod
    def stop_memory_tracking(session_id: str) -> dict[str, float]:
        """Stop tracking; the monitor's ``peak_memory_mb`` and ``avg_memory_mb``."""
        tracker = ResourceManager._get_tracker()
        monitor = ResourceManager._get_monitor()
        stats = {"peak_memory_mb": 0.0, "avg_memory_mb": 0.0}
        if monitor is not None:
            stats = monitor.stop_monitoring(session_id)
        if tracker is not None:
            tracker.stop_session_tracking(session_id)
        ResourceManager._cancellation_flags.pop(session_id, None)
        return stats

    @staticmethod
    def sample_memory(session_id: str | None = None) -> None:
        """Sample now, if a monitor exists (never creates one)."""
        if ResourceManager._memory_monitor is not None:
            ResourceManager._memory_monitor.sample_now(session_id)
