"""An MCP face error about one argument names the argument (``argument plan_hash``), never
a step: the face's errors are located at what the caller sent, in memory through the SDK."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import _face_helpers as fh
import pytest

from plansmith.domains.research import Budget
from plansmith.domains.research.desk import budget_from
from plansmith.errors import InputError

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _client(service: Any) -> Any:
    from mcp import Client

    from plansmith.mcp import build_face_server

    return Client(build_face_server(service, env={}))


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        ("describe_domain", {"name": "nope"}, "InputError: argument name: no domain named"),
        (
            "make_plan",
            {"domain": "nope", "goal": ["indexed(d1)"]},
            "InputError: argument domain: no domain named",
        ),
        (
            "approve_plan",
            {"plan_hash": "sha256:00"},
            "InputError: argument plan_hash: no plan with hash",
        ),
        ("start_run", {"plan_hash": "sha256:00"}, "InputError: argument plan_hash: no plan"),
        (
            "get_run_status",
            {"run_id": "r-nope"},
            "RunNotFoundError: argument run_id: no run 'r-nope'",
        ),
        (
            "make_plan",
            {"domain": "docs", "request": "index d1", "translator": "sampling"},
            "InputError: argument translator: translator 'sampling' needs a client",
        ),
        (
            "draft_patch",
            {"run_id": "r-1", "drafter": "sampling"},
            "InputError: argument drafter: drafter 'sampling' needs a client",
        ),
    ],
)
async def test_a_bad_argument_is_named_as_an_argument_not_a_step(
    tmp_path: Path, tool: str, args: dict[str, Any], expected: str
) -> None:
    async with _client(fh.make_service(tmp_path)) as client:
        text = await fh.error_text(client, tool, args)
    assert text.startswith(f"Error executing tool {tool}: "), text
    assert expected in text
    assert " step " not in text.split("\n")[0]


async def test_errors_of_a_call_without_one_bad_argument_have_no_location(
    tmp_path: Path,
) -> None:
    async with _client(fh.make_service(tmp_path)) as client:
        plan = await fh.call(client, "make_plan", {"domain": "docs", "goal": ["indexed(d1)"]})
        unapproved = await fh.error_text(client, "start_run", {"plan_hash": plan["plan_hash"]})
        no_goal = await fh.error_text(client, "make_plan", {"domain": "docs"})
    assert plan["needs_approval"] is True, plan
    assert unapproved.startswith(
        f"Error executing tool start_run: ApprovalRequiredError: plan {plan['plan_hash']} has "
    )
    assert no_goal.startswith(
        "Error executing tool make_plan: InputError: make_plan needs a goal, tasks or a request"
    )


async def test_a_resource_names_its_bad_argument_too(tmp_path: Path) -> None:
    async with _client(fh.make_service(tmp_path)) as client:
        with pytest.raises(Exception, match="InputError: argument plan_hash: no plan with hash"):
            await client.read_resource("plansmith://plans/sha256:00")


def test_a_research_budget_is_an_argument() -> None:
    with pytest.raises(InputError) as caught:
        budget_from({"max_search": 3}, Budget())
    assert str(caught.value).startswith("argument budget: unknown budget key(s): max_search")
