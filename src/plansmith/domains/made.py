"""Domains made by code: GTPyhop's Python domains that plansmith ships ready to run, in
the one catalog that ``plansmith mcp``, ``plansmith serve`` and ``plansmith domains``
show beside the domain folders.

* ``bio-opentrons``: GTPyhop's ``bio_opentrons`` PCR workflow (6 scenarios, 4 to 96
  samples) mapped to a Flex and run on the Opentrons simulator;
* ``dna-extraction``: GTPyhop's Omega HDQ DNA extraction (3 scenarios) on a Flex with the
  96-channel pipette, on the simulator;
* ``drug-target``: GTPyhop's drug target discovery (3 diseases, or another by name)
  over the eight biomedical servers plansmith ships.

A request chooses a problem (a scenario) by its inputs (``{"scenario": "scenario_2"}``)
or by naming it or what sets it apart ("PCR of 8 samples", "targets for Alzheimer's");
``choose`` says, per problem, why a request that names none or several is not planned.
A run is made by the domain's run maker (``plansmith.engine.RunMaker``), whose name and
arguments the run records, so that approving and resuming it make it again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from plansmith.binding import Bindings
from plansmith.domains._readiness import Readiness, lab_python_missing
from plansmith.errors import InputError, Location
from plansmith.model import JSONValue, Plan

__all__ = [
    "MadeDomain",
    "MadeInput",
    "MadeProblem",
    "ProblemChoice",
    "shipped_made_domains",
]


@dataclass(frozen=True, slots=True)
class MadeProblem:
    """A problem (scenario) by name; ``keys``: phrases of a request that name it."""

    name: str
    description: str
    keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MadeInput:
    """An argument a request may give besides the scenario: ``choices`` (none: any
    text) and its ``default`` (None: not given)."""

    name: str
    description: str
    choices: tuple[str, ...] = ()
    default: str | None = None


@dataclass(frozen=True, slots=True)
class ProblemChoice:
    """``choose``'s answer: the problem, or None with a reason per problem."""

    problem: str | None
    reasons: tuple[str, ...] = ()
    reason: str = ""


def _words(text: str) -> str:
    return " " + " ".join(re.findall(r"[a-z0-9]+", text.lower().replace("'", ""))) + " "


@dataclass(frozen=True)
class MadeDomain:
    """A domain made by code (see the module docstring)."""

    name: str
    description: str
    maker: str
    problems: tuple[MadeProblem, ...]
    servers: tuple[str, ...]
    #: the plan a run of these arguments runs, and its bindings (to show it)
    plan_of: Callable[[Mapping[str, JSONValue]], tuple[Plan, Bindings]] = field(repr=False)
    ready: Callable[[], Readiness | None] = field(repr=False)
    inputs: tuple[MadeInput, ...] = ()

    @property
    def readiness(self) -> Readiness:
        """Whether it runs here now (the simulator's venv may have been built since)."""
        return self.ready() or Readiness(True)

    def problem(self, name: str) -> MadeProblem:
        found = next((p for p in self.problems if p.name == name), None)
        if found is None:
            raise InputError(
                f"{self.name} has no scenario {name!r}",
                location=Location(argument="inputs.scenario"),
                hint=f"one of: {', '.join(p.name for p in self.problems)}",
            )
        return found

    def choose(self, request: str | None) -> ProblemChoice:
        """The problem a request names: by name ("scenario_2", "scenario 2") or by a
        phrase that sets it apart; with none or several, a reason per problem."""
        text = _words(request or "")
        named = [
            p
            for p in self.problems
            if any(_words(k) in text for k in (p.name, p.name.replace("_", " "), *p.keys))
        ]
        if len(named) == 1:
            return ProblemChoice(named[0].name)
        if named:
            why = f"the request names {len(named)} scenarios"
            reasons = tuple(
                f"{p.name}: {p.description} -- one of those the request names" for p in named
            )
        else:
            why = (
                f"no scenario of {self.name} matches {request!r}"
                if request
                else f"{self.name} needs a scenario"
            )
            reasons = tuple(
                f"{p.name}: {p.description} -- not named: pass inputs "
                f'{{"scenario": "{p.name}"}} or name it in the request'
                for p in self.problems
            )
        return ProblemChoice(None, reasons, why)

    def args(self, scenario: str, values: Mapping[str, str]) -> dict[str, JSONValue]:
        """The run maker's arguments: the scenario and the inputs given (each checked:
        an unknown input or a value not among its choices is an ``InputError``)."""
        self.problem(scenario)
        known = {i.name: i for i in self.inputs}
        args: dict[str, JSONValue] = {"scenario": scenario}
        for name, value in values.items():
            if name == "scenario":
                continue
            spec = known.get(name)
            if spec is None:
                raise InputError(
                    f"{self.name} takes no input {name!r}",
                    location=Location(argument=f"inputs.{name}"),
                    hint=f"its inputs: scenario, {', '.join(known) or '(none else)'}",
                )
            if spec.choices and value not in spec.choices:
                raise InputError(
                    f"input {name} {value!r}: not one of {', '.join(spec.choices)}",
                    location=Location(argument=f"inputs.{name}"),
                    hint=spec.description,
                )
            if not value.strip():
                raise InputError(
                    f"input {name} is empty",
                    location=Location(argument=f"inputs.{name}"),
                    hint=spec.description,
                )
            args[name] = value
        return args


