"""The tools of ``plansmith-lab``: names, roles, typed parameters and descriptions.

This module is the single list of tools. The MCP facade builds each tool's input
schema from the stub's signature here, and the robot (``labrobot``) implements a
method of the same name. It imports only the standard library (and
``typing_extensions``), so that a role facade starts without importing ``opentrons``.

Numbers may also be given as numeral strings (``"35"``): plan arguments are
object names, so a binding that passes a plan argument passes text.
Labware, modules and pipettes are referred to by the name given at load time;
labware also by the deck slot it sits in (``C2``, ``c2`` or ``slot_C2``) or by the
module that holds it, and a pipette also by its mount (``left``, ``right``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, NotRequired

from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

__all__ = [
    "ROLES",
    "Number",
    "Count",
    "ProfileStep",
    "DeckModule",
    "DeckLabware",
    "DeckPipette",
    "ToolSpec",
    "TOOLS",
    "tools_for",
]

ROLES = ("movement", "liquid", "modules", "all")
COMMON = "common"

Number = float | str
Count = int | str


class ProfileStep(TypedDict):
    """One step of a thermocycler profile."""

    temperature: Number
    hold_time_seconds: Number


class DeckModule(TypedDict):
    """A module for ``set_up_deck``: its model, deck slot and name."""

    model: str
    location: str
    name: str


class DeckLabware(TypedDict):
    """Labware for ``set_up_deck``: its load name, where it goes and its name; ``adapter``:
    an adapter to load under it (named ``<name>_adapter``)."""

    load_name: str
    location: str
    name: str
    adapter: NotRequired[str]


class DeckPipette(TypedDict):
    """A pipette for ``set_up_deck``: its instrument name, mount, name and tip racks."""

    instrument_name: str
    mount: Literal["left", "right"]
    name: NotRequired[str]
    tip_racks: NotRequired[list[str]]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: its name, role, description and the stub that carries its signature."""

    name: str
    role: str
    description: str
    signature: inspect.Signature


TOOLS: dict[str, ToolSpec] = {}


