"""``plansmith stats`` over a real run log, and ``plansmith plan --costs learned``: two
tools reach the same fact; the one declared cheaper is slow in practice (it sleeps), so
once the log has seen both, the learned costs make A* choose the other."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from _shared_servers import binding, servers_json

DOMAIN = """\
domain: fetch
types: {doc: object}
predicates:
  wanted: [doc]
  done: [doc]
  via_slow: [doc]
  via_quick: [doc]
actions:
  fetch_slow:
    parameters: {d: doc}
    precondition: [wanted(d)]
    effect: [done(d), via_slow(d)]
    cost: 1
    tier: read
  fetch_quick:
    parameters: {d: doc}
    precondition: [wanted(d)]
    effect: [done(d), via_quick(d)]
    cost: 2
    tier: read
"""
BINDINGS = (
    "bindings:\n"
    + binding("fetch_slow", "sleep", "{seconds: 0.3}")
    + binding("fetch_quick", "echo", '{x: "${d}"}')
)


def _problem(goal: str) -> str:
    return (
        "problem: p\ndomain: fetch\nobjects: {a: doc, b: doc, c: doc}\n"
        f"init: [wanted(a), wanted(b), wanted(c)]\ngoal: [{goal}]\n"
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


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "domain.yaml").write_text(DOMAIN)
    (tmp_path / "bindings.yaml").write_text(BINDINGS)
    (tmp_path / "servers.json").write_text(servers_json())
    for name, goal in [("slow", "via_slow(a)"), ("quick", "via_quick(b)"), ("any", "done(c)")]:
        (tmp_path / f"{name}.yaml").write_text(_problem(goal))
    return tmp_path


def _plan_actions(folder: Path, *extra: str) -> tuple[list[str], str]:
    done = _plansmith(
        "plan", "domain.yaml", "any.yaml", "--search", "astar", "--heuristic", "lmcut",
        "--format", "json", *extra, cwd=folder,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [s["action"] for s in json.loads(done.stdout)["steps"]], done.stderr


def _run_each_tool_twice(folder: Path) -> None:
    """Four runs into ``home``: the slow tool's goal and the quick tool's, twice each."""
    for problem in ("slow.yaml", "quick.yaml", "slow.yaml", "quick.yaml"):
        run = _plansmith(
            "run", "domain.yaml", problem, "-s", "servers.json", "-b", "bindings.yaml",
            "--yes", "--home", "home", cwd=folder,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr


def test_stats_count_each_tool_and_learned_costs_choose_the_faster_tool(folder: Path) -> None:
    declared, _ = _plan_actions(folder)
    assert declared == ["fetch_slow"]  # declared 1 < 2
    _run_each_tool_twice(folder)

    listed = _plansmith("stats", "--home", "home", "--json", cwd=folder)
    assert listed.returncode == 0, listed.stderr
    rows = {r["action"]: r for r in map(json.loads, listed.stdout.splitlines())}
    assert set(rows) == {"fetch_slow", "fetch_quick"}
    slow, quick = rows["fetch_slow"], rows["fetch_quick"]
    assert (slow["tool"], slow["server"], slow["calls"], slow["succeeded"]) == (
        "sleep", "counter", 2, 2
    )  # fmt: skip
    assert (quick["tool"], quick["calls"], quick["runs"], quick["failed"]) == ("echo", 2, 2, {})
    assert slow["p50_ms"] >= 300  # it sleeps 0.3 s
    assert slow["p50_ms"] > quick["p50_ms"]

    learned, said = _plan_actions(folder, "--costs", "learned", "--home", "home")
    assert learned == ["fetch_quick"]
    assert "cost fetch_slow:" in said
    assert "learned from 2 call(s) in 2 run(s)" in said

    table = _plansmith("stats", "--home", "home", cwd=folder)
    assert "fetch_slow" in table.stdout
    assert "sleep" in table.stdout


def test_stats_of_a_home_with_no_log_is_a_typed_error(tmp_path: Path) -> None:
    done = _plansmith("stats", "--home", "nowhere", cwd=tmp_path)
    assert done.returncode == 2
    assert "error:" in done.stderr


def _ran(folder: Path, *extra: str) -> tuple[list[str], str, dict[str, object]]:
    """Run ``any.yaml`` (the goal either tool reaches); the actions its steps ran, what
    it said on stderr, and the inputs it recorded."""
    from plansmith.engine import Engine
    from plansmith.execution import StepSucceeded

    run = _plansmith(
        "run", "domain.yaml", "any.yaml", "-s", "servers.json", "-b", "bindings.yaml",
        "--yes", "--home", "home", *extra, cwd=folder,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    engine = Engine(folder / "home")
    try:
        info = engine.log.runs()[-1]
        done = [e.action for e in engine.log.events(info.run_id) if isinstance(e, StepSucceeded)]
    finally:
        engine.close()
    return done, run.stderr, dict(info.inputs)


def test_a_run_with_learned_costs_takes_the_faster_tool_and_records_the_costs(
    folder: Path,
) -> None:
    _run_each_tool_twice(folder)
    declared, _, inputs = _ran(folder)
    assert declared == ["fetch_slow"]
    assert "costs" not in inputs
    learned, said, inputs = _ran(folder, "--costs", "learned")
    assert learned == ["fetch_quick"]
    assert "cost fetch_slow:" in said
    assert "learned from 3 call(s) in 3 run(s)" in said  # the declared run's call counts
    costs = inputs["costs"]
    assert isinstance(costs, dict)
    assert set(costs) == {"fetch_slow", "fetch_quick"}
    assert costs["fetch_slow"] > costs["fetch_quick"]
