"""Run makers (``plansmith.engine.RunMaker``) of GTPyhop's lab domains on the simulator,
so that the run table of a face (``plansmith mcp``, ``plansmith serve``) makes, approves,
resumes and takes over their runs as it does a run made from files:

* ``bio-opentrons``: a ``bio_opentrons`` scenario mapped to a Flex (``run_bio``), with
  the tip-exhaustion replan; arguments ``scenario`` and ``tip_racks`` (1 or 2);
* ``dna-extraction``: an Omega HDQ DNA extraction scenario mapped to a Flex with the
  96-channel pipette (``run_omega``); argument ``scenario``.

Each run gets a fresh robot in its own directory (``RUN_DIR/robot``), kept there, so a
resumed run goes on with the robot it had.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from plansmith.binding import Bindings, load_bindings
from plansmith.domains.lab.sim._bio import (
    BIO_BINDINGS,
    SCENARIOS,
    flex_plan,
    one_rack,
    plan_scenario,
    read_mapping,
)
from plansmith.domains.lab.sim._labrun import BIO_TIP_RACKS
from plansmith.domains.lab.sim._labservers import write_servers
from plansmith.domains.lab.sim._omega import (
    OMEGA_BINDINGS,
    OMEGA_SCENARIOS,
    omega_plan,
    plan_omega,
    read_omega_mapping,
)
from plansmith.domains.lab.sim._tips import tip_replanner
from plansmith.engine import MadeRun, MakeContext
from plansmith.errors import InputError, Location
from plansmith.model import Domain, JSONValue, Plan
from plansmith.servers import load_servers

__all__ = [
    "make_bio_opentrons_run",
    "make_dna_extraction_run",
    "bio_opentrons_plan",
    "dna_extraction_plan",
    "checked_scenario",
]


def checked_scenario(args: Mapping[str, JSONValue], known: tuple[str, ...]) -> str:
    """``args["scenario"]``, one of ``known`` (default the first), else an ``InputError``."""
    scenario = args.get("scenario", known[0])
    if not isinstance(scenario, str) or scenario not in known:
        raise InputError(
            f"no scenario {scenario!r}",
            location=Location(argument="scenario"),
            hint=f"one of: {', '.join(known)}",
        )
    return scenario


def _tip_racks(args: Mapping[str, JSONValue]) -> int:
    racks = args.get("tip_racks", 2)
    if isinstance(racks, str) and racks.strip() in ("1", "2"):
        racks = int(racks)
    if isinstance(racks, bool) or racks not in (1, 2):
        raise InputError(
            f"tip_racks {racks!r}: the deck holds one or two racks of 1000 µl tips",
            location=Location(argument="tip_racks"),
            hint="1 (the tips run out and a replan replaces the rack) or 2",
        )
    return 1 if racks == 1 else 2


def _servers(context: MakeContext) -> Path:
    return write_servers(context.run_dir / "servers.json", context.run_dir / "robot")


def bio_opentrons_plan(args: Mapping[str, JSONValue]) -> tuple[Plan, Domain, Bindings]:
    """The Flex plan of a ``bio_opentrons`` scenario, its action domain and bindings
    (one tip rack with ``tip_racks`` 1): what its run runs, and what a face shows."""
    scenario = checked_scenario(args, SCENARIOS)
    racks = _tip_racks(args)
    gtpyhop_plan, py_domain = plan_scenario(scenario)
    plan, domain = flex_plan(gtpyhop_plan, py_domain, read_mapping(BIO_BINDINGS))
    bindings = load_bindings(BIO_BINDINGS)
    return plan, domain, one_rack(bindings) if racks == 1 else bindings


def make_bio_opentrons_run(args: Mapping[str, JSONValue], context: MakeContext) -> MadeRun:
    """A ``bio_opentrons`` scenario on a Flex (see the module docstring)."""
    plan, domain, bindings = bio_opentrons_plan(args)
    return MadeRun(
        plan,
        domain,
        bindings,
        load_servers(_servers(context)),
        lambda catalog: tip_replanner(
            plan,
            domain,
            bindings,
            catalog,
            log=context.log,
            run_id=context.run_id,
            tip_racks=set(BIO_TIP_RACKS),
        ),
    )


def dna_extraction_plan(args: Mapping[str, JSONValue]) -> tuple[Plan, Domain, Bindings]:
    """The Flex plan of an Omega HDQ DNA extraction scenario (96-channel pipette), its
    action domain and bindings: what its run runs, and what a face shows."""
    scenario = checked_scenario(args, OMEGA_SCENARIOS)
    gtpyhop_plan, py_domain, heater_shaker = plan_omega(scenario)
    mapping = read_omega_mapping(OMEGA_BINDINGS)
    plan, domain = omega_plan(gtpyhop_plan, py_domain, mapping, heater_shaker=heater_shaker)
    return plan, domain, load_bindings(OMEGA_BINDINGS)


def make_dna_extraction_run(args: Mapping[str, JSONValue], context: MakeContext) -> MadeRun:
    """An Omega HDQ DNA extraction scenario on a Flex (see the module docstring)."""
    plan, domain, bindings = dna_extraction_plan(args)
    return MadeRun(plan, domain, bindings, load_servers(_servers(context)))
