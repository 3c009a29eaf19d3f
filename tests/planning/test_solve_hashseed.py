"""The same inputs give the same grounding and plan under any PYTHONHASHSEED."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from _search_fixtures import BENCHMARKS

SCRIPT = """
import sys
from plansmith.formats._pddl import parse_pddl_domain, parse_pddl_problem
from plansmith.planning import PlanOptions, ground, solve

folder, task, search, heuristic = sys.argv[1:5]
domain = parse_pddl_domain(open(f"{folder}/domain.pddl").read())
problem = parse_pddl_problem(open(f"{folder}/{task}").read(), domain)
grounded = ground(problem)
print([str(f) for f in grounded.facts])
print([op.name for op in grounded.operators])
result = solve(problem, PlanOptions(search=search, heuristic=heuristic))
print([str(a) for a in result.actions], result.expanded, result.evaluated)
"""


def _run(seed: str, *args: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout


@pytest.mark.skipif(not BENCHMARKS.is_dir(), reason="../shared/benchmarks/pddl not found")
@pytest.mark.parametrize(
    ("domain", "task", "search", "heuristic"),
    [
        ("logistics", "task07.pddl", "lazy-gbfs", "ff"),
        ("gripper", "task04.pddl", "gbfs", "add"),
        ("blocks", "task04.pddl", "astar", "max"),
    ],
)
def test_the_plan_is_identical_under_two_hash_seeds(
    domain: str, task: str, search: str, heuristic: str
) -> None:
    args = (str(BENCHMARKS / domain), task, search, heuristic)
    first = _run("1", *args)
    assert first.count("\n") == 3
    assert _run("4242", *args) == first
