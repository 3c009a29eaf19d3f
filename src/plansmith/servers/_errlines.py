"""A stdio server's error output, line by line, with its name: ``[name] line``.

Every stdio server of a pool writes its stderr to a pipe of its own; a thread copies
each line to the pool's ``errlog`` (the run's servers.log, or stderr) after the
server's name, so the servers' lines can be told apart where they interleave.
"""

from __future__ import annotations

import os
import threading
from typing import TextIO

__all__ = ["NamedErrlog", "write_line"]

_WRITE = threading.Lock()  # one line at a time, whichever server wrote it
_LINE = 65536  # the bytes of one line copied at a time (a longer one goes on in pieces)


class NamedErrlog:
    """A pipe for one server process's stderr (``child_end``) and the thread that copies
    its lines to ``out``. ``close_child_end`` once the process was started (or failed
    to); the thread ends when the process (and whatever it started) closes its end."""

    def __init__(self, name: str, out: TextIO) -> None:
        read_fd, write_fd = os.pipe()
        self.child_end: TextIO = os.fdopen(write_fd, "w")
        self._thread = threading.Thread(
            target=_copy, args=(read_fd, f"[{name}] ", out), name=f"stderr {name}", daemon=True
        )
        self._thread.start()

    def close_child_end(self) -> None:
        self.child_end.close()

    def join(self, timeout: float) -> None:
        """Wait (at most ``timeout`` s) for the lines still in the pipe to be copied."""
        self._thread.join(timeout)


def write_line(out: TextIO, line: str) -> None:
    """Write ``line`` (and a newline) to ``out`` whole, between the servers' lines; a
    closed ``out`` is let be."""
    try:
        with _WRITE:
            out.write(f"{line}\n")
            out.flush()
    except (OSError, ValueError):
        return


def _copy(read_fd: int, prefix: str, out: TextIO) -> None:
    with os.fdopen(read_fd, "rb") as pipe:
        while raw := pipe.readline(_LINE):
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            try:
                with _WRITE:
                    out.write(f"{prefix}{line}\n")
                    out.flush()
            except (OSError, ValueError):  # the log was closed: read the rest, write nothing
                continue
