"""GTPyhop's ``bio_opentrons`` on a Flex: plan a scenario, map its names, bind it.

The domain is the unchanged ``gtpyhop.examples.mcp-orchestration.bio_opentrons``
(gtpyhop 2.0.2), planned by plansmith's GTPyhop compatibility layer. It names
labware by deck slot and uses slots and a load name that a Flex does not have;
``flex_mapping`` in ``bio_opentrons/bindings.yaml`` says what stands for what,
and ``flex_plan`` rewrites a plan's arguments with it. The result is an
ordinary plan over a small action-only domain, which ``bind()`` binds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from plansmith.binding import Binding, Bindings
from plansmith.compat import mcp_orchestration_example
from plansmith.errors import BindingError, Location
from plansmith.formats import action_domain
from plansmith.model import ActionSchema, Domain, Plan, PyDomain, Step, TypedName

__all__ = [
    "BIO_BINDINGS",
    "SCENARIOS",
    "FlexMapping",
    "bio_opentrons_folder",
    "plan_scenario",
    "read_mapping",
    "flex_plan",
    "one_rack",
]

BIO_BINDINGS = Path(__file__).resolve().parents[1] / "bio_opentrons" / "bindings.yaml"
SCENARIOS = tuple(f"scenario_{n}" for n in range(1, 7))
_SLOT_PARAMS = frozenset({"slot", "tiprack_slot", "labware_slot"})
_LOAD_NAME_PARAMS = frozenset({"labware_type"})
REPLACE_TIP_RACK = "replace_tip_rack"


@dataclass(frozen=True, slots=True)
class FlexMapping:
    """What the domain's names stand for on a Flex: ``slot -> (name, location, why)``,
    ``load name -> (load name, why)``, and notes on what the domain assumes."""

    slots: tuple[tuple[str, str, str, str], ...] = ()
    load_names: tuple[tuple[str, str, str], ...] = ()
    assumed: tuple[tuple[str, str], ...] = ()

    def lines(self) -> list[str]:
        """Every mapping, one line each, for the run report."""
        out = [f"slot {s} -> {n} on {loc} ({why})" for s, n, loc, why in self.slots]
        out += [f"load name {a} -> {b} ({why})" for a, b, why in self.load_names]
        out += [f"{action}: {note}" for action, note in self.assumed]
        return out


def bio_opentrons_folder() -> Path:
    """The ``bio_opentrons`` folder of the installed gtpyhop package."""
    return mcp_orchestration_example("bio_opentrons")


def plan_scenario(name: str) -> tuple[Plan, PyDomain]:
    """The plan of a ``bio_opentrons`` problem (``scenario_1`` .. ``scenario_6``)."""
    from plansmith.compat import gtpyhop  # noqa: PLC0415 - keeps this module light
    from plansmith.formats import load_gtpyhop_package  # noqa: PLC0415
    from plansmith.planning.htn import plan_python  # noqa: PLC0415

    domain, problem = load_gtpyhop_package(bio_opentrons_folder(), name, stand_in=gtpyhop)
    return plan_python(domain, problem), domain


def read_mapping(path: Path = BIO_BINDINGS) -> FlexMapping:
    """The ``flex_mapping`` table of a bindings file."""
    where = Location(str(path))
    try:
        table = (yaml.safe_load(path.read_text()) or {}).get("flex_mapping") or {}
        slots = tuple(
            (str(k), str(v["name"]), str(v["location"]), str(v.get("why", "")))
            for k, v in (table.get("slots") or {}).items()
        )
        names = tuple(
            (str(k), str(v["name"]), str(v.get("why", "")))
            for k, v in (table.get("load_names") or {}).items()
        )
        assumed = tuple((str(k), str(v)) for k, v in (table.get("assumed") or {}).items())
    except (OSError, yaml.YAMLError, AttributeError, KeyError, TypeError) as error:
        raise BindingError(
            f"cannot read flex_mapping: {type(error).__name__}: {error}",
            location=where,
            hint="flex_mapping has slots: {SLOT: {name, location, why}}, "
            "load_names: {NAME: {name, why}} and assumed: {ACTION: note}",
        ) from None
    return FlexMapping(slots, names, assumed)


def _parameters(domain: PyDomain) -> dict[str, tuple[str, ...]]:
    """Each action's parameter names, from its function's signature (without ``state``)."""
    actions = action_domain(domain).actions
    return {a.name: tuple(p.name for p in a.parameters) for a in actions}


def flex_plan(plan: Plan, domain: PyDomain, mapping: FlexMapping) -> tuple[Plan, Domain]:
    """``plan`` with the mapped names, and an action-only domain to bind it with.

    Slot parameters become the labware's Flex name; ``a_load_labware`` gets one more
    argument, ``location``, where the labware goes. Load names are replaced. Numbers
    become numerals (plan arguments are object names; the server reads numerals).
    """
    params = _parameters(domain)
    slots = {s: (n, loc) for s, n, loc, _ in mapping.slots}
    names = {a: b for a, b, _ in mapping.load_names}
    steps: list[Step] = []
    for step in plan.steps:
        names_of = params.get(step.action, ())
        args: list[str] = []
        location: str | None = None
        for pname, value in zip(names_of, step.args, strict=False):
            if pname in _SLOT_PARAMS and isinstance(value, str) and value in slots:
                value, where = slots[value]
                location = location or where
            elif pname in _LOAD_NAME_PARAMS and isinstance(value, str):
                value = names.get(value, value)
            args.append(value if isinstance(value, str) else json.dumps(value))
        if step.action == "a_load_labware":
            if location is None:
                raise BindingError(
                    f"a_load_labware{step.args} loads into a slot flex_mapping does not map",
                    location=Location(str(BIO_BINDINGS), step=step.id),
                    hint="add the slot under flex_mapping.slots",
                )
            args.append(location)
        steps.append(replace(step, args=tuple(args)))
    actions = [
        ActionSchema(
            name,
            tuple(
                TypedName(p) for p in (*names, *(("location",) if name == "a_load_labware" else ()))
            ),
        )
        for name, names in params.items()
    ]
    actions.append(ActionSchema(REPLACE_TIP_RACK, (TypedName("tip_rack"),)))
    settings = (*plan.settings, ("flex_mapping", "bio_opentrons/bindings.yaml"))
    mapped = replace(plan, steps=tuple(steps), settings=settings)
    return mapped, Domain(domain.name, actions=tuple(actions), source=domain.source)


def one_rack(bindings: Bindings) -> Bindings:
    """The bindings with one tip rack, as the domain has it: no reserve rack.

    The 611-action plan then runs out of tips mid-run (the tip-exhaustion scenario).
    """
    out: list[Binding] = []
    for b in bindings.bindings:
        args = b.arguments
        if b.action == "a_initialize_servers" and isinstance(args, dict):
            args = {k: v for k, v in args.items() if k != "labware"}
        elif b.action == "a_load_pipette" and isinstance(args, dict):
            args = {**args, "tip_racks": ["tips_1000"]}
        out.append(replace(b, arguments=args))
    return replace(bindings, bindings=tuple(out))
