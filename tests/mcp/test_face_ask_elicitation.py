"""Ask steps through the MCP face: ``await_run`` asks the host's user through MCP
elicitation (a resolver returning ``Elicit``: an ``InputRequiredResult`` round on a
2026-07-28 connection, ``elicitation/create`` pushed in the call on a 2025-11-25 one),
and the plan takes the answer's branch; ``answer_question`` takes an answer from any
host and refuses one outside the question's schema, the run waiting on.

The review domain (``tests/_ask_domain.py``) asks whether to publish a summary as it
is or redact it first; the counter server logs each tool call, which shows the branch.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import _face_helpers as fh
import anyio
import pytest
from test_face_transports import MAIN

from _ask_domain import work_calls, write_ask_inputs

pytestmark = pytest.mark.anyio

QUESTION_START = "The summary of doc1 is "
CLIENT = "ask-test-host"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _review_folder(root: Path, default: str | None = "as_is") -> tuple[Path, Path]:
    """A ``review`` domain folder under ``root/domains``; the counter server's call log."""
    folder = root / "domains" / "review"
    folder.mkdir(parents=True)
    _, calls = write_ask_inputs(folder, default=default)
    return root / "domains", calls


class Host:
    """A host's elicitation handler with a scripted reply: ``accept`` with ``answer``,
    or ``decline``/``cancel``; it keeps what it was asked."""

    def __init__(self, action: str = "accept", answer: Any = "redact") -> None:
        self.action = action
        self.answer = answer
        self.asked: list[tuple[str, dict[str, Any]]] = []

    async def __call__(self, ctx: Any, params: Any) -> Any:
        from mcp.types import ElicitResult

        self.asked.append((params.message, params.requested_schema))
        if self.action != "accept":
            return ElicitResult(action=self.action)
        return ElicitResult(action="accept", content={"answer": self.answer})


def _client_info() -> Any:
    from mcp.types import Implementation

    return Implementation(name=CLIENT, version="1.0")


@asynccontextmanager
async def _in_memory(
    root: Path, *, host: Host | None, mode: str = "auto", default: str | None = "as_is"
) -> AsyncIterator[tuple[Any, Any, Path]]:
    """A face server over the review folder, in this process, and a client on it
    (``host``: its elicitation handler; None: a host that cannot be asked)."""
    from mcp import Client

    from plansmith.domains.folders import load_folders
    from plansmith.engine import Engine
    from plansmith.mcp import FaceService, build_face_server

    domains, calls = _review_folder(root, default)
    engine = Engine(root / "home")
    service = FaceService.on(engine, load_folders([domains]))
    try:
        async with Client(
            build_face_server(service, env={}),
            mode=mode,
            elicitation_callback=host,
            client_info=_client_info(),
            read_timeout_seconds=120,
        ) as client:
            yield client, service, calls
    finally:
        engine.close()


async def _start(client: Any) -> str:
    """Plan the review of doc1, approve and start it: its run id."""
    plan = await fh.call(client, "make_plan", {"domain": "review", "goal": ["indexed(doc1)"]})
    assert plan["status"] == "planned", plan
    assert plan["binding"]["ok"] is True, plan["binding"]
    assert [s["action"] for s in plan["steps"]] == ["summarise", "review", "index"]
    await fh.call(client, "approve_plan", {"plan_hash": plan["plan_hash"]})
    run = await fh.call(client, "start_run", {"plan_hash": plan["plan_hash"]})
    return str(run["run_id"])


async def _events(client: Any, run_id: str) -> list[dict[str, Any]]:
    result = await client.read_resource(f"plansmith://runs/{run_id}/events")
    events: list[dict[str, Any]] = json.loads(result.contents[0].text)
    return events


def _answers(events: list[dict[str, Any]]) -> list[tuple[Any, str, str]]:
    return [(e["answer"], e["by"], e["declined"]) for e in events if e["type"] == "AnswerRecorded"]


