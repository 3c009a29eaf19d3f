"""``plansmith mcp --research-source``: the research tools over stdio, in a real process."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from plansmith.domains.research import PLANTED_DIR, find_python_docs


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


async def _default_session(home: Path) -> dict[str, Any]:
    """``plansmith mcp`` with no research source: the installed Python docs are one."""
    from mcp import Client, StdioServerParameters

    args = ["-m", "plansmith", "mcp", "--home", str(home)]
    env = {"PATH": os.environ.get("PATH", "")}
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(home))
    out: dict[str, Any] = {}
    async with Client(params, read_timeout_seconds=120) as client:
        listed = (await client.call_tool("list_domains", {})).structured_content
        out["research"] = next(d for d in listed["domains"] if d["name"] == "research")
        started = await client.call_tool(
            "start_research", {"question": "How do I read a CSV file?"}
        )
        out["started"] = started.structured_content
        run_id = out["started"]["run_id"]
        with anyio.fail_after(180):  # the first search builds the docs' index
            while True:
                status = await client.call_tool("get_research_status", {"run_id": run_id})
                if status.structured_content["state"] not in ("starting", "running"):
                    break
                await anyio.sleep(0.1)
        report = await client.call_tool("get_research_report", {"run_id": run_id})
        out["report"] = report.structured_content
    return out


@pytest.mark.skipif(find_python_docs() is None, reason="needs Debian's python3-doc")
def test_mcp_with_no_source_researches_the_installed_python_docs(tmp_path: Path) -> None:
    out = anyio.run(_default_session, tmp_path)
    assert out["research"]["ready"] is True
    assert "start_research" in out["research"]["notes"][0]
    assert out["started"]["sources"] == ["python-docs"]
    assert out["report"]["state"] == "succeeded"
    assert out["report"]["citations"] > 0
    assert "library/csv.html" in out["report"]["markdown"]
