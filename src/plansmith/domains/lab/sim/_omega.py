"""GTPyhop's Omega HDQ DNA extraction (96-channel Flex) on the simulator: plan, map, bind.

The domain is the unchanged
``gtpyhop.examples.mcp-orchestration.omega_hdq_dna_bacteria_flex_96_channel``
(gtpyhop 2.0.2), planned by plansmith's GTPyhop compatibility layer. It names labware
as the original Opentrons protocol loads it, so the deck loads it under those names;
``flex_mapping`` in ``omega_hdq/bindings.yaml`` renames the few move destinations that
are no name on a Flex. The domain plans no deck set-up, so ``omega_plan`` puts one step
in front of the plan: ``set_up_deck`` (the original deck), or ``set_up_deck_manual``
for a problem without the heater-shaker.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from plansmith.compat import mcp_orchestration_example
from plansmith.errors import BindingError, Location
from plansmith.formats import action_domain
from plansmith.model import ActionSchema, Domain, Plan, PyDomain, Step, StepArg, TypedName

__all__ = [
    "OMEGA_BINDINGS",
    "OMEGA_SCENARIOS",
    "OmegaMapping",
    "omega_folder",
    "plan_omega",
    "read_omega_mapping",
    "omega_plan",
]

OMEGA_BINDINGS = Path(__file__).resolve().parents[1] / "omega_hdq" / "bindings.yaml"
OMEGA_SCENARIOS = ("scenario_1_standard", "scenario_2_dry_run", "scenario_3_manual_mixing")
_EXAMPLE = "omega_hdq_dna_bacteria_flex_96_channel"
_DESTINATION_PARAMS = frozenset({"destination"})
SET_UP_DECK = "set_up_deck"
SET_UP_DECK_MANUAL = "set_up_deck_manual"


@dataclass(frozen=True, slots=True)
class OmegaMapping:
    """What the domain's names stand for on a Flex: ``destination -> (name, why)``, and
    notes on what the domain assumes."""

    destinations: tuple[tuple[str, str, str], ...] = ()
    assumed: tuple[tuple[str, str], ...] = ()

    def lines(self, *, heater_shaker: bool = True) -> list[str]:
        """Every mapping, one line each, for the run report (the deck set-up used)."""
        skip = SET_UP_DECK_MANUAL if heater_shaker else SET_UP_DECK
        out = [f"destination {d} -> {n} ({why})" for d, n, why in self.destinations]
        out += [f"{action}: {note}" for action, note in self.assumed if action != skip]
        return out


def omega_folder() -> Path:
    """The ``omega_hdq_dna_bacteria_flex_96_channel`` folder of the installed gtpyhop."""
    return mcp_orchestration_example(_EXAMPLE)


def plan_omega(name: str) -> tuple[Plan, PyDomain, bool]:
    """The plan of an Omega HDQ problem (``OMEGA_SCENARIOS``), its domain, and whether the
    problem has the heater-shaker."""
    from plansmith.compat import gtpyhop  # noqa: PLC0415 - keeps this module light
    from plansmith.formats import load_gtpyhop_package  # noqa: PLC0415
    from plansmith.planning.htn import plan_python  # noqa: PLC0415

    domain, problem = load_gtpyhop_package(omega_folder(), name, stand_in=gtpyhop)
    heater_shaker = bool(getattr(problem.state, "heater_shaker_available", False))
    return plan_python(domain, problem), domain, heater_shaker


def read_omega_mapping(path: Path = OMEGA_BINDINGS) -> OmegaMapping:
    """The ``flex_mapping`` table of the Omega HDQ bindings file."""
    try:
        table = (yaml.safe_load(path.read_text()) or {}).get("flex_mapping") or {}
        destinations = tuple(
            (str(k), str(v["name"]), str(v.get("why", "")))
            for k, v in (table.get("destinations") or {}).items()
        )
        assumed = tuple((str(k), str(v)) for k, v in (table.get("assumed") or {}).items())
    except (OSError, yaml.YAMLError, AttributeError, KeyError, TypeError) as error:
        raise BindingError(
            f"cannot read flex_mapping: {type(error).__name__}: {error}",
            location=Location(str(path)),
            hint="flex_mapping has destinations: {NAME: {name, why}} and assumed: {ACTION: note}",
        ) from None
    return OmegaMapping(destinations, assumed)


def _parameters(domain: PyDomain) -> dict[str, tuple[str, ...]]:
    """Each action's parameter names, from its function's signature (without ``state``)."""
    actions = action_domain(domain).actions
    return {a.name: tuple(p.name for p in a.parameters) for a in actions}


def omega_plan(
    plan: Plan, domain: PyDomain, mapping: OmegaMapping, *, heater_shaker: bool = True
) -> tuple[Plan, Domain]:
    """``plan`` with the deck set-up in front and the mapped names, and an action-only
    domain to bind it with.

    The set-up step is ``s0`` (``set_up_deck``, or ``set_up_deck_manual`` without the
    heater-shaker), and the first step of the plan waits for it. Move destinations
    are renamed; numbers become numerals (plan arguments are object names; the server
    reads numerals), and a boolean stays one (``use_gripper``: the tool takes a boolean).
    """
    params = _parameters(domain)
    renamed = {d: n for d, n, _ in mapping.destinations}
    setup = SET_UP_DECK if heater_shaker else SET_UP_DECK_MANUAL
    steps: list[Step] = [Step("s0", setup)]
    for n, step in enumerate(plan.steps):
        args: list[StepArg] = []
        for pname, value in zip(params.get(step.action, ()), step.args, strict=False):
            if pname in _DESTINATION_PARAMS and isinstance(value, str):
                value = renamed.get(value, value)
            args.append(value if isinstance(value, str | bool) else json.dumps(value))
        after = step.after if n or step.after else ("s0",)
        steps.append(replace(step, args=tuple(args), after=after))
    actions = [
        ActionSchema(name, tuple(TypedName(p) for p in names)) for name, names in params.items()
    ]
    actions += [ActionSchema(SET_UP_DECK), ActionSchema(SET_UP_DECK_MANUAL)]
    settings = (*plan.settings, ("flex_mapping", "omega_hdq/bindings.yaml"))
    mapped = replace(plan, steps=tuple(steps), settings=settings)
    return mapped, Domain(domain.name, actions=tuple(actions), source=domain.source)
