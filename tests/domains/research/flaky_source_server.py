"""A test-only MCP source server that fails while a flag file exists, then recovers.

``python flaky_source_server.py --name NAME --down FILE --log FILE`` serves ``search``
(two passage ids) and ``fetch`` (a passage about tomllib) on stdio; while ``FILE``
exists every call fails with a tool error. Every call, failed or not, is a line of
its own JSONL log (tool, started, finished, outcome), written by the server itself.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError


def create(name: str, down: Path, log: Path) -> MCPServer:
    server = MCPServer(f"flaky-{name}", version="0.1.0", log_level="WARNING")

    def record(tool: str, started: float, outcome: str) -> None:
        line = {"tool": tool, "started": started, "finished": time.time(), "outcome": outcome}
        with log.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")

    def answer(tool: str, body: dict[str, Any]) -> dict[str, Any]:
        started = time.time()
        if down.exists():
            record(tool, started, "error")
            raise ToolError(f"{name} is down")
        record(tool, started, "ok")
        return body

    @server.tool()
    async def search(query: str, also: str = "", limit: int = 8) -> dict[str, Any]:
        """Two passage ids."""
        return answer("search", {"hits": [{"id": f"p{name}{n}"} for n in range(2)]})

    @server.tool()
    async def fetch(id: str, max_chars: int = 20000) -> dict[str, Any]:
        """A passage about tomllib."""
        page = {
            "id": id,
            "source": name,
            "text": f"The tomllib module parses TOML files ({id}).",
            "offset": 0,
            "spans": [[0, 1, 1]],
            "date": "2023-01-01",
            "title": "tomllib",
            "location": {"path": "t.md", "line_start": 1, "line_end": 1, "section": "t"},
        }
        return answer("fetch", page)

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--down", required=True)
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    create(args.name, Path(args.down), Path(args.log)).run()


if __name__ == "__main__":
    main()
