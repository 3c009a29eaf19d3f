"""The Protocol Engine in the robot's own thread (``labsim``) against opentrons' engine thread.

``labsim.open_flex`` runs the engine in the thread that calls the robot;
``PLANSMITH_LAB_ENGINE_THREAD=1`` makes the server use
``opentrons.simulate.get_protocol_api`` as it comes, with the engine in a thread
of its own. The same calls, refusals included, must give the same answers and
the same run log on both.
"""

from __future__ import annotations

from typing import Any

import pytest
from _labclient import KEY, SKIP_REASON, lab_client
from mcp import Client
from mcp.types import TextContent

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(SKIP_REASON is not None, reason=str(SKIP_REASON)),
]

TIPS = "opentrons_flex_96_tiprack_50ul"
PLATE = "opentrons_96_wellplate_200ul_pcr_full_skirt"
RESERVOIR = "nest_12_reservoir_15ml"

# (tool, arguments): a protocol with modules, an 8-channel pipette, mixes, and refusals
CALLS: list[tuple[str, dict[str, Any]]] = [
    (
        "set_up_deck",
        {
            "modules": [
                {"model": "thermocyclerModuleV2", "location": "B1", "name": "thermocycler"},
                {"model": "temperatureModuleV2", "location": "D1", "name": "temperature_module"},
            ],
            "trash_bins": ["A3"],
        },
    ),
    ("load_labware", {"load_name": PLATE, "location": "thermocycler", "name": "pcr"}),
    ("load_labware", {"load_name": TIPS, "location": "C1", "name": "tips"}),
    ("load_labware", {"load_name": TIPS, "location": "C1", "name": "more_tips"}),  # occupied
    ("load_labware", {"load_name": RESERVOIR, "location": "C2", "name": "reservoir"}),
    ("load_instrument", {"instrument_name": "flex_8channel_50", "mount": "left", "name": "p8"}),
    ("aspirate", {"pipette": "p8", "volume": 10, "labware": "reservoir", "well": "A1"}),  # no tip
    ("pick_up_tip", {"pipette": "p8", "tip_rack": "tips"}),
    ("aspirate", {"pipette": "p8", "volume": 500, "labware": "reservoir", "well": "A1"}),  # >50
    ("aspirate", {"pipette": "p8", "volume": 20, "labware": "reservoir", "well": "A1"}),
    ("dispense", {"pipette": "p8", "volume": 10, "labware": "pcr", "well": "A1"}),  # lid closed?
    ("thermocycler_open_lid", {}),
    ("dispense", {"pipette": "p8", "labware": "pcr", "well": "A1"}),
    ("mix", {"pipette": "p8", "repetitions": 3, "volume": 15, "labware": "pcr", "well": "A1"}),
    ("blow_out", {"pipette": "p8", "labware": "pcr", "well": "A1"}),
    ("drop_tip", {"pipette": "p8"}),
    ("thermocycler_close_lid", {}),
    (
        "thermocycler_run_profile",
        {
            "steps": [
                {"temperature": 95, "hold_time_seconds": 10},
                {"temperature": 60, "hold_time_seconds": 20},
            ],
            "repetitions": 3,
        },
    ),
    ("temperature_module_set_temperature", {"temperature": 120}),  # over the module's range
    ("temperature_module_set_temperature", {"temperature": 4}),
    ("move_labware", {"labware": "reservoir", "location": "D2"}),
    ("get_deck_state", {}),
    ("get_run_log", {}),
]


async def _answers(client: Client) -> list[tuple[bool, str]]:
    out = []
    for n, (tool, arguments) in enumerate(CALLS):
        meta: Any = {KEY: f"engine/{n}"}
        result = await client.call_tool(tool, arguments, meta=meta)
        first = result.content[0] if result.content else None
        out.append((bool(result.is_error), first.text if isinstance(first, TextContent) else ""))
    return out


async def test_the_engine_in_the_robots_thread_answers_as_the_engine_in_its_own_thread() -> None:
    async with lab_client() as own_thread:
        same = await _answers(own_thread)
    async with lab_client(env={"PLANSMITH_LAB_ENGINE_THREAD": "1"}) as engine_thread:
        standard = await _answers(engine_thread)

    for (tool, _), mine, theirs in zip(CALLS, same, standard, strict=True):
        assert mine == theirs, tool
    refused = [tool for (tool, _), (is_error, _) in zip(CALLS, same, strict=True) if is_error]
    assert refused == [
        "load_labware",
        "aspirate",
        "aspirate",
        "dispense",
        "temperature_module_set_temperature",
    ]
    assert "TipNotAttachedError" in same[6][1]
    assert "ThermocyclerNotOpenError" in same[10][1]
    assert '"count":' in same[-1][1]
