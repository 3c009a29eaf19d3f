"""Where runs are logged and how steps are executed: ``--log``, ``--executor``,
``--scheduler`` and ``--lease-ttl``, shared by ``run``, ``resume``, ``serve`` and ``mcp``; and
``--server-idle``, how long ``serve`` and ``mcp`` keep a tool server no run uses."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from plansmith.engine import Engine
    from plansmith.servers import WarmPools

__all__ = [
    "LogOpt",
    "ExecutorOpt",
    "SchedulerOpt",
    "LeaseTtlOpt",
    "ServerIdleOpt",
    "open_engine",
    "shares_log",
    "keep_servers_warm",
]

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

ServerIdleOpt = Annotated[
    float,
    typer.Option(
        "--server-idle",
        min=0.0,
        help="Seconds a tool server is kept running with no run using it (servers are "
        "kept between runs and binding checks; 0: stopped when their last run ends). "
        "Their error output goes to HOME/servers.log.",
    ),
]


def shares_log(log: str | None) -> bool:
    """Whether ``--log`` names a database other engines may share (PostgreSQL)."""
    from plansmith.execution import is_postgres_url

    return log is not None and is_postgres_url(log)


if TYPE_CHECKING:
    from plansmith.engine import open_engine
else:

    def open_engine(*args: Any, **options: Any) -> Engine:
        """``plansmith.engine.open_engine``, imported when first called (the engine
        imports the MCP SDK). The commands that read runs pass ``existing`` (a mistyped
        ``--home`` is an error, not a new, empty log) and ``read_only`` (a SQLite log is
        not written, and a home this process may not write can be read)."""
        from plansmith.engine import open_engine as open_

        return open_(*args, **options)


def keep_servers_warm(engine: Engine, executor: str, idle: float) -> WarmPools | None:
    """For a face that lives long (``serve``, ``mcp``) running steps here: the engine's
    tool servers kept warm between runs (``plansmith.servers.WarmPools``; their error
    output in ``HOME/servers.log``), to be closed (``aclose``) once the face's runs have
    ended. None for the dask executor, whose workers keep their own servers."""
    if executor != "local":
        return None
    from plansmith.servers import WarmPools

    warm = WarmPools(engine.home / "servers.log", idle_timeout=idle)
    engine.pool_factory = warm.factory
    return warm