def _bio_plan(args: Mapping[str, JSONValue]) -> tuple[Plan, Bindings]:
    from plansmith.domains.lab.sim import bio_opentrons_plan  # noqa: PLC0415 - on use

    plan, _, bindings = bio_opentrons_plan(args)
    return plan, bindings


def _omega_plan(args: Mapping[str, JSONValue]) -> tuple[Plan, Bindings]:
    from plansmith.domains.lab.sim import dna_extraction_plan  # noqa: PLC0415 - on use

    plan, _, bindings = dna_extraction_plan(args)
    return plan, bindings


def _drug_plan(args: Mapping[str, JSONValue]) -> tuple[Plan, Bindings]:
    from plansmith.domains.drugtarget.pipeline import drug_target_plan  # noqa: PLC0415

    plan, _, bindings = drug_target_plan(args)
    return plan, bindings


_LAB_ROLES = ("movement", "liquid", "modules")

_BIO_SIZES = ((4, 25), (8, 30), (16, 35), (32, 25), (48, 30), (96, 35))


def shipped_made_domains() -> dict[str, MadeDomain]:
    """The domains made by code that plansmith ships, by name."""
    bio = MadeDomain(
        name="bio-opentrons",
        description="GTPyhop's bio_opentrons PCR workflow on a Flex, on the Opentrons"
        " simulator (a replan replaces an empty tip rack)",
        maker="bio-opentrons",
        problems=tuple(
            MadeProblem(
                f"scenario_{n}",
                f"PCR of {samples} samples, {cycles} cycles",
                (f"{samples} samples",),
            )
            for n, (samples, cycles) in enumerate(_BIO_SIZES, start=1)
        ),
        servers=_LAB_ROLES,
        plan_of=_bio_plan,
        ready=lab_python_missing,
        inputs=(
            MadeInput(
                "tip_racks",
                "racks of 1000 µl tips on the deck: 1 (they run out: a replan replaces the"
                " rack) or 2",
                ("1", "2"),
                "2",
            ),
        ),
    )
    omega = MadeDomain(
        name="dna-extraction",
        description="GTPyhop's Omega HDQ DNA extraction (bacteria) on a Flex with the"
        " 96-channel pipette, on the Opentrons simulator",
        maker="dna-extraction",
        problems=(
            MadeProblem("scenario_1_standard", "the standard protocol", ("standard",)),
            MadeProblem("scenario_2_dry_run", "a dry run (no incubation waits)", ("dry run",)),
            MadeProblem(
                "scenario_3_manual_mixing",
                "mixing by pipetting, without the heater-shaker",
                ("manual mixing", "manual", "without the heater shaker"),
            ),
        ),
        servers=_LAB_ROLES,
        plan_of=_omega_plan,
        ready=lab_python_missing,
    )
    drug = MadeDomain(
        name="drug-target",
        description="GTPyhop's drug target discovery over eight biomedical servers (Open"
        " Targets, UniProt, Reactome, KEGG, PDB, AlphaFold, ChEMBL, PubMed)",
        maker="drug-target",
        problems=(
            MadeProblem("scenario_1_breast_cancer", "targets for breast cancer", ("breast",)),
            MadeProblem(
                "scenario_2_alzheimers", "targets for Alzheimer's", ("alzheimer", "alzheimers")
            ),
            MadeProblem("scenario_3_diabetes", "targets for type 2 diabetes", ("diabetes",)),
        ),
        servers=(
            "opentargets",
            "uniprot",
            "reactome",
            "kegg",
            "pdb",
            "alphafold",
            "chembl",
            "pubmed",
        ),
        plan_of=_drug_plan,
        ready=lambda: None,
        inputs=(
            MadeInput(
                "disease",
                "another disease than the scenario's, by name (the plan searches it; one"
                " not found gives 'No targets found')",
            ),
        ),
    )
    return {d.name: d for d in (bio, omega, drug)}
