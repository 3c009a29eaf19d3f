"""The simulated Opentrons Flex behind ``plansmith-lab``: one protocol context, named things.

``Robot.answer(tool, args, key)`` runs one tool of ``labtools`` on the Opentrons
protocol simulator and returns ``(True, result JSON)`` or ``(False, message)``;
the message of a refused command is the simulator's own. A call with an
idempotency key that succeeded before returns the first result and does not
act again. Calls are serialised by a lock: the protocol context is not
thread-safe. Set ``OT_API_CONFIG_DIR`` before importing this module: opentrons
reads it at import time and writes its configuration there.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections import OrderedDict
from typing import Any

from labdeck import RobotError, number, whole
from labmodules import ModuleTools
from labsim import open_flex
from opentrons.protocol_api import OFF_DECK, InstrumentContext, Labware
from opentrons.protocol_api.labware import OutOfTipsError
from opentrons.protocols.api_support.definitions import MAX_SUPPORTED_VERSION
from opentrons.types import Point

__all__ = ["Robot", "RobotError", "DEFAULT_API_LEVEL"]

DEFAULT_API_LEVEL = str(MAX_SUPPORTED_VERSION)
# A refused command comes back to the caller with the simulator's message; the
# simulator's own traceback of it would only clutter the client's stderr.
logging.getLogger("opentrons").setLevel(logging.CRITICAL)
_KEYS_KEPT = 100_000


def _refusal(exc: Exception) -> str:
    """The simulator's message, led by the error's name unless it names it already."""
    text = str(exc).strip() or "(no message)"
    name = type(exc).__name__
    return text if name in text else f"{name}: {text}"


class Robot(ModuleTools):
    """One simulated Flex. Each ``tool_<name>`` method is the tool ``<name>``; the module
    tools are in ``labmodules``."""

    def __init__(self, api_level: str | None = None) -> None:
        self.api_level = api_level or DEFAULT_API_LEVEL
        self._lock = threading.Lock()
        self._first: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self._flex = open_flex(self.api_level)
        super().__init__(self._flex.ctx)

    # --- dispatch ---------------------------------------------------------------------

    def answer(self, tool: str, args: dict[str, Any], key: str | None = None) -> tuple[bool, str]:
        """Run ``tool``: ``(True, result JSON)``, or ``(False, why it was refused)``."""
        with self._lock:
            try:
                return True, self._call(tool, args, key)
            except RobotError as exc:
                return False, str(exc)
            except OutOfTipsError as exc:
                return False, f"OutOfTipsError: no tips left {exc}".strip()
            except Exception as exc:  # the simulator refused: pass its message on
                return False, _refusal(exc)

    def _call(self, tool: str, args: dict[str, Any], key: str | None) -> str:
        fingerprint = json.dumps([tool, args], sort_keys=True, default=str)
        if key:
            first = self._first.get(key)
            if first is not None:
                if first[0] != fingerprint:
                    raise RobotError(
                        f"idempotency key {key!r} was first used for another call: "
                        f"{first[0][:200]}; use a new key for a new call"
                    )
                return first[1]
        method = getattr(self, f"tool_{tool}", None)
        if method is None:
            raise RobotError(f"no tool {tool!r}")
        result = method(**args)
        result.setdefault("command_count", len(self.ctx.commands()))
        text = json.dumps(result, separators=(",", ":"), ensure_ascii=False)
        if key:
            self._first[key] = (fingerprint, text)
            if len(self._first) > _KEYS_KEPT:
                self._first.popitem(last=False)
        return text

    # --- common -----------------------------------------------------------------------

    def tool_get_deck_state(self) -> dict[str, Any]:
        state = self.describe()
        state["api_level"] = self.api_level
        return state

    def tool_get_run_log(self, since: int = 0, limit: int = 1000) -> dict[str, Any]:
        if since < 0 or limit < 0:
            raise RobotError("since and limit must not be negative")
        commands = self.ctx.commands()
        return {"count": len(commands), "since": since, "commands": commands[since : since + limit]}

    def tool_reset_robot(self) -> dict[str, Any]:
        old, self._flex = self._flex, open_flex(self.api_level)
        self.reset(self._flex.ctx)
        self._first.clear()
        with contextlib.suppress(Exception):  # a failed cleanup of the old run must not fail it
            old.close()
        return {"reset": True}

    # --- movement ---------------------------------------------------------------------

    def tool_load_labware(
        self,
        *,
        load_name: str,
        location: str,
        name: str | None = None,
        adapter: str | None = None,
        namespace: str | None = None,
        version: int | None = None,
        tip_rack_for: list[str] | None = None,
    ) -> dict[str, Any]:
        name = self.fresh_name(name, load_name)
        pipettes = [self.pipette(p) for p in tip_rack_for or []]
        where = self.place(location)
        opts: dict[str, Any] = {"namespace": namespace, "version": version}
        if where.kind == "labware":
            if adapter is not None:
                raise RobotError("labware on labware takes no adapter")
            labware = where.thing.load_labware(load_name, **opts)
        elif where.kind == "module":
            labware = where.thing.load_labware(load_name, adapter=adapter, **opts)
        else:
            labware = self.ctx.load_labware(load_name, where.thing, adapter=adapter, **opts)
        parent = where.key
        if adapter is not None:
            adapter_name = self.fresh_name(f"{name}_adapter", adapter)
            self.add_labware(adapter_name, labware.parent, where.key)
            parent = adapter_name
        self.add_labware(name, labware, parent)
        if pipettes and not labware.is_tiprack:
            raise RobotError(f"{load_name} was loaded as {name!r}, but it is not a tip rack")
        for p in pipettes:
            p.tip_racks = [*p.tip_racks, labware]
        return self.labware_info(name)

    def tool_load_adapter(
        self,
        *,
        load_name: str,
        location: str,
        name: str | None = None,
        namespace: str | None = None,
        version: int | None = None,
    ) -> dict[str, Any]:
        name = self.fresh_name(name, load_name)
        where = self.place(location)
        opts: dict[str, Any] = {"namespace": namespace, "version": version}
        if where.kind == "module":
            adapter = where.thing.load_adapter(load_name, **opts)
        elif where.kind == "slot":
            adapter = self.ctx.load_adapter(load_name, where.thing, **opts)
        else:
            raise RobotError(f"an adapter goes on a deck slot or a module, not on {location!r}")
        self.add_labware(name, adapter, where.key)
        return self.labware_info(name)

    def tool_load_trash_bin(self, location: str = "A3", name: str = "trash") -> dict[str, Any]:
        slot = self.slot(location)
        if slot is None:
            raise RobotError(f"a trash bin goes into a deck slot, not {location!r}")
        name = self.fresh_name(name, "trash")
        self.trash[name] = (self.ctx.load_trash_bin(slot), slot)
        return {"name": name, "location": slot}

    def tool_load_waste_chute(self, name: str = "waste_chute") -> dict[str, Any]:
        name = self.fresh_name(name, "waste_chute")
        self.trash[name] = (self.ctx.load_waste_chute(), "D3")
        return {"name": name, "location": "D3"}

    def tool_load_instrument(
        self,
        instrument_name: str,
        mount: str,
        name: str | None = None,
        tip_racks: list[str] | None = None,
    ) -> dict[str, Any]:
        name = self.fresh_name(name, mount)
        racks = [self.labware(r) for r in tip_racks or []]
        pipette = self.ctx.load_instrument(instrument_name, mount, tip_racks=racks)
        self.pipettes[name] = pipette
        return self.pipette_info(name, pipette)

    def tool_pick_up_tip(
        self, pipette: str, tip_rack: str | None = None, well: str | None = None
    ) -> dict[str, Any]:
        p = self.pipette(pipette)
        if well is not None:
            if tip_rack is None:
                raise RobotError("give the tip_rack that holds the well")
            p.pick_up_tip(self.well(self.labware(tip_rack), well))
        elif tip_rack is not None:
            rack = self.labware(tip_rack)
            try:
                p.pick_up_tip(rack)
            except OutOfTipsError as exc:
                raise RobotError(
                    f"OutOfTipsError: tip rack {self.name_of(rack)!r} has no "
                    f"{p.active_channels} tip(s) left for pipette {pipette!r}"
                ) from exc
        else:
            try:
                p.pick_up_tip()
            except OutOfTipsError as exc:
                racks = [self.name_of(r) for r in p.tip_racks]
                raise RobotError(
                    f"OutOfTipsError: no tips left in the tip racks {racks} of pipette {pipette!r}"
                ) from exc
        return {"pipette": pipette, **self._tip_source(p)}

    def _tip_source(self, p: InstrumentContext) -> dict[str, Any]:
        try:
            source = p.current_tip_source_well()
        except Exception:  # older API levels do not report the tip's source
            return {}
        if source is None:
            return {}
        return {"tip_rack": self.name_of(source.parent), "well": source.well_name}

    def tool_drop_tip(
        self, pipette: str, labware: str | None = None, well: str | None = None
    ) -> dict[str, Any]:
        p = self.pipette(pipette)
        if labware is None:
            p.drop_tip()
            return {"pipette": pipette, "location": "trash"}
        target = self.well(self.labware(labware), well or "A1")
        p.drop_tip(target)
        return {"pipette": pipette, "location": f"{well or 'A1'} of {self.name_of(target.parent)}"}

    def tool_return_tip(self, pipette: str) -> dict[str, Any]:
        p = self.pipette(pipette)
        source = self._tip_source(p)  # read before: the pipette forgets it once the tips are back
        if not p.has_tip:
            raise RobotError(f"pipette {pipette!r} has no tips to return")
        p.return_tip()
        return {"pipette": pipette, **source}

    def tool_home(self, pipette: str | None = None) -> dict[str, Any]:
        if pipette is None:
            self.ctx.home()
            return {"homed": "robot"}
        self.pipette(pipette).home()
        return {"homed": pipette}

    def tool_move_to_well(
        self, pipette: str, labware: str, well: str, position: str = "top", z: Any = 0
    ) -> dict[str, Any]:
        p = self.pipette(pipette)
        w = self.well(self.labware(labware), well)
        height = number(z, "z")
        if position == "top":
            p.move_to(w.top(height))
        elif position == "bottom":
            p.move_to(w.bottom(height))
        else:
            p.move_to(w.center().move(Point(0, 0, height)))
        return {"pipette": pipette, "labware": self.name_of(w.parent), "well": w.well_name}

    def tool_move_labware(
        self, labware: str, location: str, use_gripper: bool = True
    ) -> dict[str, Any]:
        lw = self.labware(labware)
        name = self.name_of(lw)
        where = self.place(location)
        if where.key == name:
            raise RobotError("labware cannot be moved onto itself")
        before = self.parent_of[name]
        self.ctx.move_labware(lw, where.thing, use_gripper=use_gripper)
        self.parent_of[name] = where.key
        return {"labware": name, "from": before, "to": where.key, "gripper": use_gripper}

    def tool_set_up_deck(
        self,
        modules: list[dict[str, Any]] | None = None,
        trash_bins: list[str] | None = None,
        labware: list[dict[str, Any]] | None = None,
        adapters: list[dict[str, Any]] | None = None,
        pipettes: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        loaded = [self.tool_load_module(**module)["name"] for module in modules or []]
        loaded += [self.tool_load_adapter(**item)["name"] for item in adapters or []]
        loaded += [self.tool_load_trash_bin(slot)["name"] for slot in trash_bins or []]
        loaded += [self.tool_load_labware(**item)["name"] for item in labware or []]
        loaded += [self.tool_load_instrument(**item)["name"] for item in pipettes or []]
        return {"loaded": loaded}

    def tool_replace_tip_rack(self, tip_rack: str) -> dict[str, Any]:
        old = self.labware(tip_rack)
        name = self.name_of(old)
        if not old.is_tiprack:
            raise RobotError(f"{name!r} is not a tip rack")
        where = self.place(self.parent_of[name])
        if where.kind not in ("slot", "labware"):
            raise RobotError(f"tip rack {name!r} is not on the deck")
        namespace, load_name, version = old.uri.split("/")
        opts: dict[str, Any] = {"namespace": namespace, "version": int(version)}
        self.ctx.move_labware(old, OFF_DECK, use_gripper=False)  # a person takes it away
        if where.kind == "slot":
            new = self.ctx.load_labware(load_name, where.thing, **opts)
        else:
            new = where.thing.load_labware(load_name, **opts)
        retired = self.fresh_name(f"{name}_used", name)
        self.add_labware(retired, old, "off_deck")
        self.add_labware(name, new, where.key)
        for p in self.pipettes.values():
            if any(r is old for r in p.tip_racks):
                p.tip_racks = [new if r is old else r for r in p.tip_racks]
        return {**self.labware_info(name), "replaced": retired}

    # --- liquid -----------------------------------------------------------------------

    def _liquid(self, p: InstrumentContext, labware: Labware, well: str) -> dict[str, Any]:
        return {
            "labware": self.name_of(labware),
            "well": well.upper(),
            "current_volume": p.current_volume,
        }

    def tool_aspirate(self, pipette: str, volume: Any, labware: str, well: str) -> dict[str, Any]:
        p, lw = self.pipette(pipette), self.labware(labware)
        p.aspirate(number(volume, "volume"), self.well(lw, well))
        return {"pipette": pipette, "volume": number(volume, "volume"), **self._liquid(p, lw, well)}

    def tool_dispense(
        self, pipette: str, labware: str, well: str, volume: Any = None
    ) -> dict[str, Any]:
        p, lw = self.pipette(pipette), self.labware(labware)
        amount = p.current_volume if volume is None else number(volume, "volume")
        p.dispense(amount, self.well(lw, well))
        return {"pipette": pipette, "volume": amount, **self._liquid(p, lw, well)}

    def tool_mix(
        self, pipette: str, repetitions: Any, volume: Any, labware: str, well: str
    ) -> dict[str, Any]:
        p, lw = self.pipette(pipette), self.labware(labware)
        times, amount = whole(repetitions, "repetitions"), number(volume, "volume")
        p.mix(times, amount, self.well(lw, well))
        return {
            "pipette": pipette,
            "repetitions": times,
            "volume": amount,
            **self._liquid(p, lw, well),
        }

    def tool_air_gap(self, pipette: str, volume: Any, height: Any = None) -> dict[str, Any]:
        p = self.pipette(pipette)
        amount = number(volume, "volume")
        if height is None:
            p.air_gap(amount)
        else:
            p.air_gap(amount, height=number(height, "height"))
        return {"pipette": pipette, "volume": amount, "current_volume": p.current_volume}

    def tool_set_flow_rate(
        self, pipette: str, aspirate: Any = None, dispense: Any = None, blow_out: Any = None
    ) -> dict[str, Any]:
        p = self.pipette(pipette)
        rates = {"aspirate": aspirate, "dispense": dispense, "blow_out": blow_out}
        if all(v is None for v in rates.values()):
            raise RobotError("give at least one of aspirate, dispense and blow_out")
        for what, value in rates.items():
            if value is not None:
                rate = number(value, what)
                if rate <= 0:
                    raise RobotError(f"the {what} flow rate must be above 0, not {value!r}")
                setattr(p.flow_rate, what, rate)
        flow = p.flow_rate
        return {
            "pipette": pipette,
            "aspirate": flow.aspirate,
            "dispense": flow.dispense,
            "blow_out": flow.blow_out,
        }

    def tool_blow_out(
        self, pipette: str, labware: str | None = None, well: str | None = None
    ) -> dict[str, Any]:
        p = self.pipette(pipette)
        if labware is None:
            p.blow_out()
            return {"pipette": pipette, "location": "current"}
        lw = self.labware(labware)
        p.blow_out(self.well(lw, well or "A1"))
        return {"pipette": pipette, **self._liquid(p, lw, well or "A1")}
