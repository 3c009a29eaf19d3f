"""Where runs are logged and how steps are executed: ``--log``, ``--executor``,
``--scheduler`` and ``--lease-ttl``, shared by ``run``, ``resume``, ``serve`` and ``mcp``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from plansmith.engine import Engine

__all__ = ["LogOpt", "ExecutorOpt", "SchedulerOpt", "LeaseTtlOpt", "open_engine", "shares_log"]

LogOpt = Annotated[
    str | None,
    typer.Option(
        "--log",
        envvar="PLANSMITH_LOG",
        help="Where the run log is: a SQLite file (default HOME/runs.db) or a "
        "postgresql://USER:PASSWORD@HOST:PORT/DATABASE URL shared by several engines "
        "(needs plansmith[postgres]).",
    ),
]
ExecutorOpt = Annotated[
    str,
    typer.Option(
        "--executor",
        help="local (steps run from this process) or dask (steps run on the workers of "
        "the Dask cluster at --scheduler; needs plansmith[dask]).",
    ),
]
SchedulerOpt = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        envvar="PLANSMITH_DASK_SCHEDULER",
        help="The Dask scheduler's address, e.g. tcp://127.0.0.1:8786 (with --executor dask).",
    ),
]
LeaseTtlOpt = Annotated[
    float,
    typer.Option(
        "--lease-ttl",
        min=1.0,
        help="Seconds a run's lease lasts unrenewed; another engine sharing the log may "
        "take the run over after that.",
    ),
]


def shares_log(log: str | None) -> bool:
    """Whether ``--log`` names a database other engines may share (PostgreSQL)."""
    from plansmith.execution import is_postgres_url

    return log is not None and is_postgres_url(log)


def open_engine(
    home: Path,
    *,
    log: str | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    lease_ttl: float = 30.0,
    existing: bool = False,
    read_only: bool = False,
) -> Engine:
    """The engine these options describe (see ``plansmith.engine.open_engine``). With
    ``existing`` (the commands that read runs), a SQLite run log must be there already:
    a mistyped ``--home`` is an error, not a new, empty log; with ``read_only`` (the
    commands that only read runs), a SQLite log is not written, and a home this process
    may not write can be read."""
    from plansmith.engine import open_engine as open_

    return open_(
        home,
        log=log,
        executor=executor,
        scheduler=scheduler,
        lease_ttl=lease_ttl,
        existing=existing,
        read_only=read_only,
    )
