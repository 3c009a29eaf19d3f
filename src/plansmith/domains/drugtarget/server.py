"""Eight MCP servers shaped like Augmented Nature's public biomedical ones, answering from
a small shipped demonstration data set (``data/``).

Each server lists exactly the tools of its public counterpart, names, descriptions and
input schemas as recorded in ``public/<source>.json`` (transcribed from the public
server's ``src/index.ts``), and answers like it: one text content holding
``JSON.stringify(apiResponse, null, 2)`` of the real API's response shape, the same
isError texts and the same JSON-RPC errors. So bindings written against these servers
work against the public ones by changing only ``servers.json``. Tools whose data the set
does not hold check their arguments against the schema and answer an empty result.

Run: ``plansmith-drugtarget SOURCE`` or ``python -m plansmith.domains.drugtarget.server
SOURCE`` (stdio), SOURCE one of opentargets, uniprot, reactome, kegg, pdb, alphafold,
chembl, pubmed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import jsonschema
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from plansmith.domains.drugtarget import (
    _alphafold,
    _chembl,
    _kegg,
    _opentargets,
    _pdb,
    _pubmed,
    _reactome,
    _uniprot,
)
from plansmith.domains.drugtarget._base import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    ApiHttpError,
    Handler,
    JsError,
    Reply,
    Style,
    ThrownMcpError,
    public,
    reply,
)

__all__ = ["SOURCES", "answer", "create_server", "main", "public_tools"]


@dataclass(frozen=True)
class _Source:
    style: Style
    handlers: Mapping[str, Handler]


_SOURCES: dict[str, _Source] = {
    "opentargets": _Source(_opentargets.STYLE, _opentargets.HANDLERS),
    "uniprot": _Source(_uniprot.STYLE, _uniprot.HANDLERS),
    "reactome": _Source(_reactome.STYLE, _reactome.HANDLERS),
    "kegg": _Source(_kegg.STYLE, _kegg.HANDLERS),
    "pdb": _Source(_pdb.STYLE, _pdb.HANDLERS),
    "alphafold": _Source(_alphafold.STYLE, _alphafold.HANDLERS),
    "chembl": _Source(_chembl.STYLE, _chembl.HANDLERS),
    "pubmed": _Source(_pubmed.STYLE, _pubmed.HANDLERS),
}
#: the sources, in the order of the drug target discovery pipeline
SOURCES: tuple[str, ...] = tuple(_SOURCES)

#: what a tool without data in the set answers (its arguments fit its schema)
EMPTY = {"results": [], "note": "no data for this tool in the plansmith demonstration data set"}


def public_tools(source: str) -> list[dict[str, Any]]:
    """The public server's tools (name, description, inputSchema) as recorded."""
    tools: list[dict[str, Any]] = public(source)["tools"]
    return tools


def _fallback(schema: Mapping[str, Any]) -> Handler:
    def handler(args: Any) -> Reply:
        try:
            jsonschema.validate(args if args is not None else {}, schema)
        except jsonschema.ValidationError:
            raise ThrownMcpError(INVALID_PARAMS, "Invalid arguments") from None
        return reply(EMPTY)

    return handler


def _handler(source: str, tool: str) -> Handler:
    known = _SOURCES[source].handlers.get(tool)
    if known is not None:
        return known
    schema = next((t["inputSchema"] for t in public_tools(source) if t["name"] == tool), None)
    if schema is None:
        raise ThrownMcpError(METHOD_NOT_FOUND, f"Unknown tool: {tool}")
    return _fallback(schema)


def answer(source: str, tool: str, args: Any) -> Reply:
    """The reply of ``source``'s server to a call of ``tool``; a JSON-RPC error is raised
    as ``MCPError`` with the public server's code and message."""
    style = _SOURCES[source].style
    try:
        return _handler(source, tool)(args)
    except (ThrownMcpError, JsError, ApiHttpError) as error:
        code = error.code if isinstance(error, ThrownMcpError) else INTERNAL_ERROR
        message = error.js_message
    except Exception as error:  # a bug here must not end the server: say so, as text
        print(f"drugtarget {source}: {tool} failed: {error!r}", file=sys.stderr)
        return Reply(f"Error executing tool {tool}: {type(error).__name__}: {error}", is_error=True)
    if style == "wrap":
        return Reply(f"Error executing tool {tool}: {message}", is_error=True)
    if style == "internal":
        raise MCPError(
            INTERNAL_ERROR, f"MCP error {INTERNAL_ERROR}: Tool execution failed: {message}"
        )
    raise MCPError(code, message)


def create_server(source: str) -> Server[Any]:
    """The low-level server of ``source`` (tools registered with their recorded schemas)."""
    if source not in _SOURCES:
        raise ValueError(f"unknown source {source!r}: one of {', '.join(SOURCES)}")
    record = public(source)
    tools = [
        types.Tool(name=t["name"], description=t.get("description"), input_schema=t["inputSchema"])
        for t in public_tools(source)
    ]

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        result = answer(source, params.name, params.arguments)
        content: list[types.ContentBlock] = [types.TextContent(type="text", text=result.text)]
        return types.CallToolResult(content=content, is_error=result.is_error)

    return Server(
        str(record["server_name"]),
        version="0.1.0",
        instructions=(
            f"plansmith demonstration server shaped like {record['repository']} "
            f"(commit {str(record['commit'])[:12]}); answers from a small shipped data set."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _serve(source: str) -> None:
    server = create_server(source)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m plansmith.domains.drugtarget.server",
        description="An MCP server (stdio) shaped like a public biomedical one, over demo data.",
    )
    parser.add_argument("source", choices=SOURCES, help="which public server to stand in for")
    options = parser.parse_args(argv)
    anyio.run(_serve, options.source)


if __name__ == "__main__":
    main()
