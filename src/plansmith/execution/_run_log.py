"""What a run log is (``RunLog``), and the one that keeps everything in memory."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Protocol

from plansmith.errors import ExecutionError, InputError, RunNotFoundError
from plansmith.execution._events import Event
from plansmith.execution._lease import MemoryLeases
from plansmith.model import JSONValue

__all__ = ["RunInfo", "RunLog", "MemoryRunLog", "not_found", "run_exists"]


@dataclass(frozen=True, slots=True)
class RunInfo:
    run_id: str
    created: str
    inputs: dict[str, JSONValue]


class RunLog(Protocol):
    """Where events go; appended events are durable once ``flush`` returns.

    ``create_run`` of a run id the log holds already raises ``run_exists(run_id)`` and
    changes nothing (a run's record is never overwritten)."""

    def create_run(self, run_id: str, created: str, inputs: dict[str, JSONValue]) -> None: ...
    def append(self, event: Event) -> None: ...
    def flush(self) -> None: ...
    def events(self, run_id: str) -> list[Event]: ...
    def runs(self) -> list[RunInfo]: ...
    def run(self, run_id: str) -> RunInfo: ...
    def put_blob(self, data: bytes) -> str: ...
    def get_blob(self, ref: str) -> bytes: ...
    def close(self) -> None: ...


def not_found(run_id: str) -> RunNotFoundError:
    return RunNotFoundError(
        f"no run {run_id!r} in the run log", hint="list runs with `plansmith runs`"
    )


def run_exists(run_id: str) -> InputError:
    return InputError(
        f"run {run_id} already exists",
        hint=f"resume it (`plansmith resume {run_id}`, Engine.resume), or choose another run"
        " id (or none: the engine makes a new one)",
    )


class MemoryRunLog(MemoryLeases):
    """A run log that keeps everything in memory (the durable log switched off)."""

    def __init__(self) -> None:
        self._runs: dict[str, RunInfo] = {}
        self._events: dict[str, list[Event]] = {}
        self._blobs: dict[str, bytes] = {}

    def create_run(self, run_id: str, created: str, inputs: dict[str, JSONValue]) -> None:
        if run_id in self._runs:
            raise run_exists(run_id)
        self._runs[run_id] = RunInfo(run_id, created, inputs)
        self._events.setdefault(run_id, [])

    def append(self, event: Event) -> None:
        self._events.setdefault(event.run_id, []).append(event)

    def flush(self) -> None:
        return None

    def events(self, run_id: str) -> list[Event]:
        if run_id not in self._events:
            raise not_found(run_id)
        return list(self._events[run_id])

    def runs(self) -> list[RunInfo]:
        return list(self._runs.values())

    def run(self, run_id: str) -> RunInfo:
        if run_id not in self._runs:
            raise not_found(run_id)
        return self._runs[run_id]

    def put_blob(self, data: bytes) -> str:
        ref = "sha256:" + hashlib.sha256(data).hexdigest()
        self._blobs[ref] = data
        return ref

    def get_blob(self, ref: str) -> bytes:
        if ref not in self._blobs:
            raise ExecutionError(
                f"blob {ref} is not in the in-memory run log",
                hint="the event that refers to it was not written by this log, or is damaged",
            )
        return self._blobs[ref]

    def close(self) -> None:
        return None
