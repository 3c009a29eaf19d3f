"""Ctrl-C (SIGINT) and SIGTERM while ``plansmith run`` or ``resume`` drives a run."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from types import FrameType
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from plansmith.engine import Engine

__all__ = ["Interrupts"]


#: why a run was cancelled, by the signal that cancelled it (SIGINT: the runner's words)
_REASONS: dict[int, str] = {
    signal.SIGINT: "the engine was interrupted",
    signal.SIGTERM: "the engine was terminated (SIGTERM)",
}


class Interrupts:
    """Ctrl-C (SIGINT) and SIGTERM while ``run`` or ``resume`` drives a run.

    The first cancels the run: ``Engine.cancel`` (its planner's search, its start-up or its
    calls in flight are cancelled and it is recorded ``cancelled`` with the signal's
    reason; the planner searches in a worker thread, so the event loop acts on it at
    once), then its tool servers are stopped and the command exits 128 + the signal's
    number (130, 143). The second says what it is waiting for; the third quits at once.
    The handlers only note the signal and hand it to the event loop (as ``asyncio.run``'s
    own SIGINT handler does), so no ``KeyboardInterrupt`` lands inside the engine or in
    the loop's shutdown, whenever the signal comes. A signal that the command was started
    with ignored (``nohup``, a background job) stays ignored.
    """

    def __init__(self, engine: Engine, run_id: str) -> None:
        self.engine = engine
        self.run_id = run_id
        self.say: Callable[[str], object] = lambda text: sys.stderr.write(text + "\n")
        self.caught: list[int] = []
        self.created = self.finished = False  # what the run's events said so far
        self._loop: asyncio.AbstractEventLoop | None = None
        self._scope: anyio.CancelScope | None = None
        self._old: dict[int, object] = {}

    def __enter__(self) -> Interrupts:
        for sig in _REASONS:
            old = signal.getsignal(sig)
            if old is not signal.SIG_IGN:
                self._old[sig] = old
                signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            # once a signal stopped the run, the command only exits: a late one must not
            # kill it with the signal (nor, past Python's own handler, mid-shutdown)
            signal.signal(sig, signal.SIG_IGN if self.caught else old)  # type: ignore[arg-type]

    @property
    def exit_code(self) -> int | None:
        """128 + the first signal's number, once one came."""
        return 128 + self.caught[0] if self.caught else None

    def watch(self, sink: Callable[[object], None]) -> Callable[[object], None]:
        """``sink``, noting whether the run was recorded and whether it finished."""
        from plansmith.execution import RunCreated, RunFinished

        def watched(event: object) -> None:
            if isinstance(event, RunCreated):
                self.created = True
            elif isinstance(event, RunFinished):
                self.finished = True
            sink(event)

        return watched

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.caught.append(signum)
        if len(self.caught) >= 3:
            self._quit()
        loop = self._loop
        if loop is not None:
            # RuntimeError: the loop closed meanwhile (the command is ending)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._act, len(self.caught))

    def _act(self, count: int) -> None:
        """In the event loop: what the ``count``-th signal does."""
        if self._loop is None:  # the run has returned
            return
        if count == 1:
            if self.finished:  # it ended already: its servers are stopping
                return
            if not self.engine.cancel(self.run_id, _REASONS[self.caught[0]]):
                assert self._scope is not None
                self._scope.cancel()  # not started here yet: nothing to record
        else:
            self.say(
                f"stopping the tool servers of run {self.run_id}: press Ctrl-C again to"
                " quit without waiting for them"
            )

    def _quit(self) -> None:
        """The third signal: leave now, saying what the run's log holds."""
        if not self.created:
            what = f"quit before run {self.run_id} was recorded"
        elif self.finished:
            what = f"quit without waiting for the tool servers of run {self.run_id} to stop"
        else:
            what = (
                f"quit: run {self.run_id} is left unfinished; `plansmith resume"
                f" {self.run_id}` continues it"
            )
        show_cursor = "\x1b[?25h" if sys.stderr.isatty() else ""  # a live bar hid it
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # a closed pipe
                stream.flush()
        os.write(2, f"{show_cursor}\n{what}\n".encode())
        os._exit(self.exit_code or 130)

    async def drive(self, body: Callable[[], Awaitable[object]]) -> object | None:
        """``body()``, unless a signal came before the loop ran (then nothing starts);
        None when a signal stopped it before the engine had the run."""
        if self.caught:
            return None
        loop = self._loop = asyncio.get_running_loop()
        # While the loop runs, the loop's own handlers: a signal the kernel hands to another
        # thread (the planner's) then still wakes the loop, through its wakeup pipe; a
        # handler set with signal.signal alone runs only once the main thread wakes.
        for sig in self._old:
            loop.add_signal_handler(sig, self._handle, sig, None)
        try:
            with anyio.CancelScope() as self._scope:
                return await body()
            return None
        finally:
            for sig in self._old:
                loop.remove_signal_handler(sig)
                signal.signal(sig, self._handle)
            self._loop = None
