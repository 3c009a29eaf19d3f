"""``plansmith plan FOLDER --problem NAME`` gives one answer for every problem GTPyhop
2.0.2 ships in its folder domains, whatever the caller's hash seed (issue 34).

Each problem is planned by five processes, under ``PYTHONHASHSEED`` 0, 1, 2, 3 and
unset (under any seed but 0 the command replaces itself with a process under seed
0); all five must give the same plan hash, or all five the same failure. The
processes of a folder run two at a time.

Two kinds of problem would take minutes: they get a limit, and every seed must then
hit it. BW_rand_43 has no plan and plansmith's backtracking search space is
exponential: ``--node-limit`` stops it (exit 4). Scenarios 07-20 of
scalable_data_processing spend their time inside single actions that build data
sets of millions of items (1.8 s of CPU and far more each, 3.5 s of wall time and
more), where ``--time-limit`` is not read (the planner reads its clock between
decomposition steps): each process is killed after 0.5 s of wall time, and every seed
must be.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from plansmith.cli._hash_seed import CHILD_MARK

gtpyhop = pytest.importorskip("gtpyhop")

EXAMPLES = Path(gtpyhop.__file__).parent / "examples"
FOLDERS = sorted(
    str(p.parent.relative_to(EXAMPLES))
    for p in EXAMPLES.rglob("domain.py")
    if (p.parent / "problems.py").is_file() and "__pycache__" not in p.parts
)
SEEDS = ("0", "1", "2", "3", None)
#: Options for problems that would plan for minutes (see the module's docstring)
FLAGS = {("ipc-2020-total-order/Blocksworld-GTOHP", "BW_rand_43"): ("--node-limit", "20000")}
KILL_AFTER = 0.5  # seconds of wall time
KILLED = {("memory_tracking/scalable_data_processing", f"scenario_{n:02d}") for n in range(7, 21)}


def _names(folder: str) -> list[str]:
    from plansmith.compat import gtpyhop as stand_in
    from plansmith.formats import load_gtpyhop_problems

    _, problems = load_gtpyhop_problems(EXAMPLES / folder, stand_in=stand_in)
    return [p.name for p in problems]


def _answer(folder: str, name: str, seed: str | None) -> str:
    """The plan hash, or how the command failed."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHASHSEED", CHILD_MARK)}
    if seed is not None:
        env["PYTHONHASHSEED"] = seed
    env.pop("PLANSMITH_GTPYHOP_EXACT", None)
    env["PLANSMITH_PLAN_SERVER"] = "0"  # this process plans, whatever server may listen
    flags = FLAGS.get((folder, name), ())
    command = [sys.executable, "-m", "plansmith", "plan", str(EXAMPLES / folder)]
    killed = (folder, name) in KILLED
    try:
        done = subprocess.run(
            [*command, "--problem", name, "--format", "json", *flags],
            capture_output=True,
            text=True,
            env=env,
            timeout=KILL_AFTER if killed else 300,
            check=False,
        )
    except subprocess.TimeoutExpired:
        if killed:
            return "killed while planning"
        raise
    if done.returncode == 0:
        document = json.loads(done.stdout)
        assert document["planner"]["hash_seed"] == 0, document["planner"]
        return str(document["hash"])
    lines = done.stderr.strip().splitlines()
    return f"exit {done.returncode}: {lines[0] if lines else ''}"


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_shipped_problem_gets_one_plan_hash_under_every_hash_seed(folder: str) -> None:
    names = _names(folder)
    assert names
    jobs = [(name, seed) for name in names for seed in SEEDS]
    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = list(pool.map(lambda job: _answer(folder, *job), jobs))
    found: dict[str, set[str]] = {}
    for (name, _), answer in zip(jobs, answers, strict=True):
        found.setdefault(name, set()).add(answer)
    several = {name: sorted(a) for name, a in found.items() if len(a) != 1}
    assert not several, json.dumps(several, indent=1)
    for name in names:
        if (folder, name) in KILLED:
            assert found[name] == {"killed while planning"}, name
    print(f"{folder}: {len(names)} problems, {len(jobs)} processes, one answer each")
