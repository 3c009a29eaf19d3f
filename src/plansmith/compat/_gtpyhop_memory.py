"""GTPyhop's memory tracking (``gtpyhop.memory_tracking``): the process's resident
memory (RSS) per session, relative to its value when tracking started.

``MemoryTracker`` measures at the moments it is asked; ``MemoryMonitor`` also
samples in a background daemon thread, for peaks. The RSS is read with psutil
when it is installed (as GTPyhop does), else from ``/proc/self/statm``;
``MEMORY_TRACKING_AVAILABLE`` is False when neither is possible, and then
the classes report zeros, as GTPyhop's placeholders do. Under the ``gtpyhop``
alias this module is ``gtpyhop.memory_tracking`` (and its ``tracker`` and
``monitor``).
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

__all__ = ["MemoryTracker", "MemoryMonitor", "MEMORY_TRACKING_AVAILABLE", "rss_mb"]

_MB = 1024 * 1024


def _psutil_rss() -> float | None:
    try:
        import psutil  # type: ignore[import-untyped]  # noqa: PLC0415 - optional
    except ImportError:
        return None
    try:
        return float(psutil.Process().memory_info().rss) / _MB
    except Exception:
        return None


def _statm_rss() -> float | None:
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / _MB


def rss_mb() -> float | None:
    """The process's resident memory in MB, or None when it cannot be read."""
    found = _psutil_rss()
    return found if found is not None else _statm_rss()


def _available() -> bool:
    """Whether the RSS can be read, without importing psutil (a 25 ms import that
    ``plansmith plan`` of a GTPyhop folder does not need): ``/proc/self/statm``
    first, else psutil if it is installed and reads it."""
    if _statm_rss() is not None:
        return True
    return _psutil_rss() is not None


MEMORY_TRACKING_AVAILABLE = _available()


class MemoryTracker:
    """Point-in-time memory per session, relative to the session's baseline."""

    def __init__(self) -> None:
        self.session_baselines: dict[str, float] = {}
        self.session_peaks: dict[str, float] = {}
        self._lock = threading.RLock()

    def start_session_tracking(self, session_id: str) -> bool:
        """Record the baseline; False if the session is already tracked (or cannot be)."""
        with self._lock:
            current = rss_mb()
            if session_id in self.session_baselines or current is None:
                return False
            self.session_baselines[session_id] = current
            self.session_peaks[session_id] = current
            return True

    def get_session_memory(self, session_id: str) -> dict[str, float]:
        """``memory_mb`` now and ``peak_memory_mb`` seen so far, above the baseline."""
        with self._lock:
            current = rss_mb()
            if session_id not in self.session_baselines or current is None:
                return {"memory_mb": 0.0, "peak_memory_mb": 0.0}
            baseline = self.session_baselines[session_id]
            memory = max(0.0, current - baseline)
            peak = max(self.session_peaks[session_id] - baseline, memory)
            self.session_peaks[session_id] = peak + baseline
            return {"memory_mb": memory, "peak_memory_mb": peak}

    def stop_session_tracking(self, session_id: str) -> dict[str, float]:
        """The final figures; the session is no longer tracked."""
        final = self.get_session_memory(session_id)
        with self._lock:
            self.session_baselines.pop(session_id, None)
            self.session_peaks.pop(session_id, None)
        return final


class MemoryMonitor:
    """Samples the memory every ``sampling_interval`` seconds in a daemon thread."""

    def __init__(self, sampling_interval: float = 1.0) -> None:
        self.sampling_interval = sampling_interval
        self.monitoring_sessions: dict[str, dict[str, Any]] = {}
        self._monitor_thread: threading.Thread | None = None
        self._stop_event = threading.Event()
        self._lock = threading.RLock()

    def start_monitoring(self, session_id: str, baseline_memory: float) -> None:
        with self._lock:
            self.monitoring_sessions[session_id] = {
                "baseline_memory": baseline_memory,
                "peak_memory": baseline_memory,
                "samples": [],
                "start_time": time.time(),
            }
            if self._monitor_thread is None or not self._monitor_thread.is_alive():
                self._stop_event.clear()
                self._monitor_thread = threading.Thread(target=self._loop, daemon=True)
                self._monitor_thread.start()

    def stop_monitoring(self, session_id: str) -> dict[str, float]:
        """``peak_memory_mb`` and ``avg_memory_mb`` of the samples, above the baseline."""
        with self._lock:
            data = self.monitoring_sessions.pop(session_id, None)
        if data is None:
            return {"peak_memory_mb": 0.0, "avg_memory_mb": 0.0}
        samples: list[float] = data["samples"]
        baseline: float = data["baseline_memory"]
        if samples:
            return {
                "peak_memory_mb": max(samples) - baseline,
                "avg_memory_mb": sum(samples) / len(samples) - baseline,
            }
        return {"peak_memory_mb": 0.0, "avg_memory_mb": -baseline}

    def _record(self, current: float, session_ids: list[str]) -> None:
        for sid in session_ids:
            data = self.monitoring_sessions.get(sid)
            if data is not None:
                data["samples"].append(current)
                data["peak_memory"] = max(data["peak_memory"], current)
                if len(data["samples"]) > 100:
                    data["samples"].pop(0)

    def _loop(self) -> None:
        while not self._stop_event.wait(self.sampling_interval):
            current = rss_mb()
            if current is not None:
                with self._lock:
                    self._record(current, list(self.monitoring_sessions))

    def sample_now(self, session_id: str | None = None) -> None:
        """Take a sample now, for one session or all."""
        current = rss_mb()
        if current is None:
            return
        with self._lock:
            ids = [session_id] if session_id else list(self.monitoring_sessions)
            self._record(current, ids)

    def stop(self) -> None:
        """Stop the thread and forget every session."""
        self._stop_event.set()
        if self._monitor_thread is not None and self._monitor_thread.is_alive():
            self._monitor_thread.join(timeout=1.0)
        with self._lock:
            self.monitoring_sessions.clear()
        self._monitor_thread = None
