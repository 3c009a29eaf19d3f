"""``make_plan(request=...)`` translated by the host's model through MCP sampling.

The host's sampling callback is a stub that answers a goal; the test counts its calls:
one per plan whatever its length, two when the first answer must be repaired.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _face_helpers as fh
import pytest

pytestmark = pytest.mark.anyio
counter_url = fh.counter_url


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _host(answers: Callable[[int, str], str], calls: list[str]) -> Any:
    from mcp.types import CreateMessageResult, TextContent

    async def sampling(ctx: Any, params: Any) -> CreateMessageResult:
        prompt = params.messages[0].content.text
        calls.append(prompt)
        text = answers(len(calls), prompt)
        return CreateMessageResult(
            role="assistant", model="stub", content=TextContent(type="text", text=text)
        )

    return sampling


def _client(service: Any, sampling: Any, mode: str = "auto") -> Any:
    from mcp import Client

    from plansmith.mcp import build_face_server

    return Client(build_face_server(service, env={}), sampling_callback=sampling, mode=mode)


@pytest.mark.parametrize("n", [1, 4, 12])
async def test_a_plan_of_any_length_costs_one_sampling_call(
    counter_url: str, tmp_path: Path, n: int
) -> None:
    calls: list[str] = []
    goal = [f"indexed(d{k})" for k in range(n)]
    host = _host(lambda _, __: json.dumps({"goal": goal}), calls)
    async with _client(fh.make_service(tmp_path, url=counter_url, n=n), host) as client:
        plan, run_id = await fh.plan_approve_run(client, request="index every document")
        status = await fh.poll(client, run_id)
        report = await fh.call(client, "get_run_report", {"run_id": run_id})
    assert len(plan["steps"]) == 2 * n
    assert status["state"] == "succeeded"
    assert plan["translation"]["source"] == "sampling"
    assert plan["translation"]["goal"] == goal
    assert len(calls) == 1
    assert report["report"]["llm_calls"] == 1  # at most MAX_LLM_CALLS = 2, whatever n is
    assert "Request: index every document" in calls[0]
    assert "searchable(d: document)" in calls[0]  # the prompt shows the named goals


async def test_a_refused_answer_is_repaired_with_one_more_call(
    counter_url: str, tmp_path: Path
) -> None:
    calls: list[str] = []

    def answers(k: int, _: str) -> str:
        return '{"goal": ["indexed(nosuchdoc)"]}' if k == 1 else '{"goal": ["indexed(d2)"]}'

    async with _client(fh.make_service(tmp_path, url=counter_url), _host(answers, calls)) as client:
        plan = await fh.call(client, "make_plan", {"domain": "docs", "request": "index doc two"})
    assert len(calls) == 2
    assert "unknown object 'nosuchdoc'" in calls[1]
    assert plan["translation"]["llm_calls"] == 2
    assert plan["translation"]["goal"] == ["indexed(d2)"]


async def test_two_refused_answers_give_a_typed_error_and_nothing_runs(
    counter_url: str, tmp_path: Path
) -> None:
    calls: list[str] = []
    host = _host(lambda _, __: "I think you should index it.", calls)
    service = fh.make_service(tmp_path, url=counter_url)
    async with _client(service, host) as client:
        text = await fh.error_text(client, "make_plan", {"domain": "docs", "request": "index"})
    assert len(calls) == 2
    assert "InputError: the host model's goal was refused" in text
    assert service.list_runs().runs == ()


async def test_sampling_works_on_a_legacy_connection_too(counter_url: str, tmp_path: Path) -> None:
    calls: list[str] = []
    host = _host(lambda _, __: '{"tasks": ["publish(d1)"]}', calls)
    async with _client(fh.make_service(tmp_path, url=counter_url), host, mode="legacy") as client:
        plan = await fh.call(client, "make_plan", {"domain": "docs", "request": "publish d1"})
    assert [s["action"] for s in plan["steps"]] == ["summarise", "index"]
    assert len(calls) == 1


async def test_without_sampling_the_offline_matcher_answers(
    counter_url: str, tmp_path: Path
) -> None:
    from mcp import Client

    from plansmith.mcp import build_face_server

    async with Client(
        build_face_server(fh.make_service(tmp_path, url=counter_url), env={})
    ) as client:
        plan = await fh.call(client, "make_plan", {"domain": "docs", "request": "index d1"})
        forced = await fh.error_text(
            client, "make_plan", {"domain": "docs", "request": "index d1", "translator": "openai"}
        )
        no_sampling = await fh.error_text(
            client, "make_plan", {"domain": "docs", "request": "index d1", "translator": "sampling"}
        )
    assert plan["translation"]["source"] == "offline"
    assert "needs PLANSMITH_LLM_BASE_URL" in forced
    assert "InputError: argument translator: translator 'sampling' needs a client" in no_sampling
