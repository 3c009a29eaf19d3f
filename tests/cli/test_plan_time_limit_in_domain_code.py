"""``plansmith plan FOLDER --time-limit S`` of a GTPyhop folder stops the search even
inside the domain's own code: an action that never returns (and catches ``Exception``)
ends with the time limit (exit 4), not a process that runs for ever. The planner reads
its clock between decomposition steps; the CPU-time backstop (``SIGPROF``) is what
reaches into an action."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

DOMAIN = """\
import gtpyhop

domain = gtpyhop.Domain("forever")


def a_build(state, n):
    items = []
    try:
        while True:  # builds, and builds: only a limit inside the action stops it
            items.append(n)
            if len(items) > 10_000:
                items.clear()
    except Exception:  # the domain's own handler must not swallow the limit
        return state


def m_do(state, n):
    return [("a_build", n)]


gtpyhop.declare_actions(a_build)
gtpyhop.declare_task_methods("do", m_do)
"""

PROBLEMS = """\
import gtpyhop


def get_problems():
    return {"forever": (gtpyhop.State("s"), [("do", 1)], "an action that never returns")}
"""


def test_a_time_limit_stops_an_action_that_never_returns(tmp_path: Path) -> None:
    folder = tmp_path / "forever"
    folder.mkdir()
    (folder / "domain.py").write_text(DOMAIN)
    (folder / "problems.py").write_text(PROBLEMS)
    command = [sys.executable, "-m", "plansmith", "plan", str(folder), "--problem", "forever"]
    done = subprocess.run(
        [*command, "--time-limit", "0.5"],
        capture_output=True,
        text=True,
        timeout=120,  # a guard: without the limit in the action, this never ends
        check=False,
    )
    assert done.returncode == 4, done.stderr
    assert "the time limit (0.5 s of CPU time) was reached inside the domain's own code" in (
        done.stderr
    )
