"""``plansmith plan FOLDER`` honours the strategy a GTPyhop domain chooses: a domain that
calls ``set_recursive_planning(False)`` (GTPyhop's greedy strategy) gets GTPyhop's "no
plan" where the first method that applies leads nowhere; without that call plansmith
backtracks to the second method. The plan records the strategy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

DOMAIN = """\
import gtpyhop
domain = gtpyhop.Domain('fork')
{choice}
def bad(state):
    return False
def good(state):
    state.done = True
    return state
gtpyhop.declare_actions(bad, good)
def via_bad(state):
    return [('bad',)]
def via_good(state):
    return [('good',)]
gtpyhop.declare_task_methods('go', via_bad, via_good)
"""
PROBLEMS = """\
import gtpyhop
def get_problems():
    s = gtpyhop.State('s0')
    s.done = False
    return {'p1': (s, [('go',)])}
"""


def _plan(tmp_path: Path, choice: str) -> subprocess.CompletedProcess[str]:
    folder = tmp_path / "fork"
    folder.mkdir()
    (folder / "domain.py").write_text(DOMAIN.format(choice=choice))
    (folder / "problems.py").write_text(PROBLEMS)
    return subprocess.run(
        [sys.executable, "-m", "plansmith", "plan", str(folder), "--problem", "p1",
         "--format", "json"],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip


def test_without_a_choice_plansmith_backtracks_to_the_method_that_works(tmp_path: Path) -> None:
    done = _plan(tmp_path, "")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert [s["action"] for s in plan["steps"]] == ["good"]
    assert plan["planner"]["strategy"] == "dfs"


def test_a_domain_that_chooses_greedy_gets_gtpyhops_no_plan(tmp_path: Path) -> None:
    done = _plan(tmp_path, "gtpyhop.set_recursive_planning(False)")
    assert done.returncode == 3, done.stdout + done.stderr  # proved unsolvable, as GTPyhop says
