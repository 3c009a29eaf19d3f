"""GTPyhop folders among the served domains: their problem names, and their plans.

Loading a GTPyhop folder imports its ``domain.py`` and ``problems.py`` with plansmith's
``gtpyhop`` stand-in in ``sys.modules``, which is process-wide: one lock (for the
process, like ``sys.modules`` itself) lets one load at a time. Problem names are
cached per folder until one of its two files changes.
"""

from __future__ import annotations

import contextlib
import io
import threading
from pathlib import Path

from plansmith.compat import gtpyhop
from plansmith.errors import PlansmithError
from plansmith.formats import load_gtpyhop_package, load_gtpyhop_problems
from plansmith.model import Plan
from plansmith.planning.htn import plan_python

__all__ = ["gtpyhop_problem_names", "plan_gtpyhop"]

_LOADING = threading.Lock()
_NAMES: dict[Path, tuple[tuple[int, int], tuple[str, ...]]] = {}


def _stamp(folder: Path) -> tuple[int, int]:
    return ((folder / "domain.py").stat().st_mtime_ns, (folder / "problems.py").stat().st_mtime_ns)


def gtpyhop_problem_names(folder: Path) -> tuple[str, ...]:
    """The names of ``get_problems()`` of ``folder``; none when its code does not load
    (planning one of them then says why)."""
    key, stamp = folder.resolve(), _stamp(folder)
    cached = _NAMES.get(key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    with _LOADING:
        try:
            _, problems = load_gtpyhop_problems(folder, stand_in=gtpyhop)
        except PlansmithError:
            return ()
    names = tuple(p.name for p in problems)
    _NAMES[key] = (stamp, names)
    return names


def plan_gtpyhop(folder: Path, problem: str) -> Plan:
    """Plan ``problem`` of the GTPyhop folder ``folder`` (what the domain prints is dropped)."""
    with _LOADING, contextlib.redirect_stdout(io.StringIO()):
        domain, chosen = load_gtpyhop_package(folder, problem, stand_in=gtpyhop)
        return plan_python(domain, chosen)
