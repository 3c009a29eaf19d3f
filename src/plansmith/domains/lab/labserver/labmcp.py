"""The MCP face of ``plansmith-lab`` (mcp 1.x FastMCP): one tool per entry of ``labtools``.

Each tool forwards its validated arguments, with the idempotency key from the
request ``_meta`` (``io.plansmith/idempotency-key``), to a robot: the one in this
process, or the shared robot process (``labhub.Hub``). A refused call becomes
an ``isError`` result that carries the simulator's message.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from labtools import ToolSpec, tools_for
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import ToolAnnotations

__all__ = ["IDEMPOTENCY_KEY", "Robot", "Local", "build", "serve"]

IDEMPOTENCY_KEY = "io.plansmith/idempotency-key"
_READ_ONLY = {"get_deck_state", "get_run_log"}


class Robot(Protocol):
    """Runs one tool: ``(True, result JSON)`` or ``(False, why it was refused)``."""

    async def answer(
        self, tool: str, args: dict[str, Any], key: str | None
    ) -> tuple[bool, str]: ...


class Local:
    """The robot in this process (``labrobot.Robot``), called on the event loop's thread."""

    def __init__(self, robot: Any) -> None:
        self._robot = robot

    async def answer(self, tool: str, args: dict[str, Any], key: str | None) -> tuple[bool, str]:
        ok, text = self._robot.answer(tool, args, key)
        return bool(ok), str(text)


def _key(ctx: Context[Any, Any, Any]) -> str | None:
    meta = ctx.request_context.meta
    extra = (meta.model_extra or {}) if meta is not None else {}
    key = extra.get(IDEMPOTENCY_KEY)
    return key if isinstance(key, str) and key else None


def _handler(spec: ToolSpec, robot: Robot) -> Callable[..., Awaitable[str]]:
    async def handler(ctx: Context[Any, Any, Any], **arguments: Any) -> str:
        ok, text = await robot.answer(spec.name, arguments, _key(ctx))
        if not ok:
            raise ToolError(text)
        return text

    ctx_param = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
    params = [
        p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in spec.signature.parameters.values()
    ]
    handler.__signature__ = inspect.Signature([ctx_param, *params])  # type: ignore[attr-defined]
    handler.__name__ = spec.name
    handler.__doc__ = spec.description
    return handler


def build(role: str, robot: Robot) -> FastMCP:
    """The MCP server of one role (``movement``, ``liquid``, ``modules`` or ``all``)."""
    name = "plansmith-lab" if role == "all" else f"plansmith-lab-{role}"
    server = FastMCP(
        name,
        instructions=(
            "An Opentrons Flex on the Opentrons protocol simulator. Load modules, labware and "
            "pipettes first; refer to them by the names you gave (or by slot and mount)."
        ),
        log_level="ERROR",
    )
    for spec in tools_for(role):
        annotations = ToolAnnotations(
            readOnlyHint=spec.name in _READ_ONLY,
            destructiveHint=spec.name == "reset_robot",
            idempotentHint=spec.name in _READ_ONLY,
            openWorldHint=False,
        )
        server.add_tool(
            _handler(spec, robot),
            name=spec.name,
            description=spec.description,
            annotations=annotations,
        )
    return server


async def serve(server: FastMCP, on_exit: Callable[[], Awaitable[None]] | None = None) -> None:
    """Serve ``server`` on stdio until the client closes stdin, then run ``on_exit``."""
    try:
        await server.run_stdio_async()
    finally:
        if on_exit is not None:
            await on_exit()
