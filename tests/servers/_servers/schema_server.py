"""A test MCP server (mcp 2.x lowlevel ``Server``) whose tools declare output schemas and
answer what each test needs, for the tests of the pool's output checks.

Tools:
  ``typed``     outputSchema: an object with an integer ``n``. Returns ``give`` as its
                structured content (``omit``: none at all), whatever it is.
  ``remote``    outputSchema: a ``$ref`` to a remote document (never fetched). Returns
                ``{"n": 1}``.
  ``number``    outputSchema: an object whose ``v`` is a number. Returns ``{"v": NaN}``.
  ``mismatch``  Its first call fails with ``HEADER_MISMATCH``; later ones return
                ``{"calls": <count>}``.
  ``ask``       Answers its first round with an ``InputRequiredResult`` (request state
                ``again``), and the round that carries that state with ``{"rounds": 2}``.
  ``add``       Lists the tool ``added`` from then on (its schema: an integer ``n``).
  ``added``     Returns ``{"n": "not a number"}``.

Every call is counted by tool: ``calls`` returns the counts.

Usage: ``python schema_server.py`` (stdio); the tests also run ``server`` in process.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.types import (
    HEADER_MISMATCH,
    CallToolRequestParams,
    CallToolResult,
    InputRequiredResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

OPEN = {"type": "object", "additionalProperties": True}
INTEGER_N = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
}
SCHEMAS: dict[str, dict[str, Any] | None] = {
    "typed": INTEGER_N,
    "remote": {"$ref": "https://example.invalid/out.json"},
    "number": {"type": "object", "properties": {"v": {"type": "number"}}},
    "mismatch": None,
    "ask": None,
    "add": None,
    "calls": None,
}
counts: dict[str, int] = {}


async def list_tools(
    ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
) -> ListToolsResult:
    schemas = dict(SCHEMAS)
    if counts.get("add"):
        schemas["added"] = INTEGER_N
    return ListToolsResult(
        tools=[
            Tool(name=name, input_schema=OPEN, output_schema=schema)
            for name, schema in schemas.items()
        ]
    )


def _result(structured: Any, *, omit: bool = False) -> CallToolResult:
    text = [TextContent(type="text", text=json.dumps(structured))]
    if omit:
        return CallToolResult(content=text)
    return CallToolResult(content=text, structured_content=structured)


async def call_tool(
    ctx: ServerRequestContext[Any], params: CallToolRequestParams
) -> CallToolResult | InputRequiredResult:
    name = params.name
    args = params.arguments or {}
    counts[name] = counts.get(name, 0) + 1
    if name == "typed":
        return _result(args.get("give"), omit=bool(args.get("omit")))
    if name == "remote":
        return _result({"n": 1})
    if name == "number":
        return _result({"v": float("nan")})
    if name == "mismatch":
        if counts[name] == 1:
            raise MCPError(HEADER_MISMATCH, "Mcp-Param headers do not match the arguments")
        return _result({"calls": counts[name]})
    if name == "ask":
        if params.request_state != "again":
            return InputRequiredResult(request_state="again")
        return _result({"rounds": 2})
    if name == "added":
        return _result({"n": "not a number"})
    return _result(dict(counts))  # add, calls


server = Server("schema", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
