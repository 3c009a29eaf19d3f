"""plansmith-lab over stdio: a short protocol on the Opentrons simulator, refusals, idempotency."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from _labclient import SKIP_REASON, call, lab_client, refusal
from mcp import Client

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(SKIP_REASON is not None, reason=str(SKIP_REASON)),
]

TIPS = "opentrons_flex_96_tiprack_200ul"
PLATE = "nest_96_wellplate_100ul_pcr_full_skirt"


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


async def _deck(lab: Client) -> None:
    await call(lab, "load_labware", load_name=TIPS, location="C2", name="tips")
    await call(lab, "load_labware", load_name=PLATE, location="D2", name="plate")
    await call(lab, "load_trash_bin", location="A3")
    await call(
        lab, "load_instrument", instrument_name="flex_1channel_1000", mount="left", name="p1"
    )


async def test_a_short_protocol_runs_on_the_simulator(lab: Client) -> None:
    await _deck(lab)
    picked = await call(lab, "pick_up_tip", pipette="p1", tip_rack="tips")
    assert (picked["tip_rack"], picked["well"]) == ("tips", "A1")
    drawn = await call(lab, "aspirate", pipette="p1", volume=50, labware="plate", well="A1")
    assert drawn["current_volume"] == 50
    given = await call(lab, "dispense", pipette="p1", volume="30", labware="D2", well="b1")
    assert (given["labware"], given["well"], given["current_volume"]) == ("plate", "B1", 20)
    await call(lab, "drop_tip", pipette="left")

    state = await call(lab, "get_deck_state")
    assert state["slots"] == {"A3": "trash", "C2": "tips", "D2": "plate"}
    assert state["pipettes"][0]["has_tip"] is False
    assert [lw["tips_left"] for lw in state["labware"] if lw["name"] == "tips"] == [95]
    log = await call(lab, "get_run_log")
    assert log["count"] == 4
    pick, aspirate, dispense, drop = log["commands"]
    assert pick.startswith("Picking up tip from A1 of Opentrons Flex 96 Tip Rack 200 µL")
    assert aspirate.startswith("Aspirating 50.0 uL from A1 of NEST 96 Well Plate")
    assert dispense.startswith("Dispensing 30.0 uL into B1 of NEST 96 Well Plate")
    assert drop.startswith("Dropping tip")


async def test_the_simulator_refusals_come_back_as_tool_errors(lab: Client) -> None:
    await _deck(lab)
    no_tip = await refusal(lab, "aspirate", pipette="p1", volume=10, labware="plate", well="A1")
    assert "TipNotAttachedError: Pipette should have a tip attached" in no_tip
    await call(lab, "pick_up_tip", pipette="p1", tip_rack="tips")
    too_much = await refusal(lab, "aspirate", pipette="p1", volume=500, labware="plate", well="A1")
    assert "Cannot aspirate 500.0 µL when only 200 is available in the tip" in too_much
    taken = await refusal(lab, "load_labware", load_name=PLATE, location="D2")
    assert "LocationIsOccupiedError" in taken
    unknown = await refusal(lab, "load_labware", load_name="no_such_plate", location="D3")
    assert 'Labware "no_such_plate" not found' in unknown
    nowhere = await refusal(lab, "aspirate", pipette="p1", volume=5, labware="shelf", well="A1")
    assert "no labware named 'shelf'" in nowhere
    no_well = await refusal(lab, "aspirate", pipette="p1", volume=5, labware="plate", well="Z9")
    assert "has no well 'Z9'" in no_well
    no_module = await refusal(lab, "thermocycler_open_lid")
    assert "no module named 'thermocycler'" in no_module
    not_a_number = await refusal(
        lab, "aspirate", pipette="p1", volume="lots", labware="plate", well="A1"
    )
    assert "volume must be a number" in not_a_number
    # nothing was half done: the robot goes on as before
    assert (await call(lab, "aspirate", pipette="p1", volume=50, labware="plate", well="A1"))[
        "current_volume"
    ] == 50


async def test_a_repeated_idempotency_key_returns_the_first_result_and_acts_once(
    lab: Client,
) -> None:
    await _deck(lab)
    first = await call(lab, "pick_up_tip", key="run-1/s5", pipette="p1", tip_rack="tips")
    count = (await call(lab, "get_run_log", limit=0))["count"]
    again = await call(lab, "pick_up_tip", key="run-1/s5", pipette="p1", tip_rack="tips")
    assert again == first
    assert (await call(lab, "get_run_log", limit=0))["count"] == count
    state = await call(lab, "get_deck_state")
    assert [lw["tips_left"] for lw in state["labware"] if lw["name"] == "tips"] == [95]

    misuse = await refusal_with_key(lab, "drop_tip", "run-1/s5", pipette="p1")
    assert "idempotency key 'run-1/s5' was first used for another call" in misuse
    await call(lab, "drop_tip", key="run-1/s6", pipette="p1")
    assert (await call(lab, "get_run_log", limit=0))["count"] == count + 1
    # without a key, the same call acts each time
    await call(lab, "pick_up_tip", pipette="p1", tip_rack="tips")
    await call(lab, "drop_tip", pipette="p1")
    picked = await call(lab, "pick_up_tip", pipette="p1", tip_rack="tips")
    assert picked["well"] == "C1"


async def refusal_with_key(lab: Client, tool: str, key: str, **arguments: object) -> str:
    result = await lab.call_tool(tool, arguments, meta={"io.plansmith/idempotency-key": key})
    assert result.is_error
    return str(result.content[0].text)


async def test_the_modules_keep_their_state_and_refuse_what_the_hardware_cannot(
    lab: Client,
) -> None:
    tc = await call(lab, "load_module", model="thermocyclerModuleV2")
    assert (tc["name"], tc["location"]) == ("thermocycler", "B1")
    await call(lab, "load_module", model="temperatureModuleV2", location="D1", name="cold")
    await call(lab, "load_module", model="heaterShakerModuleV1", location="D3")
    block = await call(lab, "thermocycler_set_block_temperature", temperature=4)
    assert (block["lid_position"], block["block_target_temperature"]) == ("closed", 4)
    assert (await call(lab, "thermocycler_set_lid_temperature", temperature="105"))[
        "lid_target_temperature"
    ] == 105
    profile = [
        {"temperature": 95, "hold_time_seconds": 15},
        {"temperature": 60, "hold_time_seconds": 30},
    ]
    cycled = await call(
        lab, "thermocycler_run_profile", steps=profile, repetitions="30", block_max_volume=25
    )
    assert (cycled["repetitions"], cycled["steps"]) == (30, 2)
    assert (await call(lab, "thermocycler_deactivate"))["block_target_temperature"] is None

    assert (await call(lab, "temperature_module_set_temperature", temperature=4, module="cold"))[
        "target_temperature"
    ] == 4
    too_hot = await refusal(
        lab, "temperature_module_set_temperature", temperature=200, module="cold"
    )
    assert "InvalidTargetTemperatureError" in too_hot
    assert "is a temperature_module, not a thermocycler" in await refusal(
        lab, "thermocycler_open_lid", module="cold"
    )

    assert (await call(lab, "heater_shaker_set_latch", closed=True))["labware_latch"] == "closed"
    assert (await call(lab, "heater_shaker_shake", rpm=1000))["shaking"] is True
    shaking = await refusal(lab, "heater_shaker_set_latch", closed=False)
    assert "cannot open its labware latch while it is shaking" in shaking
    assert (await call(lab, "heater_shaker_deactivate"))["shaking"] is False

    state = await call(lab, "get_deck_state")
    assert state["slots"] == {
        "A1": "thermocycler",
        "B1": "thermocycler",
        "D1": "cold",
        "D3": "heater_shaker",
    }
    log = await call(lab, "get_run_log", since=0)
    assert any(c.startswith("Thermocycler starting 30 repetitions") for c in log["commands"])


async def test_an_empty_tip_rack_is_refused_until_it_is_replaced(lab: Client) -> None:
    await call(lab, "load_labware", load_name=TIPS, location="C2", name="tips")
    await call(lab, "load_trash_bin")
    await call(
        lab, "load_instrument", instrument_name="flex_8channel_1000", mount="right", name="p8"
    )
    for _ in range(12):
        await call(lab, "pick_up_tip", pipette="p8", tip_rack="tips")
        await call(lab, "drop_tip", pipette="p8")
    empty = await refusal(lab, "pick_up_tip", pipette="p8", tip_rack="tips")
    assert "OutOfTipsError: tip rack 'tips' has no 8 tip(s) left for pipette 'p8'" in empty

    fresh = await call(lab, "replace_tip_rack", tip_rack="C2")
    assert (fresh["name"], fresh["location"], fresh["tips_left"], fresh["replaced"]) == (
        "tips",
        "C2",
        96,
        "tips_used",
    )
    assert (await call(lab, "pick_up_tip", pipette="p8", tip_rack="tips"))["well"] == "A1"
    state = await call(lab, "get_deck_state")
    racks = {lw["name"]: (lw["location"], lw["tips_left"]) for lw in state["labware"]}
    assert racks == {"tips": ("C2", 88), "tips_used": ("off_deck", 0)}
