"""Every tool of the face says to the host what it does: a title and the MCP tool
annotations (read-only, destructive, idempotent, open world), listed through the SDK."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import _face_helpers as fh
import pytest

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# tool -> (readOnlyHint, destructiveHint, idempotentHint, openWorldHint)
HINTS = {
    "list_domains": (True, False, True, False),
    "describe_domain": (True, False, True, False),
    "get_run_status": (True, False, True, False),
    "get_run_report": (True, False, True, False),
    "list_runs": (True, False, True, False),
    "get_research_status": (True, False, True, False),
    "get_research_report": (True, False, True, False),
    # records a held run; each call plans anew (and checks the live servers)
    "make_plan": (False, False, False, True),
    # records an approval; approving the same plan again records nothing new
    "approve_plan": (False, False, True, False),
    # goes on with the plan's run (again: the same run), whose steps may write/execute
    "start_run": (False, True, True, True),
    "cancel_run": (False, True, True, False),
    # waits for a run; records the answer the host's user gives and the run goes on
    "await_run": (False, True, False, True),
    # records an answer (a second one is refused) and the run goes on
    "answer_question": (False, True, False, True),
    "open_session": (False, False, False, False),  # a new session each call
    # a new research run each call; with a model endpoint configured, it asks the model
    "start_research": (False, False, False, True),
    # asks the host's model once per run; asking again changes nothing more
    "explain_research_conflicts": (False, False, True, True),
    "draft_patch": (False, False, False, True),  # asks a model, writes a new patch file
}


async def _tools(tmp: Path, prompts: list[Any] | None = None) -> list[Any]:
    """The face's tools, with the research desk served (and its prompts into ``prompts``)."""
    from mcp import Client

    from plansmith.domains.research.desk import ResearchService
    from plansmith.engine import Engine
    from plansmith.mcp import build_face_server

    service = fh.make_service(tmp)
    (tmp / "notes").mkdir()
    (tmp / "notes" / "a.md").write_text("# A\n\nSome text.\n")
    research = ResearchService(Engine(tmp / "research-home"), {"notes": tmp / "notes"})
    server = build_face_server(service, env={}, research=research)
    async with Client(server) as client:
        if prompts is not None:
            prompts.extend((await client.list_prompts()).prompts)
            asked = await client.get_prompt("ask_research", {"question": "What is A?"})
            prompts.append(asked.messages[0].content.text)
        return list((await client.list_tools()).tools)


async def test_every_tool_has_a_title_and_honest_annotations(tmp_path: Path) -> None:
    tools = await _tools(tmp_path)
    assert {t.name for t in tools} == set(HINTS)
    for tool in tools:
        notes = tool.annotations
        assert notes is not None, tool.name
        assert tool.title, tool.name
        assert notes.title == tool.title, tool.name
        hints = (
            notes.read_only_hint,
            notes.destructive_hint,
            notes.idempotent_hint,
            notes.open_world_hint,
        )
        assert hints == HINTS[tool.name], tool.name


async def test_annotations_are_sent_under_their_wire_names(tmp_path: Path) -> None:
    tools = {t.name: t for t in await _tools(tmp_path)}
    wire = tools["start_run"].model_dump(by_alias=True, exclude_none=True)
    assert wire["title"] == "Start a run"
    assert wire["annotations"] == {
        "title": "Start a run",
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": True,
    }
    assert tools["list_domains"].model_dump(by_alias=True)["annotations"]["readOnlyHint"] is True


async def test_the_research_prompt_is_offered_with_the_research_tools(tmp_path: Path) -> None:
    found: list[Any] = []
    await _tools(tmp_path, found)
    *listed, text = found
    assert {p.name for p in listed} == {"plan_and_run", "review_run", "ask_research"}
    assert "start_research with the question" in text
    assert "What is A?" in text
