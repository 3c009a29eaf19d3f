"""GTPyhop's unchanged ``bio_opentrons`` planned via the compatibility layer, mapped to a
Flex, and run on the Opentrons simulator over the three role servers."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from _labclient import SKIP_REASON

from plansmith.binding import load_bindings
from plansmith.domains.lab.sim import (
    BIO_BINDINGS,
    SCENARIOS,
    flex_plan,
    one_rack,
    plan_scenario,
    read_mapping,
)

pytest.importorskip("gtpyhop")
needs_lab = pytest.mark.skipif(SKIP_REASON is not None, reason=str(SKIP_REASON))
# plansmith plans one more action than the paper counts: a_initialize_servers.
PAPER_ACTIONS = {"scenario_1": 55, "scenario_2": 79, "scenario_3": 127, "scenario_4": 223}
PAPER_ACTIONS |= {"scenario_5": 321, "scenario_6": 611}


def test_the_scenarios_plan_to_the_papers_action_counts() -> None:
    for name in SCENARIOS:
        plan, _ = plan_scenario(name)
        assert len(plan.steps) - 1 == PAPER_ACTIONS[name]
        assert plan.steps[0].action == "a_initialize_servers"


def test_the_mapping_renames_slots_and_load_names_and_places_labware() -> None:
    plan, domain = plan_scenario("scenario_1")
    mapped, schema_domain = flex_plan(plan, domain, read_mapping(BIO_BINDINGS))
    loads = [s.args for s in mapped.steps if s.action == "a_load_labware"]
    assert (
        "pcr_plate",
        "opentrons_96_wellplate_200ul_pcr_full_skirt",
        "thermocycler",
    ) in loads
    assert ("sample_plate", "nest_96_wellplate_200ul_flat", "D2") in loads
    aspirate = next(s for s in mapped.steps if s.action == "a_aspirate")
    assert aspirate.args == ("left", "500.0", "reagent_block", "A1")  # the well keeps its name
    assert schema_domain.action("replace_tip_rack") is not None
    assert [s.action for s in mapped.steps] == [s.action for s in plan.steps]


def test_one_rack_drops_the_reserve_rack() -> None:
    bindings = one_rack(load_bindings(BIO_BINDINGS))
    setup = bindings.get("a_initialize_servers")
    pipette = bindings.get("a_load_pipette")
    assert setup is not None
    assert pipette is not None
    assert "tips_1000_reserve" not in json.dumps(setup.arguments)
    assert "tips_1000_reserve" not in json.dumps(pipette.arguments)


def _run(scenario: str, home: Path, tip_racks: int = 2) -> object:
    from plansmith.domains.lab.sim import run_bio

    return anyio.run(lambda: run_bio(scenario, home=home, tip_racks=tip_racks))


@needs_lab
@pytest.mark.parametrize(
    "scenario",
    [*SCENARIOS[:5], pytest.param(SCENARIOS[5], marks=pytest.mark.slow)],  # 611: the slowest
)
def test_every_scenario_runs_on_the_simulator_with_no_failed_step(
    scenario: str, tmp_path: Path
) -> None:
    run = _run(scenario, tmp_path)
    stats = run.stats  # type: ignore[attr-defined]
    assert stats.state == "succeeded", stats.reason
    assert stats.failed == []
    assert stats.steps == PAPER_ACTIONS[scenario] + 1
    assert set(stats.per_server) == {"movement", "liquid", "modules"}
    assert stats.commands > stats.steps  # a mix is several simulator commands
    assert any("pcr_plate on thermocycler" in m for m in run.mappings)  # type: ignore[attr-defined]


@needs_lab
def test_three_replays_of_a_stored_plan_give_the_same_order_and_distribution(
    tmp_path: Path,
) -> None:
    from plansmith.domains.lab.sim import run_plan
    from plansmith.formats import parse_plan_json, plan_to_json

    plan, py_domain = plan_scenario("scenario_2")
    mapped, domain = flex_plan(plan, py_domain, read_mapping(BIO_BINDINGS))
    stored = tmp_path / "plan.json"
    stored.write_text(plan_to_json(mapped))
    bindings = load_bindings(BIO_BINDINGS)
    results = []
    for n in range(3):
        again = parse_plan_json(stored.read_text())
        assert again.hash == mapped.hash
        home = tmp_path / f"r{n}"
        run = anyio.run(lambda p=again, h=home: run_plan(p, domain, bindings, home=h))
        assert run.stats.state == "succeeded", run.stats.reason
        results.append((run.stats.order, dict(run.stats.per_server), run.stats.commands))
    assert results[0] == results[1] == results[2]
    assert len(results[0][0]) == len(mapped.steps)


@needs_lab
@pytest.mark.slow
def test_running_out_of_tips_is_repaired_by_a_replan(tmp_path: Path) -> None:
    run = _run("scenario_6", tmp_path, tip_racks=1)
    stats = run.stats  # type: ignore[attr-defined]
    assert stats.state == "succeeded", stats.reason
    assert len(stats.failed) == 1
    assert "OutOfTipsError" in stats.failed[0]
    assert "a_pick_up_tip" in stats.failed[0]
    assert len(stats.replans) == 1
    actions = [action for _, action, _ in stats.order]
    assert actions.count("replace_tip_rack") == 1
    replaced = actions.index("replace_tip_rack")
    assert actions[replaced + 1] == "a_pick_up_tip"  # the refused pick-up, now from a full rack
    assert stats.steps == PAPER_ACTIONS["scenario_6"] + 1 + 1  # every action once, plus the rack
    assert "replace_tip_rack(tips_1000)" in run.replan_notes[0]  # type: ignore[attr-defined]
