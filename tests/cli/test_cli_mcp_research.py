"""``plansmith mcp --research-source``: the research tools over stdio, in a real process."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio

from plansmith.domains.research import PLANTED_DIR


async def _session(home: Path) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    args = ["-m", "plansmith", "mcp", "--home", str(home)]
    args += ["--research-source", f"notes={PLANTED_DIR / 'notes'}"]
    env = {"PATH": os.environ.get("PATH", "")}
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(home))
    out: dict[str, Any] = {}
    async with Client(params, read_timeout_seconds=120) as client:
        out["tools"] = {t.name for t in (await client.list_tools()).tools}
        started = await client.call_tool(
            "start_research", {"question": "What is frobnicate?", "budget": {"max_searches": 2}}
        )
        out["started"] = started.structured_content
        run_id = out["started"]["run_id"]
        status = await client.call_tool("get_research_status", {"run_id": run_id})
        out["status"] = status.structured_content
        out["bad"] = await client.call_tool(
            "start_research", {"question": "What is json?", "sources": ["nowhere"]}
        )
    return out


def test_mcp_serves_the_research_tools_over_stdio(tmp_path: Path) -> None:
    out = anyio.run(_session, tmp_path)
    assert {"start_research", "get_research_status", "get_research_report"} <= out["tools"]
    started = out["started"]
    assert started["run_id"].startswith("r-")
    assert started["kind"] == "explain"
    assert started["sources"] == ["notes"]
    assert len(started["subquestions"]) == 2  # the budget allows 2 searches of 1 source
    assert out["status"]["max_searches"] == 2
    assert out["status"]["state"] in ("starting", "running", "succeeded")
    assert out["bad"].is_error
    assert "unknown source(s): nowhere" in out["bad"].content[0].text