def _check_asked(host: Host, default: str | None = "as_is") -> None:
    assert len(host.asked) == 1, host.asked
    message, schema = host.asked[0]
    assert message.startswith(QUESTION_START)
    assert message.endswith(", step s2: answer one of: as_is, redact)")
    assert "\n\n(plansmith run r-" in message
    answer = {"type": "string", "enum": ["as_is", "redact"]}
    if default is not None:
        answer["default"] = default
    assert set(schema["properties"]) == {"answer"}
    prop = {k: v for k, v in schema["properties"]["answer"].items() if k != "title"}
    assert prop == answer


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_hosts_answer_through_elicitation_takes_the_answers_branch(
    tmp_path: Path, mode: str
) -> None:
    host = Host("accept", "redact")
    async with _in_memory(tmp_path, host=host, mode=mode) as (client, _, calls):
        expected = "2026-07-28" if mode == "auto" else "2025-11-25"
        assert client.protocol_version == expected
        run_id = await _start(client)
        status = await fh.call(client, "await_run", {"run_id": run_id})
        assert status["state"] == "succeeded", status
        assert status["questions"] == []
        events = await _events(client, run_id)
    _check_asked(host)
    assert work_calls(calls) == ["summarise-doc1", "redact-doc1", "index-doc1-redact"]
    assert _answers(events) == [("redact", f"mcp:{CLIENT}", "")]


async def test_declined_takes_the_default_answer(tmp_path: Path) -> None:
    host = Host("decline")
    async with _in_memory(tmp_path, host=host) as (client, _, calls):
        run_id = await _start(client)
        status = await fh.call(client, "await_run", {"run_id": run_id})
        events = await _events(client, run_id)
    assert status["state"] == "succeeded", status
    _check_asked(host)
    assert work_calls(calls) == ["summarise-doc1", "index-doc1-as_is"]
    assert _answers(events) == [("as_is", f"mcp:{CLIENT}", "declined")]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_cancelled_with_no_default_fails_the_run_saying_why(
    tmp_path: Path, mode: str
) -> None:
    host = Host("cancel")
    async with _in_memory(tmp_path, host=host, mode=mode, default=None) as (client, _, calls):
        run_id = await _start(client)
        status = await fh.call(client, "await_run", {"run_id": run_id})
        events = await _events(client, run_id)
    _check_asked(host, default=None)
    assert status["state"] == "failed", status
    assert "the question was cancelled and review declares no default answer" in (
        status["error"] or ""
    )
    assert work_calls(calls) == ["summarise-doc1"]
    assert _answers(events) == [(None, f"mcp:{CLIENT}", "cancelled")]


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "enum", "choices": ["all", "top5"], "default": "top5"},
        {"type": "boolean"},
        {"type": "number", "integer": True, "minimum": 1, "maximum": 12},
        {"type": "number", "minimum": 0.5},
        {"type": "string", "min_length": 2, "max_length": 40, "pattern": "[a-z]+"},
    ],
)
def test_the_elicited_form_is_the_answer_schema(schema: dict[str, Any]) -> None:
    from mcp.server.elicitation import render_elicitation_schema

    from plansmith.mcp._ask_tools import answer_model
    from plansmith.model import answer_json_schema, answer_schema_from_json

    wanted = answer_json_schema(answer_schema_from_json(schema))
    form = render_elicitation_schema(answer_model(wanted))
    assert set(form["properties"]) == {"answer"}
    assert {k: v for k, v in form["properties"]["answer"].items() if k != "title"} == wanted
    assert form.get("required", []) == ([] if "default" in wanted else ["answer"])


async def test_an_elicited_answer_outside_the_schema_is_refused_and_the_run_waits(
    tmp_path: Path,
) -> None:
    host = Host("accept", "shred")
    async with _in_memory(tmp_path, host=host) as (client, _, calls):
        run_id = await _start(client)
        refused = await client.call_tool("await_run", {"run_id": run_id})
        assert refused.is_error
        assert "does not match the requested schema" in refused.content[0].text
        status = await fh.call(client, "get_run_status", {"run_id": run_id})
        assert status["state"] == "awaiting answer"
        host.answer = "as_is"  # asked again: a good answer this time
        status = await fh.call(client, "await_run", {"run_id": run_id})
        events = await _events(client, run_id)
    assert status["state"] == "succeeded", status
    assert len(host.asked) == 2
    assert work_calls(calls) == ["summarise-doc1", "index-doc1-as_is"]
    assert _answers(events) == [("as_is", f"mcp:{CLIENT}", "")]


