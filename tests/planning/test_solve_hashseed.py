"""The same inputs give the same grounding and plan under any PYTHONHASHSEED, and the
generated PDDL suite is the same text under any PYTHONHASHSEED."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import _pddl_suite as suite

TESTS = Path(__file__).resolve().parents[1]

SCRIPT = """
import sys
from plansmith.formats._pddl import parse_pddl_domain, parse_pddl_problem
from plansmith.planning import PlanOptions, ground, solve

domain_file, task_file, search, heuristic = sys.argv[1:5]
domain = parse_pddl_domain(open(domain_file).read())
problem = parse_pddl_problem(open(task_file).read(), domain)
grounded = ground(problem)
print([str(f) for f in grounded.facts])
print([op.name for op in grounded.operators])
result = solve(problem, PlanOptions(search=search, heuristic=heuristic))
print([str(a) for a in result.actions], result.expanded, result.evaluated)
"""

SUITE_SCRIPT = """
import hashlib, sys
sys.path.insert(0, sys.argv[1])
import _pddl_suite
for task in _pddl_suite.suite():
    print(task.id, hashlib.sha256(task.text.encode()).hexdigest())
"""


def _run(seed: str, *args: str, script: str = SCRIPT) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout


@pytest.mark.parametrize(
    ("domain", "name", "search", "heuristic"),
    [
        ("logistics", "logistics-3-5-s2", "lazy-gbfs", "ff"),
        ("gripper", "gripper-10", "gbfs", "add"),
        ("blocks", "blocks-5-s2", "astar", "max"),
    ],
)
def test_the_plan_is_identical_under_two_hash_seeds(
    tmp_path: Path, domain: str, name: str, search: str, heuristic: str
) -> None:
    domain_file, task_file = suite.write(suite.task(domain, name), tmp_path)
    args = (str(domain_file), str(task_file), search, heuristic)
    first = _run("1", *args)
    assert first.count("\n") == 3
    assert _run("4242", *args) == first


def test_the_generated_suite_is_identical_under_two_hash_seeds() -> None:
    first = _run("1", str(TESTS), script=SUITE_SCRIPT)
    assert first.count("\n") == len(suite.suite())
    assert _run("4242", str(TESTS), script=SUITE_SCRIPT) == first
