"""``open_engine``: an engine over a SQLite or PostgreSQL log, local or on a Dask cluster."""

from __future__ import annotations

from pathlib import Path

from plansmith.engine._engine import Engine
from plansmith.errors import ExecutionError, InputError, Location
from plansmith.execution import open_run_log
from plansmith.servers import PoolFactory, dask_pool_factory

__all__ = ["open_engine"]


def open_engine(
    home: Path | str,
    *,
    log: str | Path | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    lease_ttl: float = 30.0,
    existing: bool = False,
    read_only: bool = False,
) -> Engine:
    """An engine whose run log is ``log`` (a SQLite file, default ``home/runs.db``, or a
    ``postgresql://`` URL) and whose steps run locally or on a Dask cluster (``executor``
    ``dask`` with the ``scheduler`` address). Bad combinations are ``InputError``s; with
    ``existing``, so is a SQLite run log that is not there; with ``read_only``, a SQLite
    run log is only read (see ``open_run_log``)."""
    if executor not in ("local", "dask"):
        raise InputError(f"--executor {executor!r}: unknown", hint="use local or dask")
    if executor == "local" and scheduler:
        raise InputError(
            "--scheduler is only for --executor dask", hint="add --executor dask, or drop it"
        )
    pool_factory: PoolFactory | None = None
    if executor == "dask":
        if not scheduler:
            raise InputError(
                "--executor dask needs the cluster's scheduler address",
                hint="add --scheduler tcp://HOST:PORT (or set PLANSMITH_DASK_SCHEDULER)",
            )
        pool_factory = dask_pool_factory(scheduler)
    try:
        run_log = open_run_log(log, Path(home), existing=existing, read_only=read_only)
    except OSError as error:  # e.g. a file where the home's directory should be
        raise ExecutionError(
            f"cannot make the run log's directory: {error.strerror or error}",
            location=Location(str(error.filename or home)),
            hint="runs are kept under --home (or PLANSMITH_HOME): give a directory plansmith"
            " can write",
        ) from None
    return Engine(home, log=run_log, pool_factory=pool_factory, lease_ttl=lease_ttl)