async def test_a_host_without_elicitation_answers_with_answer_question(tmp_path: Path) -> None:
    async with _in_memory(tmp_path, host=None) as (client, _, calls):
        run_id = await _start(client)
        status = await fh.call(client, "await_run", {"run_id": run_id})
        assert status["state"] == "awaiting answer", status
        assert "answer_question" in status["hint"]
        [question] = status["questions"]
        assert question["question"].startswith(QUESTION_START)
        assert question["schema"] == {
            "type": "string",
            "enum": ["as_is", "redact"],
            "default": "as_is",
        }
        assert question["expects"] == "one of: as_is, redact"
        assert question["assumed"] == "as_is"
        step = question["step"]
        assert work_calls(calls) == ["summarise-doc1"]

        # the status, the list and the run's resource say so too
        polled = await fh.call(client, "get_run_status", {"run_id": run_id})
        assert (polled["state"], polled["questions"]) == ("awaiting answer", [question])
        listed = await fh.call(client, "list_runs")
        assert listed["runs"][0]["state"] == "awaiting answer"
        report = json.loads(
            (await client.read_resource(f"plansmith://runs/{run_id}")).contents[0].text
        )
        assert report["state"] == "awaiting answer"
        assert report["questions"][0]["step"] == step

        # outside the schema: refused with the schema's reason; the run keeps waiting
        refused = await fh.error_text(
            client, "answer_question", {"run_id": run_id, "step": step, "answer": "shred"}
        )
        assert "AnswerError" in refused
        assert "'shred' is not one of the choices" in refused
        assert "answer one of: as_is, redact" in refused
        wrong_step = await fh.error_text(
            client, "answer_question", {"run_id": run_id, "step": "nope", "answer": "redact"}
        )
        assert "does not wait for an answer" in wrong_step
        polled = await fh.call(client, "get_run_status", {"run_id": run_id})
        assert polled["state"] == "awaiting answer"
        assert work_calls(calls) == ["summarise-doc1"]

        answered = await fh.call(
            client, "answer_question", {"run_id": run_id, "step": step, "answer": "redact"}
        )
        assert answered["state"] != "awaiting answer"
        status = await fh.call(client, "await_run", {"run_id": run_id})
        assert status["state"] == "succeeded", status
        events = await _events(client, run_id)
    assert work_calls(calls) == ["summarise-doc1", "redact-doc1", "index-doc1-redact"]
    assert _answers(events) == [("redact", f"mcp:{CLIENT}", "")]


def _env() -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("PLANSMITH_")},
        "PYTHONPATH": os.pathsep.join(sys.path),
    }


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_plansmith_mcp_over_stdio_asks_the_host_and_takes_the_answer(
    tmp_path: Path, mode: str
) -> None:
    """The real server (``plansmith mcp`` over stdio, a process of its own) and the
    SDK client's elicitation handler, in both protocol eras."""
    from mcp import Client, StdioServerParameters, stdio_client

    domains, calls = _review_folder(tmp_path)
    args = ["-c", MAIN, "mcp", "--domains", str(domains), "--home", str(tmp_path / "home")]
    params = StdioServerParameters(command=sys.executable, args=args, env=_env(), cwd=tmp_path)
    host = Host("accept", "redact")
    with anyio.fail_after(180), (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(
            stdio_client(params, errlog=errlog),
            mode=mode,
            elicitation_callback=host,
            client_info=_client_info(),
            read_timeout_seconds=120,
        ) as client:
            expected = "2026-07-28" if mode == "auto" else "2025-11-25"
            assert client.protocol_version == expected
            await client.list_tools()
            run_id = await _start(client)
            status = await fh.call(client, "await_run", {"run_id": run_id})
            events = await _events(client, run_id)
    assert status["state"] == "succeeded", status
    _check_asked(host)
    assert work_calls(calls) == ["summarise-doc1", "redact-doc1", "index-doc1-redact"]
    assert _answers(events) == [("redact", f"mcp:{CLIENT}", "")]
