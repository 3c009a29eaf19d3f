"""The collector's view of the heap while runs are in progress.

CPython's full collections walk every tracked object of the process: the MCP SDK's
and pydantic's many thousands, the plan of each run, the bound plan, the events kept
in memory. A run keeps a few objects alive per step, so full collections come often
during a long run, and each one walks the whole heap again: a 20 000-step chain over
a fake invoker (``bench/bench_executor.py --long``) cost 21.6 to 22.4 µs a step of
runner CPU with the heap as it is against 13.1 to 13.6 µs with it frozen (see
docs/benchmarks-archive.md, Executor).

``frozen_heap`` freezes the heap (``gc.freeze``) when the first run of the process
starts, so that full collections during runs walk only what the runs made, and
unfreezes it (``gc.unfreeze``) when the last one ends: nothing is kept from the
collector for longer than the runs last, and cyclic garbage that was in the heap when
the first run began is collected after the last one ends. A process that froze its
heap itself, or turned the collector off, is left as it is.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["frozen_heap"]


class _Freezer:
    """How many runs are in progress, and whether the freeze in force is ours."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runs = 0
        self.ours = False

    def enter(self) -> None:
        with self.lock:
            if self.runs == 0:
                self.ours = gc.isenabled() and gc.get_freeze_count() == 0
                if self.ours:
                    gc.freeze()
            self.runs += 1

    def leave(self) -> None:
        with self.lock:
            self.runs -= 1
            if self.runs == 0 and self.ours:
                self.ours = False
                gc.unfreeze()


_FREEZER = _Freezer()


@contextmanager
def frozen_heap() -> Iterator[None]:
    """While the block runs, the heap that existed when the first such block of the
    process began is left out of the collector's passes (see the module docstring)."""
    _FREEZER.enter()
    try:
        yield
    finally:
        _FREEZER.leave()
