"""Reading the files a command names: domain, problem (or GTPyhop folder) and plan JSON."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from plansmith.errors import InputError, LimitReachedError, Location
from plansmith.model import Plan, Problem

if TYPE_CHECKING:
    from collections.abc import Iterator

    from plansmith.planning import PlanOptions

__all__ = [
    "load_inputs",
    "plan_gtpyhop_folder",
    "read_plan_file",
    "write_atomically",
    "cpu_time_limit",
]


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
    import os
    import sys
    import time

    from plansmith.cli._hash_seed import unfixed_seed_note
    from plansmith.compat import gtpyhop, planner_strategy
    from plansmith.formats import load_gtpyhop_package
    from plansmith.planning.htn import plan_python, process_hash_seed

    if problem is not None:
        raise InputError(
            f"{folder} is a GTPyhop folder: its problems come from problems.py",
            hint=f"drop {problem} and name the problem with --problem NAME",
        )
    classic = _classic_example(folder)
    if classic is not None:
        raise classic
    if process_hash_seed() is None:  # run_plan could not fix it
        sys.stderr.write(unfixed_seed_note())
    quiet = "GTPYHOP_QUIET" not in os.environ
    if quiet:  # one command, one thread: set for the load and the search only
        os.environ["GTPYHOP_QUIET"] = "true"
    try:
        with contextlib.redirect_stdout(sys.stderr):
            domain, chosen = load_gtpyhop_package(folder, problem_name, stand_in=gtpyhop)
            strategy = planner_strategy()  # the domain's set_recursive_planning(False): greedy
            with cpu_time_limit(options.time_limit):
                return plan_python(
                    domain, chosen, options, clock=time.process_time, strategy=strategy
                )
    finally:
        if quiet:
            os.environ.pop("GTPYHOP_QUIET", None)


def _classic_example(folder: Path) -> InputError | None:
    """The error for a classic GTPyhop example package (``__init__.py``, no ``domain.py``,
    like ``gtpyhop/examples/blocks_htn``): its problems are run by its own ``main``,
    not named by a ``get_problems()``, so it cannot be planned problem by problem.
    The hint is the command that runs it the way GTPyhop runs it, with plansmith's
    stand-in as ``gtpyhop``. None for any other folder."""
    from plansmith.compat import installed_gtpyhop_dirs

    if (folder / "domain.py").is_file() or not (folder / "__init__.py").is_file():
        return None
    root = folder.resolve()
    module, path = root.name, str(root.parent)
    for found in installed_gtpyhop_dirs():
        examples = Path(found).resolve() / "examples"
        if root.is_relative_to(examples):
            parts = root.relative_to(examples).parts
            if all(part.isidentifier() for part in parts):
                module, path = ".".join(("gtpyhop", "examples", *parts)), ""
            break
    if not module.replace(".", "_").isidentifier():
        return None  # not importable by name: the loader's own error says what is missing
    setup = f"sys.path.insert(0, {path!r}); " if path else ""
    command = (
        'python -c "import sys; from plansmith.compat import gtpyhop; '
        f"sys.modules['gtpyhop'] = gtpyhop; {setup}"
        f'import {module} as example; example.main(False)"'
    )
    return InputError(
        f"{folder} is a classic GTPyhop example (no domain.py and problems.py): "
        "its own main() runs its problems, so `plansmith plan` cannot choose one",
        location=Location(str(folder)),
        hint=f"run it with plansmith planning for GTPyhop: {command}",
    )


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


class _OutOfTime(BaseException):
    """The CPU time limit, raised by ``SIGPROF`` wherever the process is: not an
    ``Exception``, so that the domain's ``except Exception`` does not swallow it."""


#: CPU seconds the backstop gives beyond the limit: the planner's own check, between
#: decomposition steps, comes first whenever the domain's code returns in time
_GRACE_S = 0.05


@contextlib.contextmanager
def cpu_time_limit(seconds: float | None) -> Iterator[None]:
    """Stop the planning of a GTPyhop folder once the process has used ``seconds`` of CPU
    time (plus a grace), even inside one of the domain's own functions, where the
    planner does not look at its clock: ``LimitReachedError``, exit 4. The planner checks
    its clock between decomposition steps; an action that runs long (building millions
    of items) would overrun the limit without bound. Only in the main thread (signals)."""
    import signal
    import threading

    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def out_of_time(_signum: int, _frame: object) -> None:
        raise _OutOfTime

    before = signal.signal(signal.SIGPROF, out_of_time)
    signal.setitimer(signal.ITIMER_PROF, seconds + _GRACE_S)
    try:
        yield
    except _OutOfTime:
        raise LimitReachedError(
            f"the time limit ({seconds:g} s of CPU time) was reached inside the domain's own code",
            hint="raise --time-limit, or look at the action or method that runs so long",
        ) from None
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, before)
