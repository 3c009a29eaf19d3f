"""Run the command-line tools the server wraps: find them, ask their version, run them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from plansmith.errors import ExecutionError, Location

__all__ = ["BINARIES", "find_binary", "binary_version", "run_binary"]

# backend name -> (executables tried in order, argv that prints the version)
BINARIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "makeblastdb": (("makeblastdb",), ("-version",)),
    "blastn": (("blastn",), ("-version",)),
    "blastdbcmd": (("blastdbcmd",), ("-version",)),
    "mafft": (("mafft",), ("--version",)),
    "clustalo": (("clustalo", "clustal-omega"), ("--version",)),
    "fasttree": (("FastTree", "fasttree"), ("-expert",)),
}


def find_binary(backend: str) -> str:
    """The path of ``backend``'s executable on PATH, or an error that says it is missing."""
    names, _ = BINARIES[backend]
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    raise ExecutionError(
        f"{backend} is not installed (none of {', '.join(names)} is on PATH)",
        location=Location(file="PATH"),
        hint="install it (Debian: ncbi-blast+, mafft, clustalo, fasttree), or use biopython",
    )


def binary_version(backend: str) -> str:
    """The first line the tool prints about its version (empty if it prints nothing)."""
    exe = find_binary(backend)
    _, argv = BINARIES[backend]
    done = subprocess.run(
        [exe, *argv],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    for line in (done.stdout + "\n" + done.stderr).splitlines():
        if line.strip():
            return line.strip().removeprefix("Detailed usage for ").rstrip(":")
    return ""


def run_binary(
    backend: str, args: list[str], *, stdout_to: Path | None = None, timeout: float = 600
) -> str:
    """Run ``backend`` with ``args``; its stdout goes to ``stdout_to`` (or is returned).

    A non-zero exit or a timeout raises ExecutionError with the end of stderr.
    """
    exe = find_binary(backend)
    try:
        if stdout_to is not None:
            with stdout_to.open("w", encoding="utf-8") as sink:
                done = subprocess.run(
                    [exe, *args],
                    stdout=sink,
                    stderr=subprocess.PIPE,
                    text=True,
                    timeout=timeout,
                    stdin=subprocess.DEVNULL,
                    check=False,
                )
        else:
            done = subprocess.run(
                [exe, *args],
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
                check=False,
            )
    except subprocess.TimeoutExpired:
        raise ExecutionError(
            f"{backend} ran longer than {timeout:g} s", location=Location(file=exe)
        ) from None
    except OSError as error:
        raise ExecutionError(
            f"{backend} could not start: {error.strerror}", location=Location(file=exe)
        ) from None
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        raise ExecutionError(
            f"{backend} exited with status {done.returncode}: {tail}",
            location=Location(file=exe),
            hint="see the tool's message above",
        )
    return "" if stdout_to is not None else str(done.stdout)
