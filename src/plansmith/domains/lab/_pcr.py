"""PCR problems for the ``flex-pcr`` domain: a deck layout, the units to fill, the cycles.

``problem_for(samples, channels, cycles)`` writes the problem YAML. A 1-channel
pipette fills one well per stroke; an 8-channel pipette fills a column, so
96 samples take 12 strokes instead of 96. Wells are taken column by column
(A1, B1, ..., H1, A2, ...), as Opentrons orders them, so that the samples of
a partly filled last column sit at its top. Standard library only.
"""

from __future__ import annotations

from itertools import pairwise

__all__ = ["problem_for", "units_for", "BATCH", "CHANNELS", "PIPETTES"]

ROWS = "ABCDEFGH"
COLUMNS = 12
BATCH = 8  # units dosed per aspirate of master mix: 8 x 20 µL fits a 200 µL tip
PIPETTES = {1: "flex_1channel_1000", 8: "flex_8channel_1000"}
CHANNELS = tuple(PIPETTES)

# name: (type, model, where it goes), in loading order. Slots are objects named
# slot_<slot>: the server reads the prefix, and a well may be named C1 too.
_LAYOUT: tuple[tuple[str, str, str | None, str], ...] = (
    ("thermocycler", "thermocycler", "thermocyclerModuleV2", "slot_B1"),
    ("pcr_plate", "plate", "opentrons_96_wellplate_200ul_pcr_full_skirt", "thermocycler"),
    ("temperature_module", "tempmodule", "temperatureModuleV2", "slot_D1"),
    ("cold_block", "adapter", "opentrons_96_well_aluminum_block", "temperature_module"),
    ("sample_plate", "plate", "nest_96_wellplate_100ul_pcr_full_skirt", "cold_block"),
    ("reservoir", "reservoir", "nest_12_reservoir_15ml", "slot_C1"),
    ("mastermix_tips", "tiprack", "opentrons_flex_96_tiprack_200ul", "slot_C2"),
    ("sample_tips", "tiprack", "opentrons_flex_96_tiprack_50ul", "slot_C3"),
    ("trash", "trash", None, "slot_A3"),
)
_ROLES = (
    "tips_for(mastermix_tips, reservoir)",
    "tips_for(sample_tips, sample_plate)",
    "cools(temperature_module, sample_plate)",
    "destination(pcr_plate)",
    "sample_source(sample_plate)",
    "mastermix_source(reservoir)",
    "disposal(trash)",
    "lid_closed(thermocycler)",
    "covered(pcr_plate)",
)


def units_for(samples: int, channels: int) -> list[str]:
    """The units a run fills: wells (1 channel) or columns by their top well (8 channels)."""
    if not 1 <= samples <= len(ROWS) * COLUMNS:
        raise ValueError(f"samples must be 1 to {len(ROWS) * COLUMNS}, not {samples}")
    if channels not in PIPETTES:
        raise ValueError(f"channels must be 1 or 8, not {channels}")
    if channels == 8:
        return [f"A{c}" for c in range(1, -(-samples // len(ROWS)) + 1)]
    wells = [f"{row}{col}" for col in range(1, COLUMNS + 1) for row in ROWS]
    return wells[:samples]


def problem_for(samples: int, channels: int = 8, cycles: int = 30) -> str:
    """The ``flex-pcr`` problem YAML for ``samples`` samples, a 1- or 8-channel pipette."""
    units = units_for(samples, channels)
    if not 1 <= cycles <= 99:
        raise ValueError(f"cycles must be 1 to 99, not {cycles}")
    objects: dict[str, str] = {"p1000": "pipette", PIPETTES[channels]: "model", "left": "mount"}
    init: list[str] = [f"model_of(p1000, {PIPETTES[channels]})", "mounted_on(p1000, left)"]
    for name, kind, model, place in _LAYOUT:
        objects[name] = kind
        if model is not None:
            objects[model] = "model"
            init.append(f"model_of({name}, {model})")
        if place.startswith("slot_"):
            objects[place] = "slot"
            init.append(f"ready({place})")
        init.append(f"goes_on({name}, {place})")
    init.extend(_ROLES)
    objects.update(dict.fromkeys(units, "unit"))
    objects[str(cycles)] = "count"
    init.extend(f"next({a}, {b})" for a, b in pairwise(units))
    init.append(f"last({units[-1]})")
    init.extend(f"batch_end({u})" for u in units[BATCH - 1 : -1 : BATCH])
    lines = [
        "# Written by plansmith.domains.lab.problem_for: "
        f"{samples} samples, {channels}-channel pipette, {cycles} cycles.",
        f"problem: pcr-{samples}-samples-{channels}-channel-{cycles}-cycles",
        "domain: flex-pcr",
        "objects:",
        *(f"  {_quoted(name)}: {kind}" for name, kind in objects.items()),
        "init:",
        *(f"  - {fact}" for fact in init),
        "tasks:",
        f"  - prepare_pcr(p1000, {units[0]}, {cycles})",
        "",
    ]
    return "\n".join(lines)


def _quoted(name: str) -> str:
    """YAML would read a numeral key as a number: quote it."""
    return f'"{name}"' if name.isdigit() else name
