"""Learned costs change a choice: two tools do one job, and the one declared cheaper
fails half the time in the recorded runs. After 20 runs, ``plansmith plan --costs
learned`` takes the other one; both plans are valid (``plansmith validate``), and
their hashes differ (the costs used are part of the plan)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio

from _shared_servers import binding, servers_json
from plansmith.engine import Engine, RunInputs

RUNS = 20
DOMAIN = """\
domain: fetch
types: {doc: object}
predicates:
  wanted: [doc]
  done: [doc]
actions:
  fetch_cheap:
    parameters: {d: doc}
    precondition: [wanted(d)]
    effect: [done(d)]
    cost: 1
    tier: read
  fetch_sure:
    parameters: {d: doc}
    precondition: [wanted(d)]
    effect: [done(d)]
    cost: 1.3
    tier: read
"""
# both call the same tool (the same durations): only the failures tell them apart
BINDINGS = (
    "bindings:\n"
    + binding("fetch_cheap", "echo", '{x: "${d}"}')
    + binding("fetch_sure", "echo", '{x: "${d}-sure"}')
)


def _problem(doc: str) -> str:
    return (
        f"problem: p\ndomain: fetch\nobjects: {{{doc}: doc}}\n"
        f"init: [wanted({doc})]\ngoal: [done({doc})]\n"
    )


def _plansmith(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plansmith", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_after_20_runs_where_the_cheaper_tool_fails_half_the_time_learned_costs_take_the_other(
    tmp_path: Path,
) -> None:
    refused = "|".join(f"d{k}" for k in range(0, RUNS, 2))  # the cheap tool fails on these
    (tmp_path / "domain.yaml").write_text(DOMAIN)
    (tmp_path / "bindings.yaml").write_text(BINDINGS)
    (tmp_path / "servers.json").write_text(servers_json(env={"COUNTER_ECHO_REFUSES": refused}))
    for k in range(RUNS):
        (tmp_path / f"p{k}.yaml").write_text(_problem(f"d{k}"))
    (tmp_path / "any.yaml").write_text(_problem("x"))

    async def record() -> list[str]:
        engine = Engine(tmp_path / "home")
        outcomes = []
        try:
            for k in range(RUNS):
                inputs = RunInputs(
                    tmp_path / "domain.yaml",
                    tmp_path / f"p{k}.yaml",
                    tmp_path / "servers.json",
                    tmp_path / "bindings.yaml",
                )
                outcomes.append((await engine.run(inputs, approve=True)).state)
        finally:
            engine.close()
        return outcomes

    assert anyio.run(record) == ["succeeded"] * RUNS  # a failure: replanned to the other
    stats = _plansmith("stats", "--home", "home", "--json", cwd=tmp_path)
    assert stats.returncode == 0, stats.stderr
    rows = [json.loads(line) for line in stats.stdout.splitlines() if line.strip()]
    by_action = {row["action"]: row for row in rows}
    assert (by_action["fetch_cheap"]["calls"], by_action["fetch_cheap"]["succeeded"]) == (20, 10)
    assert (by_action["fetch_sure"]["calls"], by_action["fetch_sure"]["succeeded"]) == (10, 10)

    plans = {}
    for costs in ("declared", "learned"):
        done = _plansmith(
            "plan", "domain.yaml", "any.yaml", "--search", "astar", "--heuristic", "lmcut",
            "--costs", costs, "--home", "home", "--format", "json", "-o", f"{costs}.json",
            cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        plans[costs] = json.loads((tmp_path / f"{costs}.json").read_text())
        valid = _plansmith(
            "validate", "domain.yaml", "any.yaml", f"{costs}.json", "--costs", costs,
            "--home", "home", cwd=tmp_path,
        )  # fmt: skip
        assert valid.returncode == 0, valid.stderr
    assert [s["action"] for s in plans["declared"]["steps"]] == ["fetch_cheap"]
    assert [s["action"] for s in plans["learned"]["steps"]] == ["fetch_sure"]
    assert plans["declared"]["hash"] != plans["learned"]["hash"]
    # a plan made with learned costs is for the domain with those costs: not the declared
    mixed = _plansmith("validate", "domain.yaml", "any.yaml", "learned.json", cwd=tmp_path)
    assert mixed.returncode == 1
    assert "hint: plan again for this domain" in mixed.stderr
    # explain says which costs were learned, and from how many calls and runs
    told = _plansmith(
        "explain", "domain.yaml", "any.yaml", "learned.json", "--costs", "learned",
        "--home", "home", cwd=tmp_path,
    )  # fmt: skip
    assert told.returncode == 0, told.stderr
    assert "cost fetch_cheap: " in told.stdout
    assert "learned from 20 call(s) in 20 run(s)" in told.stdout
    assert "10/20 calls succeeded" in told.stdout
