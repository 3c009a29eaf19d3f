"""Reading the files a command names: domain, problem (or GTPyhop folder) and plan JSON."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from plansmith.errors import InputError
from plansmith.model import Plan, Problem

if TYPE_CHECKING:
    from plansmith.planning import PlanOptions

__all__ = ["load_inputs", "plan_gtpyhop_folder", "read_plan_file", "write_atomically"]


def load_inputs(domain: Path, problem: Path | None, problem_name: str | None) -> Problem:
    """The problem to plan: a domain file plus a problem file."""
    from plansmith.formats import load_domain, load_problem

    if problem is None:
        raise InputError(
            f"no problem file given for domain {domain}",
            hint="pass a problem file after the domain: `plansmith plan domain.yaml problem.yaml`",
        )
    if problem_name is not None:
        raise InputError(
            "--problem names a problem in a GTPyhop folder, not in a problem file",
            hint="drop --problem, or pass a GTPyhop folder as DOMAIN",
        )
    return load_problem(problem, load_domain(domain))


def read_plan_file(path: Path) -> Plan:
    """Read and check a plan JSON file."""
    from plansmith.formats import parse_plan_json

    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"no such plan file: {path}", hint="check the path") from None
    except OSError as error:
        raise InputError(f"cannot read plan file {path}: {error}", hint="check the file") from None
    return parse_plan_json(data, file=str(path))


def plan_gtpyhop_folder(
    folder: Path, problem: Path | None, problem_name: str | None, options: PlanOptions
) -> Plan:
    """Plan problem ``problem_name`` of a GTPyhop folder (``domain.py`` + ``problems.py``).

    The domain's own prints go to stderr, so that ``--format json`` stays pure JSON.
    The domain's ``import gtpyhop`` gets plansmith's stand-in; should its code import
    the real GTPyhop all the same (while it plans), its import banner is turned off
    (``GTPYHOP_QUIET``, unless set): plansmith's output stays plansmith's.
    """
    import contextlib
    import os
    import sys
    import time

    from plansmith.cli._hash_seed import unfixed_seed_note
    from plansmith.compat import gtpyhop
    from plansmith.formats import load_gtpyhop_package
    from plansmith.planning.htn import plan_python, process_hash_seed

    if problem is not None:
        raise InputError(
            f"{folder} is a GTPyhop folder: its problems come from problems.py",
            hint=f"drop {problem} and name the problem with --problem NAME",
        )
    if process_hash_seed() is None:  # run_plan could not fix it
        sys.stderr.write(unfixed_seed_note())
    quiet = "GTPYHOP_QUIET" not in os.environ
    if quiet:  # one command, one thread: set for the load and the search only
        os.environ["GTPYHOP_QUIET"] = "true"
    try:
        with contextlib.redirect_stdout(sys.stderr):
            domain, chosen = load_gtpyhop_package(folder, problem_name, stand_in=gtpyhop)
            return plan_python(domain, chosen, options, clock=time.process_time)
    finally:
        if quiet:
            os.environ.pop("GTPYHOP_QUIET", None)


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file, so nothing is half-written."""
    import os
    import tempfile

    from plansmith.errors import InputError

    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent or Path("."), prefix=f".{path.name}.")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except OSError as error:
        raise InputError(
            f"cannot write {path}: {error.strerror}", hint="choose a writable --output path"
        ) from None
