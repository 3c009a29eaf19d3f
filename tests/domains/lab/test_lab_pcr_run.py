"""A planned PCR run, bound to the live tools of the three role servers, on the simulator.

The steps are issued one by one in plan order (a check of the domain, the
bindings and the server together; plansmith's runner is tested elsewhere).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from _labclient import KEY, SKIP_REASON, lab_client
from mcp import Client

from plansmith.binding import ParamRef, Ref, ToolCatalog, ToolSpec, bind, load_bindings, render
from plansmith.domains.lab import PCR_BINDINGS, PCR_DOMAIN, problem_for
from plansmith.formats import load_domain, parse_problem
from plansmith.model import JSONValue, Plan

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(SKIP_REASON is not None, reason=str(SKIP_REASON)),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _plan(samples: int, channels: int, cycles: int) -> Plan:
    try:
        from plansmith.planning.htn import plan_htn  # noqa: F401
    except ImportError:
        pytest.skip("the HTN planner (plansmith.planning.htn.plan_htn) is not in this tree yet")
    from plansmith.planning._planner import plan

    domain = load_domain(PCR_DOMAIN)
    return plan(parse_problem(problem_for(samples, channels, cycles), domain))


async def _catalog(servers: dict[str, Client]) -> ToolCatalog:
    listed = []
    for name, client in servers.items():
        tools = (await client.list_tools()).tools
        specs = tuple(
            ToolSpec(t.name, dict(t.input_schema), None, t.description or "") for t in tools
        )
        listed.append((name, specs))
    return ToolCatalog(tuple(listed))


async def run_on_simulator(
    plan: Plan, robot: Path
) -> tuple[Counter[str], dict[str, JSONValue], int]:
    """Issue every step; the steps per server, the final deck, the simulator's command count."""
    async with (
        lab_client("movement", robot) as movement,
        lab_client("liquid", robot) as liquid,
        lab_client("modules", robot) as modules,
    ):
        servers = {"movement": movement, "liquid": liquid, "modules": modules}
        bound = bind(
            plan, load_domain(PCR_DOMAIN), load_bindings(PCR_BINDINGS), await _catalog(servers)
        )
        per_server: Counter[str] = Counter()
        for step in bound.steps:
            params = dict(step.params)

            def value(ref: Ref, params: dict[str, str] = params) -> JSONValue:
                assert isinstance(ref, ParamRef)
                return params[ref.name]

            arguments = render(step.arguments, value)
            assert isinstance(arguments, dict)
            result = await servers[step.server].call_tool(
                step.tool, arguments, meta={KEY: f"{plan.hash}/{step.id}"}
            )
            text = result.content[0].text if result.content else ""
            assert not result.is_error, f"{step.id} {step.step}: {text}"
            per_server[step.server] += 1
        deck = json.loads((await liquid.call_tool("get_deck_state", {})).content[0].text)
        log = json.loads(
            (await liquid.call_tool("get_run_log", {"since": 0, "limit": 10_000})).content[0].text
        )
    assert any(c.startswith("Thermocycler starting") for c in log["commands"])
    return per_server, deck, log["count"]


async def test_a_planned_16_sample_eight_channel_run_passes_the_simulator(tmp_path: Path) -> None:
    plan = _plan(16, 8, 30)
    per_server, deck, commands = await run_on_simulator(plan, tmp_path / "robot")
    assert sum(per_server.values()) == len(plan.steps) == 37
    assert per_server == {"movement": 14, "liquid": 10, "modules": 13}
    tips = {lw["name"]: lw["tips_left"] for lw in deck["labware"] if "tips_left" in lw}
    assert tips == {"mastermix_tips": 96 - 8, "sample_tips": 96 - 16}
    assert deck["pipettes"][0]["has_tip"] is False
    assert deck["modules"][0]["lid_position"] == "open"
    assert commands > len(plan.steps)  # a mix is several simulator commands


async def test_a_planned_one_channel_run_passes_the_simulator(tmp_path: Path) -> None:
    plan = _plan(9, 1, 25)
    per_server, deck, _ = await run_on_simulator(plan, tmp_path / "robot")
    assert sum(per_server.values()) == len(plan.steps)
    tips = {lw["name"]: lw["tips_left"] for lw in deck["labware"] if "tips_left" in lw}
    assert tips == {"mastermix_tips": 95, "sample_tips": 96 - 9}
