"""GTPyhop's unchanged Omega HDQ DNA extraction (96-channel Flex) planned via the
compatibility layer, mapped to a Flex, and run on the Opentrons simulator over the three
role servers; the run is checked against the plan from the simulator's own run log."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import anyio
import pytest
from _labclient import SKIP_REASON

from plansmith.binding import load_bindings
from plansmith.domains.lab.sim import (
    OMEGA_BINDINGS,
    OMEGA_SCENARIOS,
    LabRun,
    omega_plan,
    plan_omega,
    read_omega_mapping,
)
from plansmith.model import Plan

pytest.importorskip("gtpyhop")
needs_lab = pytest.mark.skipif(SKIP_REASON is not None, reason=str(SKIP_REASON))
# what plansmith plans for each problem, and whether it has the heater-shaker
PLANNED = {
    "scenario_1_standard": (141, True),
    "scenario_2_dry_run": (99, True),
    "scenario_3_manual_mixing": (100, False),
}
# where a move's destination shows in the simulator's "Moving ... with gripper" line
MOVED_TO = {
    "hs_adapter": "to opentrons_96_deep_well_adapter with gripper",
    "magblock": "to MagneticBlockContext at Magnetic Block GEN1 on C1",
    "C3": "to slot C3 with gripper",
    "D1": "to slot D1 with gripper",
}
HS_LINES = (
    "Latching labware",
    "Unlatching labware",
    "Setting Heater-Shaker",
    "Setting Target Temperature of Heater-Shaker",
    "Waiting for Heater-Shaker",
    "Deactivating Shaker",
)


def test_the_scenarios_plan() -> None:
    for name in OMEGA_SCENARIOS:
        plan, _, heater_shaker = plan_omega(name)
        assert (len(plan.steps), heater_shaker) == PLANNED[name]


def test_the_mapping_sets_up_the_deck_first_and_renames_the_destinations() -> None:
    plan, domain, heater_shaker = plan_omega("scenario_1_standard")
    mapping = read_omega_mapping(OMEGA_BINDINGS)
    mapped, schema_domain = omega_plan(plan, domain, mapping, heater_shaker=heater_shaker)
    assert len(mapped.steps) == len(plan.steps) + 1
    first, second = mapped.steps[:2]
    assert (first.id, first.action, first.args) == ("s0", "set_up_deck", ())
    assert second.after == ("s0",)
    assert [s.action for s in mapped.steps[1:]] == [s.action for s in plan.steps]
    moves = [s.args for s in mapped.steps if s.action == "a_move_labware"]
    assert moves[:3] == [
        ("TL_plate", "magblock", True),
        ("sample_plate", "hs_adapter", True),
        ("TL_plate", "C3", True),
    ]
    mix = next(s for s in mapped.steps if s.action == "a_mix")
    assert mix.args == ("pip96", "3", "270", "TL_reservoir", "A1")  # numbers as numerals
    bindings = load_bindings(OMEGA_BINDINGS)
    for action in schema_domain.actions:
        assert bindings.get(action.name) is not None, action.name
    lines = mapping.lines(heater_shaker=True)
    assert any(line.startswith("destination heater_shaker -> hs_adapter") for line in lines)
    assert not any(line.startswith("set_up_deck_manual") for line in lines)

    manual, manual_domain, heater_shaker = plan_omega("scenario_3_manual_mixing")
    mapped, _ = omega_plan(manual, manual_domain, mapping, heater_shaker=heater_shaker)
    assert mapped.steps[0].action == "set_up_deck_manual"
    assert ("sample_plate", "D1", True) in [
        s.args for s in mapped.steps if s.action == "a_move_labware"
    ]


def _run(scenario: str, home: Path) -> LabRun:
    from plansmith.domains.lab.sim import run_omega

    return anyio.run(lambda: run_omega(scenario, home=home, keep_log=True))


def _count(log: list[str], prefix: str) -> int:
    return sum(1 for line in log if line.startswith(prefix))


def _expected_hs_lines(plan: Plan) -> list[str]:
    out: list[str] = []
    for step in plan.steps:
        if step.action == "a_hs_close_latch":
            out.append("Latching labware on Heater-Shaker")
        elif step.action == "a_hs_open_latch":
            out.append("Unlatching labware on Heater-Shaker")
        elif step.action == "a_hs_set_shake_speed":
            out.append(
                f"Setting Heater-Shaker to Shake at {step.args[0]} RPM and waiting until reached"
            )
        elif step.action == "a_hs_deactivate_shaker":
            out.append("Deactivating Shaker")
        elif step.action == "a_hs_set_temperature":
            out.append(f"Setting Target Temperature of Heater-Shaker to {step.args[0]} °C")
            out.append("Waiting for Heater-Shaker to reach target temperature")
    return out


@needs_lab
@pytest.mark.parametrize("scenario", OMEGA_SCENARIOS)
def test_every_scenario_runs_on_the_simulator_as_planned(scenario: str, tmp_path: Path) -> None:
    run = _run(scenario, tmp_path)
    stats, plan, log = run.stats, run.plan, run.run_log
    assert stats.state == "succeeded", stats.reason
    assert stats.failed == []
    assert stats.steps == len(plan.steps) == PLANNED[scenario][0] + 1
    assert set(stats.per_server) == {"movement", "liquid", "modules"}
    assert stats.commands == len(log) > stats.steps
    actions = Counter(step.action for step in plan.steps)

    # the 96-channel pipette, picking up whole racks of 1000 µL tips
    (pipette,) = run.deck["pipettes"]
    assert (pipette["name"], pipette["instrument_name"], pipette["channels"]) == (
        "pip96",
        "flex_96channel_1000",
        96,
    )
    pick_ups = [line for line in log if line.startswith("Picking up tip")]
    assert len(pick_ups) == actions["a_pick_up_tip"]
    assert all(
        line.startswith("Picking up tip from A1 of Opentrons Flex 96 Tip Rack 1000 µL on ")
        and "Tip Rack Adapter" in line
        for line in pick_ups
    )
    assert _count(log, "Returning tip") == actions["a_return_tip"]

    # liquid handling: a mix of n repetitions is n aspirates and n dispenses
    mixed = sum(int(str(s.args[1])) for s in plan.steps if s.action == "a_mix")
    assert _count(log, "Mixing ") == actions["a_mix"]
    assert _count(log, "Aspirating ") == actions["a_aspirate"] + mixed
    assert _count(log, "Dispensing ") == actions["a_dispense"] + mixed
    assert _count(log, "Air gap of ") == actions["a_air_gap"]
    assert _count(log, "Blowing out ") == actions["a_blow_out"]
    assert _count(log, "Delaying for ") == actions["a_delay"]
    assert _count(log, "Homing pipette plunger on mount left") == actions["a_home"]
    assert any(line.endswith("at 150.0 uL/sec") for line in log)  # a_set_flow_rate took

    # the gripper's moves, in order, to where the plan sends them
    moves = [line for line in log if line.startswith("Moving ")]
    wanted = [str(s.args[1]) for s in plan.steps if s.action == "a_move_labware"]
    assert len(moves) == len(wanted) == actions["a_move_labware"]
    for line, where in zip(moves, wanted, strict=True):
        assert MOVED_TO[where] in line, (line, where)

    # the heater-shaker's latch, temperature and shaking, in the plan's order
    hs = [line for line in log if line.startswith(HS_LINES)]
    assert hs == _expected_hs_lines(plan)
    if PLANNED[scenario][1]:
        assert hs[0] == "Latching labware on Heater-Shaker"
        assert actions["a_hs_open_latch"] + 1 == actions["a_hs_close_latch"]
    else:
        assert hs == []

    placed = {lw["name"]: lw["location"] for lw in run.deck["labware"]}
    assert (placed["sample_plate"], placed["TL_plate"]) == ("magblock", "C3")
    assert any("destination heater_shaker -> hs_adapter" in m for m in run.mappings)
