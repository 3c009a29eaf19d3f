"""The three logical servers (movement, liquid, modules): their tools, and one shared robot."""

from __future__ import annotations

import ast
import importlib.util
import json
import select
import subprocess
from pathlib import Path

import anyio
import pytest
from _labclient import SKIP_REASON, call, lab_client, labtools, refusal, server_params

from plansmith.domains.lab import LAB_DIR

needs_lab_venv = pytest.mark.skipif(SKIP_REASON is not None, reason=str(SKIP_REASON))

COMMON = {"get_deck_state", "get_run_log", "reset_robot"}
MOVEMENT = {
    "load_labware",
    "load_adapter",
    "load_trash_bin",
    "load_instrument",
    "pick_up_tip",
    "drop_tip",
    "move_to_well",
    "move_labware",
    "replace_tip_rack",
    "load_waste_chute",
    "return_tip",
    "home",
}
LIQUID = {"aspirate", "dispense", "mix", "blow_out", "air_gap", "set_flow_rate"}
MODULES = {
    "load_module",
    "set_up_deck",
    "thermocycler_open_lid",
    "thermocycler_close_lid",
    "thermocycler_set_block_temperature",
    "thermocycler_set_lid_temperature",
    "thermocycler_run_profile",
    "thermocycler_deactivate_lid",
    "thermocycler_deactivate",
    "temperature_module_set_temperature",
    "temperature_module_deactivate",
    "heater_shaker_set_temperature",
    "heater_shaker_shake",
    "heater_shaker_stop_shaking",
    "heater_shaker_set_latch",
    "heater_shaker_deactivate",
    "delay",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _robot_socket(robot: Path) -> Path:
    """Where the robot of directory ``robot`` listens (``labhub`` is standard library only)."""
    spec = importlib.util.spec_from_file_location("labhub", LAB_DIR / "labserver" / "labhub.py")
    assert spec is not None
    assert spec.loader is not None
    labhub = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(labhub)
    return Path(labhub.socket_path(robot))


def test_every_tool_belongs_to_one_role_and_all_has_them_all() -> None:
    tools = labtools()
    assert set(tools.TOOLS) == COMMON | MOVEMENT | LIQUID | MODULES
    assert {t.name for t in tools.tools_for("all")} == set(tools.TOOLS)
    assert {t.name for t in tools.tools_for("liquid")} == COMMON | LIQUID
    with pytest.raises(ValueError, match="unknown role 'pipetting'"):
        tools.tools_for("pipetting")


@pytest.mark.anyio
@needs_lab_venv
@pytest.mark.parametrize(
    "path",
    [
        pytest.param({}, id="the robot serves each role's client itself"),
        pytest.param({"PLANSMITH_LAB_FORWARD": "1"}, id="each role server forwards the calls"),
    ],
)
async def test_three_role_servers_drive_one_simulated_robot(
    tmp_path: Path, path: dict[str, str]
) -> None:
    robot = tmp_path / "robot"
    async with (
        lab_client("movement", robot, path) as movement,
        lab_client("liquid", robot, path) as liquid,
        lab_client("modules", robot, path) as modules,
    ):
        for client, expected in ((movement, MOVEMENT), (liquid, LIQUID), (modules, MODULES)):
            listed = {t.name for t in (await client.list_tools()).tools}
            assert listed == COMMON | expected
        assert "Unknown tool: aspirate" in await refusal(movement, "aspirate", pipette="p8")

        await call(modules, "load_module", model="thermocyclerModuleV2", location="slot_B1")
        plate = "opentrons_96_wellplate_200ul_pcr_full_skirt"
        await call(movement, "load_labware", load_name=plate, location="thermocycler", name="pcr")
        await call(
            movement, "load_labware", load_name="opentrons_flex_96_tiprack_50ul", location="C3"
        )
        await call(movement, "load_trash_bin", location="A3")
        await call(
            movement,
            "load_instrument",
            instrument_name="flex_8channel_1000",
            mount="left",
            name="p8",
        )
        picked = await call(movement, "pick_up_tip", pipette="p8", tip_rack="C3")
        assert picked["well"] == "A1"

        closed = await refusal(
            liquid, "aspirate", pipette="p8", volume=10, labware="pcr", well="A1"
        )
        assert "Thermocycler must be open" in closed
        assert (await call(modules, "thermocycler_open_lid"))["lid_position"] == "open"
        await call(liquid, "aspirate", pipette="p8", volume=10, labware="thermocycler", well="A1")

        seen = await call(liquid, "get_deck_state")
        assert seen["slots"] == {
            "A1": "thermocycler",
            "A3": "trash",
            "B1": "thermocycler",
            "C3": "opentrons_flex_96_tiprack_50ul",
        }
        assert (
            seen["pipettes"][0] | {"has_tip": True, "current_volume": 10, "channels": 8}
            == seen["pipettes"][0]
        )
        assert seen["modules"][0]["lid_position"] == "open"
        assert seen == await call(movement, "get_deck_state")

    # the last role server to leave took the robot with it: the same DIR starts afresh
    async with lab_client("modules", robot, path) as modules:
        fresh = await call(modules, "get_deck_state")
        assert (fresh["labware"], fresh["modules"], fresh["command_count"]) == ([], [], 0)


def test_every_tool_is_a_robot_method_with_the_same_parameters() -> None:
    methods = {
        node.name.removeprefix("tool_"): node
        for module in ("labrobot.py", "labmodules.py")
        for node in ast.walk(
            ast.parse((LAB_DIR / "labserver" / module).read_text(encoding="utf-8"))
        )
        if isinstance(node, ast.FunctionDef) and node.name.startswith("tool_")
    }
    tools = labtools().TOOLS
    assert set(methods) == set(tools)
    for name, spec in tools.items():
        args = methods[name].args
        taken = [a.arg for a in [*args.args, *args.kwonlyargs] if a.arg != "self"]
        assert taken == list(spec.signature.parameters), name


@pytest.mark.anyio
@needs_lab_venv
async def test_a_killed_role_server_takes_its_session_and_the_last_robot_with_it(
    tmp_path: Path,
) -> None:
    robot = tmp_path / "robot"
    params = server_params("modules", robot)
    role = subprocess.Popen(
        [params.command, *params.args],
        cwd=params.cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert role.stdin is not None
        assert role.stdout is not None
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        }
        load = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "load_module",
                "arguments": {"model": "temperatureModuleV2", "location": "D1"},
            },
        }
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        role.stdin.write(json.dumps(hello).encode() + b"\n")
        role.stdin.flush()
        reply = json.loads(role.stdout.readline())  # served by the robot process
        assert reply["result"]["serverInfo"]["name"] == "plansmith-lab-modules"
        for message in (initialized, load):
            role.stdin.write(json.dumps(message).encode() + b"\n")
        role.stdin.flush()
        loaded = json.loads(role.stdout.readline())
        assert not loaded["result"]["isError"], loaded

        role.kill()
        role.wait(timeout=30)
        ready, _, _ = select.select([role.stdout], [], [], 30)
        assert ready, "the client's stream stayed open after its role server died"
        assert role.stdout.read() == b""  # the robot ended the session and closed the stream
        role.stdout.close()
        role.stdin.close()
    finally:
        if role.poll() is None:
            role.kill()
            role.wait(timeout=30)
    # the robot closes the stream first, then, finding no facade left, removes its socket
    # and exits: a client started before that would reach it and keep it alive
    sock = _robot_socket(robot)
    with anyio.fail_after(30):
        while sock.exists():
            await anyio.sleep(0.02)

    async with lab_client("modules", robot) as modules:  # the last one gone: a fresh robot
        assert (await call(modules, "get_deck_state"))["modules"] == []
