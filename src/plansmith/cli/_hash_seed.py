"""``plansmith plan`` of a GTPyhop folder runs under ``PYTHONHASHSEED=0``.

A Python domain's code may iterate over sets of strings, whose order follows the
process's hash seed, and so may its plan (see ``plansmith.planning.htn._pyseed``).
When the command's own process was not started with ``PYTHONHASHSEED=0``, it runs
itself again with it, before importing the domain: as the program, by replacing
itself (``os.execve`` of the same command line, so that the exit code, the
streams and the signals are the process's own); called in-process (Typer's test
runner, an embedding program), as a child process whose output it relays. The
child is marked (``PLANSMITH_HASH_SEED_CHILD``) so that it never runs itself
again: an interpreter that ignores the environment (``-E``, ``-I``) plans with
its own seed, records ``hash_seed: null`` in the plan and says so on stderr.

Measured against a worker process kept for later plans, see /docs/htn.md
("One plan in every process"): replacing the process costs one interpreter start
and the imports up to the argument parser; the opt-in plan server
(``plansmith plan-server``, ``_plan_server``) is the kept worker, started by the user.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

__all__ = [
    "CHILD_MARK",
    "may_name_a_folder",
    "must_fix_seed",
    "rerun_with_fixed_seed",
    "unfixed_seed_note",
]

CHILD_MARK = "PLANSMITH_HASH_SEED_CHILD"


def must_fix_seed() -> bool:
    """Whether this process should run the command again under ``PYTHONHASHSEED=0``."""
    return sys.flags.hash_randomization != 0 and CHILD_MARK not in os.environ


def may_name_a_folder(argv: Sequence[str]) -> bool:
    """Whether any word of ``argv`` is a folder: a cheap test, before the parser is
    imported, that ``plansmith plan ARGV`` may plan a GTPyhop folder (its DOMAIN is
    one of the words). A false alarm (an option's value that names a folder) costs
    one needless start under the fixed seed, which changes no classical plan."""
    return any(not word.startswith("-") and os.path.isdir(word) for word in argv)


def unfixed_seed_note() -> str:
    """What the command says on stderr when it plans a folder with a random seed."""
    return (
        "note: this Python ignores PYTHONHASHSEED (run with -E or -I?), so the domain "
        "runs under a random hash seed: the plan records hash_seed null, and a domain "
        "that iterates over sets may plan differently in another process\n"
    )


def _child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONHASHSEED": "0", CHILD_MARK: "1"}


def rerun_with_fixed_seed(argv: Sequence[str], *, replace_process: bool) -> int:
    """Run ``plansmith plan ARGV`` under ``PYTHONHASHSEED=0``; its exit code.

    ``replace_process``: this process is the ``plansmith`` program itself (its
    command line is ``sys.orig_argv``), so it is replaced, and this does not return.
    """
    env = _child_env()
    words = sys.argv[1:]
    same_command = bool(words) and sys.orig_argv[-len(words) :] == words
    if replace_process and same_command and os.name == "posix":
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, sys.orig_argv, env)
    import subprocess

    # -P: the current directory does not shadow the installed plansmith
    command = [sys.executable, "-P", "-m", "plansmith", "plan", *argv]
    env["PYTHONIOENCODING"] = "utf-8"
    try:
        done = subprocess.run(command, env=env, capture_output=True, check=False)
    except KeyboardInterrupt:
        sys.stderr.write("plan: interrupted\n")
        return 130
    sys.stdout.write(done.stdout.decode("utf-8", "replace"))
    sys.stderr.write(done.stderr.decode("utf-8", "replace"))
    return done.returncode
