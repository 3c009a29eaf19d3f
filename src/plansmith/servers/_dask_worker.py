"""The worker side of the Dask executor: a plugin that holds a pool of MCP sessions on
each worker, and the task functions that :class:`~plansmith.servers.DaskPool` submits.

This module imports ``distributed`` (the plugin must subclass its ``WorkerPlugin``), so
only ``_dask`` imports it, lazily; workers import it when they unpickle the plugin and
the tasks. A worker hosts server ``S`` by declaring the resource ``mcp:S`` (see
docs/scale-out.md); every task for ``S`` asks for one unit of it, so Dask runs it only
on such a worker, where the plugin's :class:`ServerPool` spawns the stdio server (or
reaches the HTTP server) on first use and keeps the session for later calls.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

from distributed import Worker, WorkerPlugin, get_worker

from plansmith.errors import PlansmithError, ToolCallError
from plansmith.execution import ErrorClass
from plansmith.servers._config import ServersConfig
from plansmith.servers._pool import ServerPool

__all__ = [
    "RESOURCE_PREFIX",
    "McpWorkerPlugin",
    "resource_name",
    "list_tools_task",
    "call_tool_task",
    "set_allowed_failures",
]

#: a worker that declares the resource ``mcp:NAME`` hosts the server ``NAME``
RESOURCE_PREFIX = "mcp:"


def resource_name(server: str) -> str:
    """The Dask worker resource that marks a worker as hosting ``server``."""
    return RESOURCE_PREFIX + server


class McpWorkerPlugin(WorkerPlugin):
    """Holds a :class:`ServerPool` over ``config`` on one worker, from setup to teardown.

    ``idempotent``: registering a plugin of the same name (the same servers config)
    again keeps the running one, so a second run shares the warm sessions.
    """

    idempotent = True

    def __init__(self, config: ServersConfig, name: str) -> None:
        self.config = config
        self.name = name
        self._reset()

    def _reset(self) -> None:
        self.pool: ServerPool | None = None
        self._stop: asyncio.Event | None = None
        self._host: asyncio.Task[None] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config, "name": self.name}  # not the worker-side state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.config, self.name = state["config"], state["name"]
        self._reset()

    async def setup(self, worker: Worker) -> None:
        # The pool's task group must be left by the task that entered it: one host task.
        ready, self._stop = asyncio.Event(), asyncio.Event()
        self._host = asyncio.create_task(self._hold(ready, self._stop))
        await ready.wait()

    async def _hold(self, ready: asyncio.Event, stop: asyncio.Event) -> None:
        try:
            async with ServerPool(self.config) as pool:
                self.pool = pool
                ready.set()
                await stop.wait()
        finally:
            self.pool = None
            ready.set()

    async def teardown(self, worker: Worker) -> None:
        if self._stop is not None and self._host is not None:
            self._stop.set()
            await self._host


def _pool(plugin_name: str) -> ServerPool:
    plugin = get_worker().plugins.get(plugin_name)
    pool = plugin.pool if isinstance(plugin, McpWorkerPlugin) else None
    if pool is None:
        raise ToolCallError(
            ErrorClass.TRANSPORT_LOST,
            f"the worker has no MCP server pool {plugin_name!r} (it is starting or closing)",
        )
    return pool


async def list_tools_task(plugin_name: str, server: str) -> dict[str, Any]:
    """Start ``server`` on this worker; its tools, or the start-up error's text."""
    try:
        catalog = await _pool(plugin_name).start((server,))
    except PlansmithError as error:
        return {"error": error.message, "hint": error.hint}
    tools = dict(catalog.servers).get(server, ())
    return {
        "tools": [
            {
                "name": t.name,
                "input_schema": t.input_schema,
                "output_schema": t.output_schema,
                "description": t.description,
                "title": t.title,
                "annotations": t.annotations,
            }
            for t in tools
        ]
    }


async def call_tool_task(plugin_name: str, request: str) -> dict[str, Any]:
    """One tool call on this worker's pool; ``request`` is JSON (so that Dask does not
    look into the arguments for keys). Returns the result, or the failure and its class:
    exceptions are not pickled back (they would lose their class and flags)."""
    data = json.loads(request)
    topic, call_id = data.get("topic"), data.get("call")

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        event = {"call": call_id, "progress": progress, "total": total, "message": message}
        get_worker().log_event(cast(str, topic), event)

    try:
        result = await _pool(plugin_name).call(
            data["server"],
            data["tool"],
            data["arguments"],
            key=data.get("key"),
            on_progress=on_progress if topic else None,
            meta=data.get("meta"),
        )
    except ToolCallError as error:
        return {
            "error_class": error.error_class,
            "message": error.message,
            "retryable": error.retryable,
            "progressed": error.progressed,
        }
    return {"result": result.to_dict()}


def set_allowed_failures(count: int, dask_scheduler: Any) -> int:
    """Run on the scheduler: how many worker deaths a task survives (was: the result)."""
    before = int(dask_scheduler.allowed_failures)
    dask_scheduler.allowed_failures = count
    return before
