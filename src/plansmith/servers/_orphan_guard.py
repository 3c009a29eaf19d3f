"""``python -I -S _orphan_guard.py PARENT_PID PATH ARGV0 [ARG ...]``: run the program at
PATH (as ARGV0, with ARGs) as a child that dies with its parent.

On Linux, it asks the kernel (``prctl(PR_SET_PDEATHSIG, SIGKILL)``) to kill it when the
thread that started it ends (a SIGKILLed engine included), then execs the program in its
place (the setting outlives exec). Should the parent have died already, it exits at
once. Elsewhere it only execs the program. The pool starts each stdio server through it.
It imports nothing but the standard library (run as a file, it loads no package).
"""

from __future__ import annotations

import os
import signal
import sys

__all__ = ["die_with_parent", "main"]

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """On Linux: SIGKILL when the parent's thread ends; exit now if ``parent`` is gone."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes  # noqa: PLC0415  (only on Linux)

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
        return  # not allowed here: the child lives as it would without the guard
    if os.getppid() != parent:  # the parent died before the call: no signal will come
        os._exit(1)


def main(argv: list[str]) -> None:
    if len(argv) < 3:
        sys.stderr.write("usage: _orphan_guard.py PARENT_PID PATH ARGV0 [ARG ...]\n")
        os._exit(2)
    die_with_parent(int(argv[0]))
    try:
        os.execv(argv[1], argv[2:])
    except OSError as error:
        sys.stderr.write(f"cannot run {argv[1]!r}: {error.strerror or error}\n")
        os._exit(127)


if __name__ == "__main__":
    main(sys.argv[1:])
