"""A trivial MCP server (mcp 2.x ``MCPServer``): the raw SDK baseline's tool calls.

bench_executor.py measures plansmith's runner against a raw SDK loop on ``echo(x=7)`` of
this server, in process (``Client(mcp)``) and over stdio; the team's raw MCP baseline,
kept here so that the benchmark reads nothing outside the repository.

Usage: python bench/mcp_raw/echo_server.py            stdio
       python bench/mcp_raw/echo_server.py http PORT  streamable HTTP on 127.0.0.1:PORT
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer

# log_level=WARNING: MCPServer() calls logging.basicConfig(level=log_level) and passes the
# level to uvicorn, so the default INFO would also emit one access-log line per HTTP call.
mcp = MCPServer("echo-bench", version="1.0", log_level="WARNING")


@mcp.tool()
async def echo(x: int) -> int:
    """Return x. An int return: outputSchema ``{"result": int}`` and structured content."""
    return x


@mcp.tool(structured_output=False)
async def echo_plain(x: int) -> int:
    """Return x, unstructured (text content only, no outputSchema)."""
    return x


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "http":
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        mcp.run()
