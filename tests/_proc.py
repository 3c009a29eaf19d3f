"""The end of a child process whose output a test has begun to read line by line.

``Popen.communicate()`` reads the pipes' descriptors, so whatever the test's buffered file
objects (``proc.stdout``/``proc.stderr``) already hold, the start of the next line on a
busy machine, never reaches it: a JSON line then arrives cut. ``finish`` reads the rest
through those same objects.
"""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from typing import AnyStr


def finish(
    proc: subprocess.Popen[AnyStr], timeout: float | None = None
) -> tuple[int, AnyStr | None, AnyStr | None]:
    """Wait for ``proc`` (``subprocess.TimeoutExpired`` after ``timeout`` seconds, as
    ``communicate`` raises it) and return its exit code and the rest of its output; the
    pipes are closed then."""
    pool = ThreadPoolExecutor(2)
    try:
        reads = [pool.submit(f.read) if f is not None else None for f in (proc.stdout, proc.stderr)]
        code = proc.wait(timeout)
        out, err = (read.result() if read is not None else None for read in reads)
        for file in (proc.stdout, proc.stderr):  # as communicate() leaves them
            if file is not None:
                file.close()
        return code, out, err
    finally:
        pool.shutdown(wait=False)
