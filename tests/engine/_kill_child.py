"""Child process for the SIGKILL test: run a plan and print one JSON line per event."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio

from plansmith.engine import Engine, RunInputs
from plansmith.execution import Event


def main() -> None:
    home, run_id, *files = sys.argv[1:]
    inputs = RunInputs(*(Path(f) for f in files))
    engine = Engine(home)

    def show(event: Event) -> None:
        sys.stdout.write(json.dumps(event.to_dict()) + "\n")
        sys.stdout.flush()

    async def go() -> None:
        await engine.run(inputs, approve=True, subscribe=show, run_id=run_id, max_parallel=2)

    anyio.run(go)


if __name__ == "__main__":
    main()
