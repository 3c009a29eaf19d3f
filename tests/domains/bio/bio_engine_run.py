"""Run a goal of the bio domain through the engine on the real server, recording every
event (the typed event objects). Imported by the engine tests next to it."""

from __future__ import annotations

import json
import stat
from collections.abc import Collection
from pathlib import Path
from typing import Any

import anyio

from plansmith.domains import bio
from plansmith.engine import Engine, InvokerFactory, RunInputs
from plansmith.execution import Asker, Event, PlanReady, RunOutcome, StepSucceeded

__all__ = [
    "INPUTS",
    "run_goal",
    "succeeded_actions",
    "outputs_of",
    "failing_blast_dir",
    "ancestors",
]

INPUTS = {"gene": bio.DATA_DIR / "query.gb", "family": bio.DATA_DIR / "family.fasta"}


def run_goal(
    home: Path,
    available: Collection[str],
    *,
    server_path: str | None = None,
    goal: str = "full family report",
    max_parallel: int = 8,
    invoker_factory: InvokerFactory | None = None,
    asker: Asker | None = None,
) -> tuple[RunOutcome, list[Event]]:
    """Plan ``goal`` with ``available`` programs, run it (``max_parallel`` steps at a
    time at most; its tools called through ``invoker_factory``'s invoker, if given); the
    outcome and all events."""
    problem = bio.write_problem(home / "problem.yaml", goal, INPUTS, available=available)
    config: Any = bio.server_config(INPUTS, home)
    if server_path is not None:
        config["mcpServers"]["bio"]["env"]["PATH"] = server_path
    (home / "servers.json").write_text(json.dumps(config))
    inputs = RunInputs(
        bio.DOMAIN_DIR / "domain.yaml",
        problem,
        home / "servers.json",
        bio.DOMAIN_DIR / "bindings.yaml",
    )
    events: list[Event] = []

    async def go() -> RunOutcome:
        engine = Engine(home, invoker_factory=invoker_factory, asker=asker)
        try:
            return await engine.run(inputs, max_parallel=max_parallel, subscribe=events.append)
        finally:
            engine.close()

    return anyio.run(go), events


def succeeded_actions(events: list[Event]) -> list[str]:
    return [e.action for e in events if isinstance(e, StepSucceeded)]


def outputs_of(outcome: RunOutcome, events: list[Event], action: str) -> dict[str, Any]:
    """The outputs of the (first) step of ``action`` that succeeded."""
    step = next(e.step for e in events if isinstance(e, StepSucceeded) and e.action == action)
    value = outcome.outputs[step]
    assert isinstance(value, dict)
    return value


def failing_blast_dir(home: Path) -> Path:
    """A directory whose BLAST+ programs exist but exit 3 (put it first on PATH)."""
    folder = home / "failing-blast"
    folder.mkdir()
    for program in ("makeblastdb", "blastn", "blastdbcmd"):
        path = folder / program
        path.write_text(f"#!/bin/sh\necho '{program}: broken on purpose' >&2\nexit 3\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return folder


def ancestors(events: list[Event]) -> dict[str, tuple[str, set[str]]]:
    """For each step of the first bound plan: its action and every step it comes after
    (transitively), over the bound DAG the runner follows (causal and data edges)."""
    ready = next(e for e in events if isinstance(e, PlanReady))
    steps: Any = ready.bound["steps"]
    after = {s["id"]: set(s["after"]) for s in steps}
    closure: dict[str, set[str]] = {}

    def up(step: str) -> set[str]:
        if step not in closure:
            closure[step] = set().union(*({a} | up(a) for a in after[step]))
        return closure[step]

    return {s["id"]: (s["action"], up(s["id"])) for s in steps}
