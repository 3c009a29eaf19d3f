"""What is on the simulated deck, by name: labware, modules, pipettes and trash bins.

Tools refer to things by the names given at load time. Labware may also be
named by the deck slot it sits in (``C2``, ``c2`` or ``slot_C2``: the prefix lets
a plan object stand for a slot without clashing with a well named ``C2``) or by
the module that holds it; the topmost labware there is meant. A pipette may
also be named by its mount.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from opentrons.protocol_api import OFF_DECK, InstrumentContext, Labware, ProtocolContext
from opentrons.protocol_api.labware import Well

__all__ = ["RobotError", "Place", "Deck", "module_kind", "module_status", "number", "whole"]

_SLOT = re.compile(r"(?:slot_)?([A-Da-d][1-4])")
_KINDS = {
    "ThermocyclerContext": "thermocycler",
    "TemperatureModuleContext": "temperature_module",
    "HeaterShakerContext": "heater_shaker",
    "MagneticBlockContext": "magnetic_block",
    "AbsorbanceReaderContext": "absorbance_reader",
}


class RobotError(Exception):
    """A call the robot refuses; the message says why."""


def number(value: Any, what: str) -> float:
    """A number given as a number or as a numeral string (plan arguments are text)."""
    if isinstance(value, bool):
        raise RobotError(f"{what} must be a number, not {value!r}")
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value).strip())
    except ValueError:
        raise RobotError(f"{what} must be a number, not {value!r}") from None


def whole(value: Any, what: str) -> int:
    """A whole number given as a number or as a numeral string."""
    amount = number(value, what)
    if not amount.is_integer():
        raise RobotError(f"{what} must be a whole number, not {value!r}")
    return int(amount)


def module_kind(module: Any) -> str:
    """``thermocycler``, ``temperature_module``, ``heater_shaker``, ``magnetic_block``, ..."""
    return _KINDS.get(type(module).__name__, type(module).__name__.lower())


def _plain(value: Any) -> Any:
    return value if value is None or isinstance(value, bool | int | float | str) else str(value)


def module_status(ctx: ProtocolContext, module: Any) -> dict[str, Any]:
    """The module's state as the simulator's protocol engine tracks it: lid, targets, latch.

    Opentrons' public temperature properties read the simulated hardware, which
    stays at its idle values, so this reads the engine's module state (not a
    public API: read defensively, and left out if it cannot be read).
    """
    kind = module_kind(module)
    try:
        modules = getattr(ctx, "_core")._engine_client.state.modules  # noqa: B009
        module_id = getattr(module, "_core").module_id  # noqa: B009
        if kind == "thermocycler":
            tc = modules.get_thermocycler_module_substate(module_id)
            return {
                "lid_position": "open" if tc.is_lid_open else "closed",
                "block_target_temperature": tc.target_block_temperature,
                "lid_target_temperature": tc.target_lid_temperature,
            }
        if kind == "temperature_module":
            tm = modules.get_temperature_module_substate(module_id)
            return {"target_temperature": tm.plate_target_temperature}
        if kind == "heater_shaker":
            hs = modules.get_heater_shaker_module_substate(module_id)
            latch = getattr(hs.labware_latch_status, "value", hs.labware_latch_status)
            return {
                "target_temperature": hs.plate_target_temperature,
                "shaking": hs.is_plate_shaking,
                "labware_latch": _plain(latch),
            }
    except Exception:  # another opentrons version: the state is optional
        return {}
    return {}


@dataclass(frozen=True, slots=True)
class Place:
    """Where labware can go: a slot, a module, labware (an adapter) or off the deck."""

    kind: str
    key: str
    thing: Any


class Deck:
    """The names of everything loaded into one protocol context."""

    def __init__(self, ctx: ProtocolContext) -> None:
        self.reset(ctx)

    def reset(self, ctx: ProtocolContext) -> None:
        """Forget everything: ``ctx`` is a new protocol on an empty deck."""
        self.ctx = ctx
        self.labwares: dict[str, Labware] = {}
        self.parent_of: dict[str, str] = {}
        self.modules: dict[str, Any] = {}
        self.module_slots: dict[str, list[str]] = {}
        self.pipettes: dict[str, InstrumentContext] = {}
        self.trash: dict[str, tuple[Any, str]] = {}

    # --- names ------------------------------------------------------------------------

    def _taken(self, name: str) -> bool:
        return any(
            name in table for table in (self.labwares, self.modules, self.pipettes, self.trash)
        )

    def fresh_name(self, name: str | None, default: str) -> str:
        """``name`` if it is free (an error if taken), else ``default``, ``default_2``, ..."""
        if name is not None:
            if self._taken(name):
                raise RobotError(f"the name {name!r} is already taken; choose another")
            return name
        candidate, n = default, 1
        while self._taken(candidate):
            n += 1
            candidate = f"{default}_{n}"
        return candidate

    def add_labware(self, name: str, labware: Labware, parent: str) -> None:
        self.labwares[name] = labware
        self.parent_of[name] = parent

    def add_module(self, name: str, module: Any) -> None:
        self.modules[name] = module
        slot = str(module.parent)
        self.module_slots[name] = [slot, "A1"] if module_kind(module) == "thermocycler" else [slot]

    def name_of(self, labware: Any) -> str:
        for name, known in self.labwares.items():
            if known is labware:
                return name
        return str(labware)

    # --- lookups ----------------------------------------------------------------------

    @staticmethod
    def slot(text: str) -> str | None:
        """``C2`` for ``C2``, ``c2`` or ``slot_C2``; None if ``text`` is not a slot."""
        match = _SLOT.fullmatch(text.strip())
        return match.group(1).upper() if match else None

    def place(self, location: str) -> Place:
        """Where ``location`` says labware should go."""
        if location.strip().lower() in ("off_deck", "offdeck"):
            return Place("off_deck", "off_deck", OFF_DECK)
        if location in self.modules:
            return Place("module", location, self.modules[location])
        if location in self.labwares:
            return Place("labware", location, self.labwares[location])
        slot = self.slot(location)
        if slot is not None:
            return Place("slot", slot, slot)
        known = sorted([*self.modules, *self.labwares])
        raise RobotError(
            f"unknown location {location!r}: give a deck slot (A1-D4), off_deck, or a loaded "
            f"module or labware ({', '.join(known) or 'none loaded'})"
        )

    def _top(self, key: str) -> str | None:
        for name, parent in self.parent_of.items():
            if parent == key:
                return self._top(name) or name
        return None

    def labware(self, ref: str) -> Labware:
        """The labware named ``ref``, or the topmost labware in that slot or module."""
        if ref in self.labwares:
            return self.labwares[ref]
        key: str | None = ref if ref in self.modules else None
        slot = self.slot(ref)
        if key is None and slot is not None:
            key = next((m for m, slots in self.module_slots.items() if slot in slots), slot)
        top = self._top(key) if key is not None else None
        if top is None:
            known = ", ".join(sorted(self.labwares)) or "none loaded"
            raise RobotError(f"no labware named {ref!r} nor any at that place (labware: {known})")
        return self.labwares[top]

    def well(self, labware: Labware, well: str) -> Well:
        found = labware.wells_by_name().get(well.strip().upper())
        if found is None:
            raise RobotError(f"{self.name_of(labware)!r} has no well {well!r}")
        return found

    def pipette(self, ref: str) -> InstrumentContext:
        if ref in self.pipettes:
            return self.pipettes[ref]
        for p in self.pipettes.values():
            if p.mount == ref:
                return p
        known = ", ".join(sorted(self.pipettes)) or "none loaded"
        raise RobotError(f"no pipette named or mounted {ref!r} (pipettes: {known})")

    def module(self, ref: str, kind: str) -> Any:
        module = self.modules.get(ref)
        if module is None:
            known = ", ".join(sorted(self.modules)) or "none loaded"
            raise RobotError(f"no module named {ref!r} (modules: {known})")
        if kind and module_kind(module) != kind:
            raise RobotError(f"module {ref!r} is a {module_kind(module)}, not a {kind}")
        return module

    # --- descriptions -----------------------------------------------------------------

    def labware_info(self, name: str) -> dict[str, Any]:
        lw = self.labwares[name]
        info: dict[str, Any] = {
            "name": name,
            "load_name": lw.load_name,
            "display_name": str(lw),
            "location": self.parent_of[name],
        }
        if lw.is_tiprack:
            info["tips_left"] = sum(1 for w in lw.wells() if w.has_tip)
        return info

    def pipette_info(self, name: str, p: InstrumentContext) -> dict[str, Any]:
        return {
            "name": name,
            "mount": p.mount,
            "instrument_name": p.name,
            "channels": p.channels,
            "max_volume": p.max_volume,
            "has_tip": p.has_tip,
            "current_volume": p.current_volume,
            "tip_racks": [self.name_of(r) for r in p.tip_racks],
        }

    def describe(self) -> dict[str, Any]:
        """The whole deck: what fills each slot, and every labware, module, pipette, bin."""
        slots: dict[str, str] = {}
        for name, module_slots in self.module_slots.items():
            slots.update(dict.fromkeys(module_slots, name))
        slots |= {p: n for n, p in self.parent_of.items() if self.slot(p) == p}
        slots |= {slot: n for n, (_, slot) in self.trash.items()}
        return {
            "robot_type": "Flex",
            "slots": dict(sorted(slots.items())),
            "labware": [self.labware_info(n) for n in self.labwares],
            "modules": [
                {"name": n, "kind": module_kind(m), "location": self.module_slots[n][0]}
                | module_status(self.ctx, m)
                for n, m in self.modules.items()
            ],
            "pipettes": [self.pipette_info(n, p) for n, p in self.pipettes.items()],
            "trash_bins": [{"name": n, "location": s} for n, (_, s) in self.trash.items()],
            "command_count": len(self.ctx.commands()),
        }
