"""Honour the idempotency key: the same key gives the first result, and acts once.

The key comes in the request ``_meta`` under ``io.plansmith/idempotency-key``.
A successful result is kept in memory and, when a state directory is given, on
disk (one JSON file per tool and key), so a restarted server still answers a
resumed run with the first result. Calls with the same key wait for each other;
a failed call keeps nothing, so its retry (same key) acts again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

__all__ = ["IDEMPOTENCY_META_KEY", "Once"]

IDEMPOTENCY_META_KEY = "io.plansmith/idempotency-key"


class Once:
    """Runs a tool body once per (tool, key); later calls get the stored result."""

    def __init__(self, state_dir: Path | None = None) -> None:
        self._dir = state_dir
        self._memory: dict[str, dict[str, Any]] = {}
        self._locks: dict[str, anyio.Lock] = {}
        self.actions = 0  # how many bodies actually ran (for tests and stats)

    def _file(self, slot: str) -> Path | None:
        if self._dir is None:
            return None
        return self._dir / f"{hashlib.sha256(slot.encode()).hexdigest()}.json"

    def _stored(self, slot: str) -> dict[str, Any] | None:
        if slot in self._memory:
            return self._memory[slot]
        path = self._file(slot)
        if path is not None and path.is_file():
            try:
                value = json.loads(path.read_text(encoding="utf-8"))["result"]
            except (ValueError, KeyError, OSError):
                return None
            if isinstance(value, dict):
                self._memory[slot] = value
                return value
        return None

    def _store(self, slot: str, tool: str, key: str, result: dict[str, Any]) -> None:
        self._memory[slot] = result
        path = self._file(slot)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            record = {"tool": tool, "key": key, "result": result}
            tmp.write_text(json.dumps(record, sort_keys=True), encoding="utf-8")
            tmp.replace(path)

    async def run(
        self, tool: str, key: str | None, body: Callable[[], dict[str, Any]]
    ) -> tuple[dict[str, Any], bool]:
        """``body()`` run in a worker thread, or the stored result for ``key``.

        Returns the result and whether it was replayed from an earlier call.
        """
        if not key:
            self.actions += 1
            return await anyio.to_thread.run_sync(body), False
        slot = f"{tool}\x00{key}"
        lock = self._locks.setdefault(slot, anyio.Lock())
        async with lock:
            stored = self._stored(slot)
            if stored is not None:
                return stored, True
            self.actions += 1
            result = await anyio.to_thread.run_sync(body)
            self._store(slot, tool, key, result)
            return result, False
