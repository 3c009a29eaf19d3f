"""Child process for the boundary SIGKILL test: run a plan and kill itself with SIGKILL
as soon as the given event (its Nth of that type) is in the log.

Events are durable before views hear them, so the kill lands exactly after that event:
``RunCreated`` (the servers are starting), ``PlanReady``, ``PlanApproved``,
``StepStarted`` (a call in flight), the last ``StepSucceeded``.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio

from plansmith.engine import Engine, RunInputs
from plansmith.execution import Event, PlanReady


def main() -> None:
    home, run_id, boundary, nth, *files = sys.argv[1:]
    inputs = RunInputs(*(Path(f) for f in files))
    engine = Engine(home)
    seen: dict[str, int] = {}
    steps = [0]

    def kill_at_boundary(event: Event) -> None:
        if isinstance(event, PlanReady):
            steps[0] = len(event.plan.get("steps", []))  # type: ignore[arg-type]
        seen[event.type] = seen.get(event.type, 0) + 1
        wanted = steps[0] if nth == "last" else int(nth)
        if event.type == boundary and seen[event.type] == wanted:
            os.kill(os.getpid(), signal.SIGKILL)

    async def go() -> None:
        await engine.run(
            inputs, approve=True, subscribe=kill_at_boundary, run_id=run_id, max_parallel=2
        )

    anyio.run(go)


if __name__ == "__main__":
    main()
