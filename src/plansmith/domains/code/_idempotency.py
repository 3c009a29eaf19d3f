"""Idempotency keys: a call sent again with the same key acts once and gets the first result.

The key comes in the request ``_meta`` under ``io.plansmith/idempotency-key``
(the executor derives it from the run and step ids). Keys are scoped to one
session. A key is bound to its tool and arguments: the same key with other
arguments is refused (``idempotency_conflict``), never answered with a result
that belongs to another request. Calls with the same key wait for each other;
only successful results are kept, so a failed call's retry acts again.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
from mcp.types import CallToolResult

from plansmith.domains.code._errors import RefusedError

__all__ = ["IDEMPOTENCY_META_KEY", "Once", "key_of"]

IDEMPOTENCY_META_KEY = "io.plansmith/idempotency-key"
_MAX_KEY = 256


def key_of(meta: Mapping[str, Any] | None) -> str | None:
    """The idempotency key in a request's ``_meta``, if any (a short string)."""
    value = (meta or {}).get(IDEMPOTENCY_META_KEY)
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > _MAX_KEY:
        raise RefusedError(
            "invalid_idempotency_key",
            f"the idempotency key must be a string of at most {_MAX_KEY} characters",
            fix="send a short string key, e.g. '<run id>:<step id>'",
        )
    return value


def _fingerprint(tool: str, arguments: Mapping[str, Any]) -> str:
    blob = json.dumps([tool, arguments], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class Once:
    """Results by key for one session (at most ``capacity`` keys, oldest dropped first)."""

    def __init__(self, capacity: int = 4096) -> None:
        self._results: OrderedDict[str, tuple[str, CallToolResult]] = OrderedDict()
        self._locks: dict[str, anyio.Lock] = {}
        self._capacity = capacity
        self.actions = 0  # how many bodies ran under a key
        self.replays = 0  # how many calls got a stored result

    async def run(
        self,
        key: str,
        tool: str,
        arguments: Mapping[str, Any],
        body: Callable[[], Awaitable[CallToolResult]],
    ) -> tuple[CallToolResult, bool]:
        """``body()``'s result, or the stored one for ``key``; and whether it was replayed."""
        fingerprint = _fingerprint(tool, arguments)
        lock = self._locks.setdefault(key, anyio.Lock())
        async with lock:
            stored = self._results.get(key)
            if stored is not None:
                if stored[0] != fingerprint:
                    raise RefusedError(
                        "idempotency_conflict",
                        f"the idempotency key {key!r} was used for another call",
                        fix="use a new key for a different call",
                    )
                self.replays += 1
                return stored[1], True
            self.actions += 1
            result = await body()
            if not result.is_error:
                self._results[key] = (fingerprint, result)
                while len(self._results) > self._capacity:
                    old, _ = self._results.popitem(last=False)
                    self._locks.pop(old, None)
            return result, False
