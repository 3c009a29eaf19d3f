"""The chaos suite (bench/chaos.py), short: 3 SIGKILLs of the engine, resumed, and each
server fault once; docs/benchmarks.md, Chaos suite, has the full run (50 kills, 40 faults).

One test (one run of the suite, which pytest-xdist does not split): it checks every bar
and lists each one missed. Unlike the benchmark it gives each call a 10 s timeout and a
4 MB huge answer, so that it stays short and loose on a loaded machine (the benchmark's
2 s and 20 MB: docs/benchmarks.md); seed 21 aims its first kill at the servers' start-up.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

CHAOS = Path(__file__).resolve().parents[2] / "bench" / "chaos.py"
KINDS = ("kill", "hang", "stall", "utf8", "schema", "is_error", "huge", "deep")
BEFORE_BOUND = "before the plan was bound (servers starting)"


def run_suite(work: Path) -> dict[str, Any]:
    args = [sys.executable, str(CHAOS), "--trials", "3", "--faults", str(len(KINDS))]
    args += ["--kinds", ",".join(KINDS), "--seed", "21", "--jobs", "4", "--timeout", "10"]
    args += ["--huge-mb", "4", "--json", "--work", str(work)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode in (0, 1), f"exit {done.returncode}: {done.stderr[-3000:]}"
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def missed(suite: dict[str, Any]) -> list[str]:
    """Every bar the suite's run missed, with the trial that missed it."""
    problems = [f"the suite's own bars: {m}" for m in suite["missed"]]
    kills, faults = suite["kills"], suite["faults"]
    if len(kills) != 3 or sorted(f["kind"] for f in faults) != sorted(KINDS):
        problems.append(f"not the trials asked for: {len(kills)} kills, {len(faults)} faults")
    if BEFORE_BOUND not in [k["point"] for k in kills]:
        problems.append(f"no kill landed while the servers started: {[k['point'] for k in kills]}")
    for trial in kills:
        name = f"kill {trial['n']} ({trial['point']})"
        if not trial["resumed"]:
            problems.append(f"{name}: not resumed: {trial['resumes']} {trial['error']}")
        problems += [
            f"{name}: {w}: {trial[w]}" for w in ("duplicates", "lost", "orphans") if trial[w]
        ]
    for run in faults:
        name = f"fault {run['kind']} at {run['at']}"
        if not run["fired"]:
            problems.append(f"{name}: the fault did not fire")
        if run["misclassified"]:
            problems.append(f"{name}: {run['observed']}: {run['misclassified']}")
        problems += [f"{name}: {w}: {run[w]}" for w in ("hangs", "duplicates", "lost") if run[w]]
        if run["kind"] == "utf8" and not run["bystanders"]:
            problems.append(f"{name}: no call was in flight beside the bad answer")
        if run["error"]:
            problems.append(f"{name}: {run['error']}")
    return problems


def test_the_short_chaos_suite_meets_every_bar(tmp_path: Path) -> None:
    problems = missed(run_suite(tmp_path))
    assert not problems, "\n".join(problems)
