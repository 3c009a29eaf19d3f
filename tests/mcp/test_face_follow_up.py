"""``make_plan(..., after_run=RUN_ID)`` through the MCP face: a follow-up goal planned
from the final state of a finished run; its steps read the parent's outputs by
reference, and the counter server shows the parent's steps are not called again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import _face_helpers as fh
import pytest
from test_face_ask_elicitation import Host, _in_memory

from _ask_domain import work_calls

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _run(client: Any, **plan_args: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    plan = await fh.call(client, "make_plan", {"domain": "review", **plan_args})
    assert plan["status"] == "planned", plan
    await fh.call(client, "approve_plan", {"plan_hash": plan["plan_hash"]})
    run = await fh.call(client, "start_run", {"plan_hash": plan["plan_hash"]})
    status = await fh.call(client, "await_run", {"run_id": run["run_id"]})
    return plan, status


async def test_a_follow_up_plans_from_the_parents_end_and_calls_nothing_again(
    tmp_path: Path,
) -> None:
    async with _in_memory(tmp_path, host=Host("accept", "as_is")) as (client, _, calls):
        _, first = await _run(client, goal=["summarised(doc1)"])
        assert first["state"] == "succeeded", first
        assert work_calls(calls) == ["summarise-doc1"]
        plan, second = await _run(client, goal=["indexed(doc1)"], after_run=first["run_id"])
        assert [s["action"] for s in plan["steps"]] == ["review", "index"]  # no summarise
        assert second["state"] == "succeeded", second
        report = await fh.call(client, "get_run_report", {"run_id": second["run_id"]})
    # the parent's summarise is not called again; index read the answer of its review
    assert work_calls(calls) == ["summarise-doc1", "index-doc1-as_is"]
    assert report["report"]["after"] == first["run_id"]
    assert f"Follows up run {first['run_id']}" in report["markdown"]


async def test_a_follow_up_of_a_run_that_is_not_there_is_refused_and_nothing_is_made(
    tmp_path: Path,
) -> None:
    async with _in_memory(tmp_path, host=None) as (client, service, _):
        text = await fh.error_text(
            client,
            "make_plan",
            {"domain": "review", "goal": ["indexed(doc1)"], "after_run": "r-000000000000"},
        )
        assert "run r-000000000000 is not in the run log" in text
        assert service.engine.list() == []
