"""The source servers of research runs: one ``plansmith-corpus`` per source, shared.

:class:`SourceServers` indexes every source first (in a worker thread, so a
large corpus does not run into the pool's start-up timeout), then starts one
server per source with ``--no-index`` in the engine's :class:`ServerPool`, each
limited to its quota's ``max_in_flight`` calls at once. The pool lives in its
own task until :meth:`SourceServers.aclose`; calls come from any run's task.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio

from plansmith.domains.research import index_source, server_config
from plansmith.domains.research.desk._quota import SourceQuota
from plansmith.errors import ExecutionError, PlansmithError
from plansmith.execution import ToolResult
from plansmith.servers import ServerPool, ServersConfig, parse_servers

__all__ = ["SourceServers"]


class SourceServers:
    """See the module. ``sources``: name -> folder; state (indexes, call logs) in
    ``state_dir``."""

    def __init__(
        self,
        sources: Mapping[str, Path],
        state_dir: Path,
        quota: Mapping[str, SourceQuota],
        *,
        excludes: Mapping[str, tuple[str, ...]] | None = None,
        python: str | None = None,
    ) -> None:
        self.sources = dict(sources)
        self.state_dir = state_dir
        self.excludes = dict(excludes or {})
        state_dir.mkdir(parents=True, exist_ok=True)
        data: Any = server_config(self.sources, state_dir, python=python, excludes=excludes)
        for name, entry in data["mcpServers"].items():
            entry["args"].append("--no-index")
            entry["maxInFlight"] = quota[name].max_in_flight
        self.config: ServersConfig = parse_servers(json.dumps(data), source="research sources")
        self._pool: ServerPool | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._keeper: asyncio.Task[None] | None = None
        self._error: PlansmithError | None = None

    def log_path(self, source: str) -> Path:
        """The JSONL call log of ``source``'s server."""
        return (self.state_dir / f"{source}.calls.jsonl").resolve()

    def db_path(self, source: str) -> Path:
        return (self.state_dir / f"{source}.sqlite").resolve()

    def _index_all(self) -> None:
        for name, root in self.sources.items():
            excluded = self.excludes.get(name, ())
            index_source(root, self.db_path(name), source=name, exclude=excluded)

    async def _keep(self) -> None:
        try:
            with (self.state_dir / "servers.log").open("a") as errlog:
                await anyio.to_thread.run_sync(self._index_all)
                async with ServerPool(self.config, errlog=errlog) as pool:
                    await pool.start()
                    self._pool = pool
                    self._ready.set()
                    await self._stop.wait()
        except PlansmithError as error:
            self._error = error
        except OSError as error:
            self._error = ExecutionError(f"the source servers could not start: {error}")
        finally:
            self._pool = None
            self._ready.set()

    async def pool(self) -> ServerPool:
        """The running pool (indexing and starting the servers on first use)."""
        if self._keeper is None:
            self._keeper = asyncio.get_running_loop().create_task(self._keep())
        await self._ready.wait()
        if self._pool is None:
            raise self._error or ExecutionError(
                "the source servers have stopped", hint="start the research service again"
            )
        return self._pool

    async def call(self, server: str, tool: str, arguments: dict[str, Any], key: str) -> ToolResult:
        pool = await self.pool()
        return await pool.call(server, tool, arguments, key=key)

    async def aclose(self) -> None:
        """Stop the servers (their stdin is closed, then they are terminated)."""
        if self._keeper is not None:
            self._stop.set()
            await asyncio.wait({self._keeper})
            self._keeper = None
