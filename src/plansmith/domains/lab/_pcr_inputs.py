"""The PCR domain's request inputs: ``samples``, ``channels`` and ``cycles``, values a
request states ("PCR of 24 samples with the 8-channel pipette, 25 cycles") or passes
(``inputs={"samples": "24"}``). They make the whole problem (``problem_for``): the deck,
the units to fill and the task ``prepare_pcr``, which the face plans with no goal to
match (the domain is HTN: its job is a task, not a goal). Standard library only."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

from plansmith.domains.lab._pcr import CHANNELS, COLUMNS, ROWS, problem_for
from plansmith.domains.requests import InputSpec, PreparedRequest
from plansmith.errors import InputError, Location

__all__ = ["PCR_INPUTS", "PcrInputs"]

_MAX_SAMPLES = len(ROWS) * COLUMNS
_DEFAULTS = {"channels": "8", "cycles": "30"}
_WORDS = {"single": "1", "one": "1", "eight": "8", "multi": "8"}
_SAMPLES = re.compile(r"\b(\d+)\s+(?:samples?|wells?)\b", re.IGNORECASE)
_CHANNELS = re.compile(r"\b(\d+|single|one|eight|multi)[- ]?channels?\b", re.IGNORECASE)
_CYCLES = re.compile(r"\b(\d+)\s+(?:(?:pcr|thermal)\s+)?cycles?\b", re.IGNORECASE)


def _whole(name: str, value: str, low: int, high: int) -> int:
    text = str(value).strip()
    if not text.isdigit() or not low <= int(text) <= high:
        raise InputError(
            f"input {name}: {value!r} is not a whole number from {low} to {high}",
            location=Location(argument=f"inputs.{name}"),
            hint=f'e.g. inputs={{"{name}": "{low if name != "cycles" else 30}"}}',
        )
    return int(text)


class PcrInputs:
    """How many samples, which pipette, how many cycles: the PCR run a request asks for."""

    makes_servers: bool = False
    inputs: tuple[InputSpec, ...] = (
        InputSpec(
            "samples",
            f"how many samples to prepare, 1 to {_MAX_SAMPLES} (one well each)",
            ("number",),
            ("prepare_pcr",),
            "count",
            "value",
        ),
        InputSpec(
            "channels",
            "the pipette: 1 or 8 channels (default 8: a column per stroke)",
            ("number",),
            (),
            "count",
            "value",
        ),
        InputSpec("cycles", "PCR cycles, 1 to 99 (default 30)", ("number",), (), "count", "value"),
    )

    def assign(self, paths: Sequence[Path]) -> dict[str, Path]:
        if paths:
            raise InputError(
                f"the PCR domain takes no files ({paths[0].name})",
                hint="say how many samples, e.g. 'PCR of 24 samples, 8-channel, 30 cycles'",
            )
        return {}

    def values_in_text(self, text: str) -> dict[str, str]:
        found: dict[str, str] = {}
        for name, pattern in (("samples", _SAMPLES), ("channels", _CHANNELS), ("cycles", _CYCLES)):
            hits = {m.group(1).lower() for m in pattern.finditer(text)}
            if len(hits) > 1:
                raise InputError(
                    f"the request states {name} twice: {', '.join(sorted(hits))}",
                    hint=f"state {name} once",
                )
            if hits:
                word = hits.pop()
                found[name] = _WORDS.get(word, word)
        return found

    def needed(self, goal: Sequence[str]) -> tuple[str, ...]:
        return ("samples",)  # the job is the task: samples are always needed

    def prepare(
        self, given: Mapping[str, Path], workdir: Path, values: Mapping[str, str]
    ) -> PreparedRequest:
        if given:
            raise InputError(
                f"the PCR domain takes no files (input {sorted(given)[0]!r})",
                hint="its inputs are values: samples, channels, cycles",
            )
        unknown = sorted(set(values) - {i.name for i in self.inputs})
        if unknown:
            raise InputError(
                f"the PCR domain has no input {unknown[0]!r}",
                location=Location(argument=f"inputs.{unknown[0]}"),
                hint="its inputs: samples, channels, cycles",
            )
        if "samples" not in values:
            raise InputError(
                "the pcr domain needs input(s) for this job: samples: "
                + self.inputs[0].description,
                hint='say how many, e.g. "PCR of 24 samples", or pass inputs={"samples": "24"}',
            )
        chosen = {**_DEFAULTS, **values}
        samples = _whole("samples", chosen["samples"], 1, _MAX_SAMPLES)
        channels = _whole("channels", chosen["channels"], 1, 8)
        if channels not in CHANNELS:
            raise InputError(
                f"input channels: {channels} is not a pipette here (1 or 8 channels)",
                location=Location(argument="inputs.channels"),
                hint='give "1" or "8"',
            )
        cycles = _whole("cycles", chosen["cycles"], 1, 99)
        problem = yaml.safe_load(problem_for(samples, channels, cycles))
        objects = {str(k): str(v) for k, v in problem["objects"].items()}
        settled = {"samples": str(samples), "channels": str(channels), "cycles": str(cycles)}
        return PreparedRequest(
            objects,
            tuple(str(f) for f in problem["init"]),
            None,  # the folder's servers.json: the lab's three roles over one robot
            settled,
            tuple(str(t) for t in problem["tasks"]),
        )


PCR_INPUTS = PcrInputs()
