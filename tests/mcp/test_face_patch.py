"""``draft_patch`` on plansmith's MCP face: when it is offered, and what it refuses before
any model is asked (the end-to-end flow on a real repository is in
tests/domains/code/test_code_draft_patch.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import _face_helpers as fh
import pytest

pytestmark = pytest.mark.anyio
counter_url = fh.counter_url


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def scripted_host_sampling(calls: list[str]) -> Any:
    """The host's LLM, scripted: it records each prompt and answers a diff-shaped text."""
    from mcp.types import CreateMessageResult, TextContent

    async def sampling(ctx: Any, params: Any) -> CreateMessageResult:
        calls.append(params.messages[0].content.text)
        text = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
        return CreateMessageResult(
            role="assistant", model="scripted-host", content=TextContent(type="text", text=text)
        )

    return sampling


async def test_draft_patch_is_offered_with_its_schemas(tmp_path: Path) -> None:
    from mcp import Client

    from plansmith.mcp import build_face_server

    service = fh.make_service(tmp_path)
    async with Client(build_face_server(service, env={})) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert "draft_patch" in tools
    schema = tools["draft_patch"].input_schema
    assert set(schema["properties"]) == {"run_id", "note", "branch", "drafter"}
    assert schema["required"] == ["run_id"]
    assert {"patch", "sha256", "path", "tasks", "objects", "init"} <= set(
        tools["draft_patch"].output_schema["properties"]
    )


async def test_without_a_model_draft_patch_is_a_typed_error(tmp_path: Path) -> None:
    from mcp import Client

    from plansmith.mcp import build_face_server

    service = fh.make_service(tmp_path)
    async with Client(build_face_server(service, env={})) as client:
        auto = await fh.error_text(client, "draft_patch", {"run_id": "r-1"})
        forced = await fh.error_text(client, "draft_patch", {"run_id": "r-1", "drafter": "openai"})
        sampling = await fh.error_text(
            client, "draft_patch", {"run_id": "r-1", "drafter": "sampling"}
        )
    assert "InputError: argument drafter: draft_patch needs a model" in auto
    assert "hint:" in auto
    assert "drafter 'openai' needs PLANSMITH_LLM_BASE_URL" in forced
    assert "drafter 'sampling' needs a client that offers sampling" in sampling


async def test_an_unknown_or_foreign_run_asks_no_model(counter_url: str, tmp_path: Path) -> None:
    from mcp import Client

    from plansmith.mcp import build_face_server

    calls: list[str] = []
    service = fh.make_service(tmp_path, url=counter_url)
    server = build_face_server(service, env={})
    async with Client(server, sampling_callback=scripted_host_sampling(calls)) as client:
        unknown = await fh.error_text(client, "draft_patch", {"run_id": "r-nosuchrun"})
        _, run_id = await fh.plan_approve_run(client, goal=["indexed(d1)"])
        await fh.poll(client, run_id)
        handle = service.table.handle(run_id)
        if handle is not None:
            await handle.done.wait()
        not_diagnosis = await fh.error_text(client, "draft_patch", {"run_id": run_id})
    assert "RunNotFoundError" in unknown
    assert "not a finished diagnosis" in not_diagnosis
    assert "hint: run the diagnose plan" in not_diagnosis
    assert calls == []  # refused before the host's model was asked
    assert not (tmp_path / "home" / "patches").exists()
