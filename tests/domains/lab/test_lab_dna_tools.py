"""The lab server's tools for the Omega HDQ DNA extraction, over stdio on the simulator:
the 96-channel pipette with full-rack pick-up and return_tip, air_gap, set_flow_rate,
home, delay, the magnetic block, the waste chute, gripper moves onto and off the
heater-shaker's adapter, and set_up_deck with adapters and pipettes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from _labclient import SKIP_REASON, call, lab_client, labtools, refusal
from mcp import Client

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(SKIP_REASON is not None, reason=str(SKIP_REASON)),
]

DEEP = "nest_96_wellplate_2ml_deep"
TIPS = "opentrons_flex_96_tiprack_1000ul"
TIP_ADAPTER = "opentrons_flex_96_tiprack_adapter"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[Client]:
    """One server for the module (it takes seconds to start); each test resets its robot."""
    async with lab_client() as client:
        yield client


@pytest.fixture
async def lab(server: Client) -> Client:
    assert await call(server, "reset_robot") == {"reset": True, "command_count": 0}
    return server


async def _deck(lab: Client) -> Any:
    """The Omega HDQ deck in one set_up_deck call (a part of it)."""
    return await call(
        lab,
        "set_up_deck",
        modules=[
            {"model": "heaterShakerModuleV1", "location": "D1", "name": "heater_shaker"},
            {"model": "magneticBlockV1", "location": "C1", "name": "magblock"},
        ],
        adapters=[
            {
                "load_name": "opentrons_96_deep_well_adapter",
                "location": "heater_shaker",
                "name": "hs_adapter",
            }
        ],
        trash_bins=["D3"],
        labware=[
            {"load_name": DEEP, "location": "hs_adapter", "name": "TL_plate"},
            {"load_name": DEEP, "location": "C3", "name": "sample_plate"},
            {"load_name": TIPS, "location": "A1", "name": "tips", "adapter": TIP_ADAPTER},
        ],
        pipettes=[
            {
                "instrument_name": "flex_96channel_1000",
                "mount": "left",
                "name": "pip96",
                "tip_racks": ["tips"],
            }
        ],
    )


def test_the_new_tools_have_their_roles() -> None:
    tools = labtools().TOOLS
    roles = {name: tools[name].role for name in tools}
    assert roles["return_tip"] == roles["home"] == roles["load_waste_chute"] == "movement"
    assert roles["air_gap"] == roles["set_flow_rate"] == "liquid"
    assert roles["delay"] == "modules"
    assert {"adapters", "pipettes"} <= set(tools["set_up_deck"].signature.parameters)


async def test_set_up_deck_loads_adapters_labware_on_them_and_the_96_channel_pipette(
    lab: Client,
) -> None:
    loaded = await _deck(lab)
    assert loaded["loaded"] == [
        "heater_shaker",
        "magblock",
        "hs_adapter",
        "trash",
        "TL_plate",
        "sample_plate",
        "tips",
        "pip96",
    ]
    state = await call(lab, "get_deck_state")
    (pipette,) = state["pipettes"]
    assert (pipette["instrument_name"], pipette["channels"], pipette["mount"]) == (
        "flex_96channel_1000",
        96,
        "left",
    )
    where = {lw["name"]: lw["location"] for lw in state["labware"]}
    assert where["TL_plate"] == "hs_adapter"
    assert where["hs_adapter"] == "heater_shaker"
    assert where["tips"] == "tips_adapter"
    assert state["slots"]["C1"] == "magblock"


async def test_the_96_channel_pipette_takes_the_whole_rack_and_returns_it(lab: Client) -> None:
    await _deck(lab)
    await call(lab, "heater_shaker_set_latch", closed=True)
    assert "has no tips to return" in await refusal(lab, "return_tip", pipette="pip96")
    picked = await call(lab, "pick_up_tip", pipette="pip96", tip_rack="tips", well="A1")
    assert (picked["tip_rack"], picked["well"]) == ("tips", "A1")
    state = await call(lab, "get_deck_state")
    assert [lw["tips_left"] for lw in state["labware"] if lw["name"] == "tips"] == [0]
    await call(lab, "aspirate", pipette="pip96", volume=200, labware="TL_plate", well="A1")
    gap = await call(lab, "air_gap", pipette="pip96", volume="20")
    assert (gap["volume"], gap["current_volume"]) == (20, 220)
    await call(lab, "dispense", pipette="pip96", volume=220, labware="sample_plate", well="A1")
    await call(lab, "blow_out", pipette="pip96")
    assert (await call(lab, "air_gap", pipette="pip96", volume=10))["current_volume"] == 10
    back = await call(lab, "return_tip", pipette="pip96")
    assert (back["tip_rack"], back["well"]) == ("tips", "A1")
    # the returned tips are picked up again at A1, as the original protocol does
    await call(lab, "pick_up_tip", pipette="pip96", tip_rack="tips", well="A1")
    assert (await call(lab, "home", pipette="pip96"))["homed"] == "pip96"
    assert (await call(lab, "home"))["homed"] == "robot"
    await call(lab, "return_tip", pipette="pip96")

    log = (await call(lab, "get_run_log"))["commands"]
    assert log[0] == "Latching labware on Heater-Shaker"
    assert log[1].startswith("Picking up tip from A1 of Opentrons Flex 96 Tip Rack 1000 µL")
    assert log.count("Returning tip") == 2
    assert "Air gap of 20.0 uL" in log
    assert "Homing pipette plunger on mount left" in log


async def test_set_flow_rate_changes_the_rates_the_simulator_uses(lab: Client) -> None:
    await _deck(lab)
    await call(lab, "heater_shaker_set_latch", closed=True)
    rates = await call(lab, "set_flow_rate", pipette="pip96", aspirate="150", dispense=200)
    assert (rates["aspirate"], rates["dispense"]) == (150, 200)
    assert "give at least one" in await refusal(lab, "set_flow_rate", pipette="pip96")
    assert "must be above 0" in await refusal(lab, "set_flow_rate", pipette="pip96", aspirate=0)
    await call(lab, "pick_up_tip", pipette="pip96", tip_rack="tips", well="A1")
    await call(
        lab, "mix", pipette="pip96", repetitions=1, volume=100, labware="TL_plate", well="A1"
    )
    log = (await call(lab, "get_run_log"))["commands"]
    assert any(c.startswith("Aspirating 100.0 uL") and c.endswith("at 150.0 uL/sec") for c in log)
    assert any(c.startswith("Dispensing 100.0 uL") and c.endswith("at 200.0 uL/sec") for c in log)


async def test_delay_is_logged_and_refuses_a_negative_time(lab: Client) -> None:
    waited = await call(lab, "delay", minutes="30", message="TL lysis incubation")
    assert (waited["minutes"], waited["seconds"]) == (30, 0)
    await call(lab, "delay", seconds=15)
    assert "cannot be negative" in await refusal(lab, "delay", minutes=-1)
    log = (await call(lab, "get_run_log"))["commands"]
    assert log == [
        "Delaying for 30 minutes and 0.0 seconds. TL lysis incubation",
        "Delaying for 0 minutes and 15.0 seconds",
    ]


async def test_the_gripper_moves_plates_onto_and_off_the_heater_shaker_and_magnet(
    lab: Client,
) -> None:
    await _deck(lab)
    await call(lab, "heater_shaker_set_latch", closed=True)
    closed = await refusal(lab, "move_labware", labware="TL_plate", location="magblock")
    assert "labware latch closed" in closed
    await call(lab, "heater_shaker_set_latch", closed=False)
    moved = await call(lab, "move_labware", labware="TL_plate", location="magblock")
    assert (moved["from"], moved["to"], moved["gripper"]) == ("hs_adapter", "magblock", True)
    await call(lab, "move_labware", labware="sample_plate", location="hs_adapter")
    await call(lab, "heater_shaker_set_latch", closed=True)
    await call(lab, "move_labware", labware="TL_plate", location="C3")
    state = await call(lab, "get_deck_state")
    where = {lw["name"]: lw["location"] for lw in state["labware"]}
    assert (where["TL_plate"], where["sample_plate"]) == ("C3", "hs_adapter")
    taken = await refusal(lab, "move_labware", labware="TL_plate", location="C3")
    assert "LocationIsOccupiedError" in taken


async def test_the_waste_chute_takes_d3_and_takes_the_tips(lab: Client) -> None:
    chute = await call(lab, "load_waste_chute")
    assert (chute["name"], chute["location"]) == ("waste_chute", "D3")
    await call(lab, "load_labware", load_name=TIPS, location="C2", name="tips")
    await call(lab, "load_instrument", instrument_name="flex_1channel_1000", mount="left")
    await call(lab, "pick_up_tip", pipette="left", tip_rack="tips")
    await call(lab, "drop_tip", pipette="left")
    log = (await call(lab, "get_run_log"))["commands"]
    assert log[-1].startswith("Dropping tip into Waste Chute")
    state = await call(lab, "get_deck_state")
    assert state["trash_bins"] == [{"name": "waste_chute", "location": "D3"}]

    await call(lab, "reset_robot")
    await call(lab, "load_trash_bin", location="D3")
    both = await refusal(lab, "load_waste_chute")
    assert "not compatible" in both
