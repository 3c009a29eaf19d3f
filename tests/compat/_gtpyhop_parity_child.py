"""One planner on every problem of one GTPyhop folder, in its own process (issue 34).

Run by ``test_gtpyhop_folder_parity.py`` as ``python _gtpyhop_parity_child.py
PLANNER FOLDER SECONDS [SKIPPED,...]`` under ``PYTHONHASHSEED=0``; prints one line
``PARITY-JSON {...}``: for each problem, in ``get_problems()`` order, its outcome
(``plan``, ``no plan``, ``timeout`` or ``error``) and its plan as the ``repr`` of
each action tuple. PLANNER is

* ``gtpyhop``: the real GTPyhop 2.0.2's ``find_plan`` with the strategy the
  folder's code chose, else its default (iterative greedy); where that finds no
  plan, also ``iterative_dfs_backtracking``'s answer (``backtracking``);
* ``plansmith``: the stand-in's search as ``find_plan`` and ``plansmith plan`` run
  it (the strategy the folder chose, else plansmith's backtracking search), with
  ``kept``: the plan without the steps that leave the state unchanged;
* ``exact``: the same in the stand-in's exact mode (``set_exact_gtpyhop(True)``),
  except the problems named in SKIPPED (outcome ``skipped``).

Each call has ``SECONDS`` of wall time, enforced by a real-time timer (it also stops
an action that runs on, which plansmith's own time budget, read between
decomposition steps, would not). A CPU timer would not do: the memory-hungry
examples spend most of their wall time outside the process's CPU time here.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("GTPYHOP_QUIET", "true")


class Timeout(BaseException):  # not an Exception: domain code may catch those
    """The time limit, raised by the real-time timer."""


@contextlib.contextmanager
def _wall_limit(seconds: float) -> Iterator[None]:
    def stop(signum: int, frame: Any) -> None:
        raise Timeout

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


#: wall seconds of the last call (reported, never checked)
SPENT = [0.0]


def _actions(plan: Any) -> list[str]:
    return [repr(tuple(a)) for a in plan]


def _outcome(call: Callable[[], Any], seconds: float) -> tuple[str, Any]:
    """``(outcome, result)`` of one planning call under the wall-time limit."""
    from plansmith.errors import LimitReachedError

    SPENT[0] = time.perf_counter()
    try:
        with contextlib.redirect_stdout(io.StringIO()), _wall_limit(seconds):
            result = call()
    except (Timeout, LimitReachedError):
        return "timeout", None
    except Exception as error:  # the planner's failure is an outcome
        text = "".join(traceback.format_exception_only(error)).strip()
        return "error", text[:500]
    finally:
        SPENT[0] = time.perf_counter() - SPENT[0]
    if result is False or result is None:
        return "no plan", None
    return "plan", result


def _gtpyhop(folder: Path, seconds: float) -> list[dict[str, Any]]:
    with contextlib.redirect_stdout(io.StringIO()):
        import gtpyhop as real  # type: ignore[import-untyped]

        from plansmith.formats import load_gtpyhop_problems

        real.set_recursive_planning(False)  # GTPyhop's default, as after `import gtpyhop`
        loaded, problems = load_gtpyhop_problems(folder, stand_in=real)
        real.set_verbose_level(0)
        chosen = real.get_recursive_planning()
    domain = real.find_domain_by_name(loaded.name)
    logger = getattr(sys.modules["gtpyhop.main"], "_global_logger", None)
    rows = []
    for problem in problems:
        if logger is not None:
            logger.structured_handler.clear()

        def find(strategy: Any = None, problem: Any = problem) -> Any:
            real.set_current_domain(domain)
            real.set_recursive_planning(chosen if strategy is None else strategy)
            return real.find_plan(problem.state, list(problem.todo))

        outcome, result = _outcome(find, seconds)
        row: dict[str, Any] = {"name": problem.name, "outcome": outcome, "seconds": SPENT[0]}
        if outcome == "plan":
            row["plan"] = _actions(result)
        elif outcome == "error":
            row["error"] = result
        elif outcome == "no plan":
            again, other = _outcome(lambda: find("iterative_dfs_backtracking"), seconds)
            row["backtracking"] = {"outcome": again}
            if again == "plan":
                row["backtracking"]["plan"] = _actions(other)
        rows.append(row)
    return rows


def _plansmith(
    folder: Path, seconds: float, *, exact: bool, skipped: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    from plansmith.compat import gtpyhop as stand_in
    from plansmith.compat._gtpyhop_plan import plan_items
    from plansmith.formats import load_gtpyhop_problems
    from plansmith.planning.htn import without_unchanged

    stand_in.set_exact_gtpyhop(exact)
    domain, problems = load_gtpyhop_problems(folder, stand_in=stand_in)
    stand_in.set_verbose_level(0)  # after the folder's code, which may set it
    found = stand_in.find_domain_by_name(domain.name)
    assert found is not None
    rows = []
    for problem in problems:
        if problem.name in skipped:
            rows.append({"name": problem.name, "outcome": "skipped", "seconds": 0.0})
            continue

        def find(problem: Any = problem) -> Any:
            return plan_items(found, problem.state, list(problem.todo))

        outcome, result = _outcome(find, seconds)
        row: dict[str, Any] = {"name": problem.name, "outcome": outcome, "seconds": SPENT[0]}
        if outcome == "plan":
            row["plan"] = _actions(result)
            try:
                row["kept"] = _actions(without_unchanged(domain, problem.state, result))
            except Exception as error:  # cannot be replayed from the problem's state
                row["kept_error"] = repr(error)
        elif outcome == "error":
            row["error"] = result
        rows.append(row)
    return rows


def main() -> None:
    planner, folder, seconds = sys.argv[1], Path(sys.argv[2]), float(sys.argv[3])
    out = sys.stdout
    try:
        if planner == "gtpyhop":
            rows = _gtpyhop(folder, seconds)
        else:
            skipped = frozenset(sys.argv[4].split(",")) if len(sys.argv) > 4 else frozenset()
            rows = _plansmith(folder, seconds, exact=planner == "exact", skipped=skipped)
        document: dict[str, Any] = {"problems": rows}
    except Exception as error:  # loading failed: the test reports it
        document = {"load_error": "".join(traceback.format_exception(error))[-2000:]}
    document["hash_randomization"] = sys.flags.hash_randomization
    out.write("PARITY-JSON " + json.dumps(document) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
