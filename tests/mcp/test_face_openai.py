"""``make_plan(request=...)`` translated by an OpenAI-compatible chat endpoint.

The endpoint is a small Starlette app on 127.0.0.1 that speaks ``/v1/chat/completions``
(as Ollama and vLLM do) and answers from a script; no network is used.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import _face_helpers as fh
import pytest

pytestmark = pytest.mark.anyio
counter_url = fh.counter_url


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _endpoint(answers: list[str], seen: list[dict[str, Any]]) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def completions(request: Request) -> JSONResponse:
        body = await request.json()
        seen.append({"body": body, "auth": request.headers.get("authorization")})
        text = answers[min(len(seen), len(answers)) - 1]
        return JSONResponse(
            {
                "id": f"c{len(seen)}",
                "object": "chat.completion",
                "model": body["model"],
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "stop"}
                ],
            }
        )  # fmt: skip

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


def _env(port: int) -> dict[str, str]:
    return {
        "PLANSMITH_LLM_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "PLANSMITH_LLM_MODEL": "llama3.1",
        "PLANSMITH_LLM_API_KEY": "sk-test",
    }


async def _plan(service: Any, env: dict[str, str], args: dict[str, Any]) -> Any:
    from mcp import Client

    from plansmith.mcp import build_face_server

    async with Client(build_face_server(service, env=env)) as client:
        return await client.call_tool("make_plan", {"domain": "docs", **args})


@pytest.mark.parametrize("n", [1, 6])
async def test_the_endpoint_translates_a_request_in_one_call_for_any_plan_length(
    counter_url: str, tmp_path: Path, n: int
) -> None:
    seen: list[dict[str, Any]] = []
    goal = [f"indexed(d{k})" for k in range(n)]
    service = fh.make_service(tmp_path, url=counter_url, n=n)
    async with fh.serving(_endpoint([json.dumps({"goal": goal})], seen)) as port:
        result = await _plan(service, _env(port), {"request": "index all the documents"})
    plan = result.structured_content
    assert not result.is_error
    assert plan["translation"] == {
        "source": "openai", "request": "index all the documents", "goal": goal, "tasks": [],
        "llm_calls": 1, "chosen": None, "candidates": [], "reason": "", "unknown": [],
    }  # fmt: skip
    assert len(plan["steps"]) == 2 * n
    assert len(seen) == 1
    assert seen[0]["auth"] == "Bearer sk-test"
    assert seen[0]["body"]["model"] == "llama3.1"
    assert "index all the documents" in seen[0]["body"]["messages"][1]["content"]


async def test_a_bad_endpoint_answer_is_repaired_once_then_refused(
    counter_url: str, tmp_path: Path
) -> None:
    seen: list[dict[str, Any]] = []
    service = fh.make_service(tmp_path, url=counter_url)
    answers = ['{"goal": ["flying(d1)"]}', '```json\n{"goal": ["indexed(d1)"]}\n```']
    async with fh.serving(_endpoint(answers, seen)) as port:
        repaired = await _plan(service, _env(port), {"request": "index d1"})
        seen.clear()
        answers[:] = ["I would index it."]
        refused = await _plan(
            service, _env(port), {"request": "x", "translator": "openai", "goal": ["ignored(x)"]}
        )
    assert repaired.structured_content["translation"]["llm_calls"] == 2
    assert repaired.structured_content["translation"]["goal"] == ["indexed(d1)"]
    assert refused.is_error
    assert len(seen) == 2
    assert "refused twice" in refused.content[0].text


async def test_an_unreachable_endpoint_is_a_typed_error(counter_url: str, tmp_path: Path) -> None:
    port = fh.free_port()
    service = fh.make_service(tmp_path, url=counter_url)
    result = await _plan(service, _env(port), {"request": "index d1"})
    assert result.is_error
    assert "ExecutionError: cannot reach the chat endpoint" in result.content[0].text


def test_an_endpoint_without_a_model_is_refused_at_start(tmp_path: Path) -> None:
    from plansmith.errors import InputError
    from plansmith.mcp import build_face_server

    service = fh.make_service(tmp_path)
    with pytest.raises(InputError, match="PLANSMITH_LLM_MODEL is not") as caught:
        build_face_server(service, env={"PLANSMITH_LLM_BASE_URL": "http://127.0.0.1:1/v1"})
    assert caught.value.hint is not None
