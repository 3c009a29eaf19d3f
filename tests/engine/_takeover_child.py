"""Engine A of the two-engine test: run a plan on a PostgreSQL run log with short
leases, printing one JSON line per event. Args: URL HOME RUN_ID TTL RENEW FILES..."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio

from plansmith.engine import Engine, RunInputs
from plansmith.execution import Event, PostgresRunLog


def main() -> None:
    url, home, run_id, ttl, renew, *files = sys.argv[1:]
    engine = Engine(home, log=PostgresRunLog(url), lease_ttl=float(ttl), lease_renew=float(renew))

    def show(event: Event) -> None:
        sys.stdout.write(json.dumps(event.to_dict()) + "\n")
        sys.stdout.flush()

    async def go() -> None:
        inputs = RunInputs(*(Path(f) for f in files))
        await engine.run(inputs, approve=True, subscribe=show, run_id=run_id, max_parallel=1)

    anyio.run(go)


if __name__ == "__main__":
    main()