def _tool(role: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    def register(stub: Callable[..., None]) -> Callable[..., None]:
        doc = inspect.cleandoc(stub.__doc__ or "")
        signature = inspect.signature(stub, eval_str=True)
        TOOLS[stub.__name__] = ToolSpec(stub.__name__, role, doc, signature)
        return stub

    return register


def tools_for(role: str) -> list[ToolSpec]:
    """The tools a server started with ``--role role`` exposes (``all``: every tool)."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}: choose one of {', '.join(ROLES)}")
    return [t for t in TOOLS.values() if role == "all" or t.role in (role, COMMON)]


# --- common to every role -------------------------------------------------------------


@_tool(COMMON)
def get_deck_state() -> None:
    """The deck as the simulator sees it: slots, labware, modules, pipettes, trash bins."""


@_tool(COMMON)
def get_run_log(since: int = 0, limit: int = 1000) -> None:
    """The simulator's run log: its command count and the commands from index ``since``."""


@_tool(COMMON)
def reset_robot() -> None:
    """Start a new protocol on an empty deck (forgets names and idempotency keys)."""


# --- movement: deck set-up, tips, moves --------------------------------------------


@_tool("movement")
def load_labware(
    *,
    load_name: str,
    location: str,
    name: str | None = None,
    adapter: str | None = None,
    namespace: str | None = None,
    version: int | None = None,
    tip_rack_for: list[str] | None = None,
) -> None:
    """Load labware by its Opentrons load name onto a slot, a module, an adapter or off_deck.

    ``name`` is how later calls refer to it (default: the load name). ``adapter``
    loads an adapter under it in one step. ``tip_rack_for`` adds a tip rack to
    those pipettes' tip racks.
    """


@_tool("movement")
def load_adapter(
    *,
    load_name: str,
    location: str,
    name: str | None = None,
    namespace: str | None = None,
    version: int | None = None,
) -> None:
    """Load an adapter (for example ``opentrons_96_well_aluminum_block``) onto a slot or module."""


@_tool("movement")
def load_trash_bin(*, location: str = "A3", name: str = "trash") -> None:
    """Load a trash bin into a deck slot (column 1 or 3); tips are dropped there."""


@_tool("movement")
def load_instrument(
    *,
    instrument_name: str,
    mount: Literal["left", "right"],
    name: str | None = None,
    tip_racks: list[str] | None = None,
) -> None:
    """Load a pipette, for example ``flex_1channel_1000`` or ``flex_8channel_1000``.

    ``name`` defaults to the mount. ``tip_racks`` are used by ``pick_up_tip``
    when it is given no tip rack.
    """


@_tool("movement")
def pick_up_tip(*, pipette: str, tip_rack: str | None = None, well: str | None = None) -> None:
    """Pick up tips: the next ones in ``tip_rack`` (or in the pipette's tip racks), or at ``well``.

    An 8-channel pipette picks up a column of tips.
    """


@_tool("movement")
def drop_tip(*, pipette: str, labware: str | None = None, well: str | None = None) -> None:
    """Drop the tips into the trash bin, or into ``well`` of ``labware`` (to return them)."""


@_tool("movement")
def move_to_well(
    *,
    pipette: str,
    labware: str,
    well: str,
    position: Literal["top", "bottom", "center"] = "top",
    z: Number = 0,
) -> None:
    """Move the pipette to the top, bottom or center of a well, ``z`` mm above that point."""


@_tool("movement")
def move_labware(*, labware: str, location: str, use_gripper: bool = True) -> None:
    """Move labware to a slot, module, adapter or off_deck; with the gripper, or by hand.

    Moving off the deck must be done by hand (``use_gripper: false``).
    """


@_tool("movement")
def load_waste_chute(*, name: str = "waste_chute") -> None:
    """Load the waste chute (it takes slot D3, which must be free); tips are dropped there."""


@_tool("movement")
def return_tip(*, pipette: str) -> None:
    """Put the tips back where they were picked up from (a 96-channel pipette: the whole rack).

    A later ``pick_up_tip`` at that ``well`` takes the same tips again.
    """


@_tool("movement")
def home(*, pipette: str | None = None) -> None:
    """Home the pipette's plunger and its mount (``pipette``), or the whole robot."""


@_tool("movement")
def replace_tip_rack(*, tip_rack: str) -> None:
    """Replace a used tip rack by a full one of the same kind, in the same place.

    The old rack goes off the deck by hand and keeps the name ``<name>_used``;
    the name, and the pipettes' tip racks, now mean the new one.
    """


# --- liquid handling ------------------------------------------------------------------


@_tool("liquid")
def aspirate(*, pipette: str, volume: Number, labware: str, well: str) -> None:
    """Aspirate ``volume`` µL from ``well`` of ``labware``."""


@_tool("liquid")
def dispense(*, pipette: str, labware: str, well: str, volume: Number | None = None) -> None:
    """Dispense ``volume`` µL (default: all the pipette holds) into ``well`` of ``labware``."""


@_tool("liquid")
def mix(*, pipette: str, repetitions: Count, volume: Number, labware: str, well: str) -> None:
    """Mix in ``well`` of ``labware``: aspirate and dispense ``volume`` µL ``repetitions`` times."""


@_tool("liquid")
def blow_out(*, pipette: str, labware: str | None = None, well: str | None = None) -> None:
    """Blow out what is left in the tips: into ``well`` of ``labware``, or where the pipette is."""


@_tool("liquid")
def air_gap(*, pipette: str, volume: Number, height: Number | None = None) -> None:
    """Draw ``volume`` µL of air into the tips, ``height`` mm above the top of the last well."""


@_tool("liquid")
def set_flow_rate(
    *,
    pipette: str,
    aspirate: Number | None = None,
    dispense: Number | None = None,
    blow_out: Number | None = None,
) -> None:
    """Set the pipette's flow rates (µL/s) for aspirate, dispense and blow-out; unset ones stay."""


# --- modules --------------------------------------------------------------------------


@_tool("modules")
def set_up_deck(
    *,
    modules: list[DeckModule] | None = None,
    trash_bins: list[str] | None = None,
    labware: list[DeckLabware] | None = None,
    adapters: list[DeckLabware] | None = None,
    pipettes: list[DeckPipette] | None = None,
) -> None:
    """Set up the deck in one call: load the modules, the adapters (on a slot or a module),
    the trash bins, the labware, then the pipettes.

    For a plan whose first action stands for "the robot is ready" (bio_opentrons'
    ``a_initialize_servers``), or that assumes a deck it never loads (the Omega HDQ
    DNA extraction): the modules, bins, labware and pipettes it assumes.
    Each load is checked as by its own tool; a refused load stops the set-up and
    keeps what was loaded before it.
    """


@_tool("modules")
def load_module(*, model: str, location: str | None = None, name: str | None = None) -> None:
    """Load a module, for example ``thermocyclerModuleV2`` (it sits in A1 and B1),
    ``temperatureModuleV2`` or ``heaterShakerModuleV1``, into a deck slot.

    ``name`` defaults to its kind: ``thermocycler``, ``temperature_module``,
    ``heater_shaker`` or ``magnetic_block``.
    """


@_tool("modules")
def delay(*, minutes: Number = 0, seconds: Number = 0, message: str | None = None) -> None:
    """Wait ``minutes`` and ``seconds`` (the protocol's delay; the simulator does not wait)."""


@_tool("modules")
def thermocycler_open_lid(*, module: str = "thermocycler") -> None:
    """Open the thermocycler lid."""


@_tool("modules")
def thermocycler_close_lid(*, module: str = "thermocycler") -> None:
    """Close the thermocycler lid."""


@_tool("modules")
def thermocycler_set_block_temperature(
    *,
    temperature: Number,
    hold_time_seconds: Number | None = None,
    block_max_volume: Number | None = None,
    module: str = "thermocycler",
) -> None:
    """Set the block temperature (°C) and wait for it, then hold it ``hold_time_seconds``."""


@_tool("modules")
def thermocycler_set_lid_temperature(*, temperature: Number, module: str = "thermocycler") -> None:
    """Heat the lid to ``temperature`` °C and wait for it."""


@_tool("modules")
def thermocycler_run_profile(
    *,
    steps: list[ProfileStep],
    repetitions: Count,
    block_max_volume: Number | None = None,
    module: str = "thermocycler",
) -> None:
    """Run a thermal profile: the steps, in order, ``repetitions`` times (the PCR cycles)."""


@_tool("modules")
def thermocycler_deactivate_lid(*, module: str = "thermocycler") -> None:
    """Turn the lid heater off."""


@_tool("modules")
def thermocycler_deactivate(*, module: str = "thermocycler") -> None:
    """Turn the block and the lid heater off."""


@_tool("modules")
def temperature_module_set_temperature(
    *, temperature: Number, module: str = "temperature_module"
) -> None:
    """Set the temperature module to ``temperature`` °C and wait for it."""


@_tool("modules")
def temperature_module_deactivate(*, module: str = "temperature_module") -> None:
    """Turn the temperature module off."""


@_tool("modules")
def heater_shaker_set_temperature(
    *, temperature: Number, wait: bool = True, module: str = "heater_shaker"
) -> None:
    """Heat the heater-shaker to ``temperature`` °C (and wait for it, unless ``wait`` is false)."""


@_tool("modules")
def heater_shaker_shake(*, rpm: Count, module: str = "heater_shaker") -> None:
    """Shake at ``rpm`` and wait for the speed; the labware latch must be closed."""


@_tool("modules")
def heater_shaker_stop_shaking(*, module: str = "heater_shaker") -> None:
    """Stop shaking."""


@_tool("modules")
def heater_shaker_set_latch(*, closed: bool, module: str = "heater_shaker") -> None:
    """Close (``closed: true``) or open the labware latch; it cannot open while shaking."""


@_tool("modules")
def heater_shaker_deactivate(*, module: str = "heater_shaker") -> None:
    """Stop shaking and turn the heater off."""
