"""What each tool of the face says about itself to the host: a title and the MCP tool
annotations (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``, ``openWorldHint``).

Every hint is given explicitly (the spec's defaults are the cautious ones: an action
without hints counts as destructive and open-world). The title goes both in the tool's
``title`` and in its annotations' ``title``, which hosts of the 2025-03-26 era read.

    @server.tool(**reads("List domains"))
    @server.tool(**acts("Start a run", destructive=True, idempotent=True, open_world=True))
"""

from typing import TypedDict

from mcp.types import ToolAnnotations

__all__ = ["ToolHints", "acts", "reads"]


class ToolHints(TypedDict):
    """The keyword arguments of ``MCPServer.tool`` that describe a tool."""

    title: str
    annotations: ToolAnnotations


def reads(title: str, *, open_world: bool = False) -> ToolHints:
    """A tool that changes nothing: read-only, so not destructive and idempotent."""
    return _hints(title, read_only=True, destructive=False, idempotent=True, open_world=open_world)


def acts(title: str, *, destructive: bool, idempotent: bool, open_world: bool) -> ToolHints:
    """A tool that changes something: ``destructive`` if it may do more than add (a plan's
    write/execute steps, a cancellation), ``idempotent`` if the same call again changes
    nothing more, ``open_world`` if it reaches beyond plansmith's own records (tool
    servers, a model)."""
    return _hints(
        title,
        read_only=False,
        destructive=destructive,
        idempotent=idempotent,
        open_world=open_world,
    )


def _hints(
    title: str, *, read_only: bool, destructive: bool, idempotent: bool, open_world: bool
) -> ToolHints:
    return ToolHints(
        title=title,
        annotations=ToolAnnotations(
            title=title,
            read_only_hint=read_only,
            destructive_hint=destructive,
            idempotent_hint=idempotent,
            open_world_hint=open_world,
        ),
    )
