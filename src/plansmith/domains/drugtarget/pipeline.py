"""GTPyhop's drug target discovery, planned by plansmith and run over the eight servers.

The domain is ``gtpyhop.examples.mcp-orchestration.drug_target_discovery`` (gtpyhop
2.0.2), loaded unchanged and planned by plansmith's GTPyhop compatibility layer. GTPyhop's
domain declares ``a_get_kegg_pathway`` but no method plans it, and its compound step
finds ChEMBL targets, not compounds; plansmith extends the loaded domain with two
actions and two methods (``_extension``) that put KEGG and the target's compounds in the
plan: 11 steps for each of its three scenarios, over all eight servers
(``as_published=True``: the domain as published, 8 steps over seven servers). Later
steps take GTPyhop's ``${context.X}`` placeholders.
``bindings.yaml`` binds every action to the tool its docstring names, and declares the
outputs the placeholders read. ``run_drug_target`` runs a scenario through
``Engine.run_plan`` (the run log, leases, retries and restarts of every run) and makes
its findings (``_findings``) from the run's own report.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from plansmith.binding import Bindings, load_bindings
from plansmith.domains.drugtarget._findings import Findings, findings_of, write_findings
from plansmith.engine import Engine, MadeRun, MakeContext, build_report
from plansmith.errors import InputError, Location
from plansmith.execution import Event
from plansmith.model import Domain, JSONValue, Plan
from plansmith.servers import ServersConfig, load_servers

__all__ = [
    "DT_BINDINGS",
    "DT_SERVERS",
    "DT_PUBLIC_SERVERS",
    "DT_SCENARIOS",
    "SOURCES",
    "DrugTargetRun",
    "drug_target_folder",
    "make_drug_target_run",
    "drug_target_plan",
    "drug_target_bindings",
    "plan_drug_target",
    "run_drug_target",
    "servers_config",
]

_HERE = Path(__file__).resolve().parent
DT_BINDINGS = _HERE / "bindings.yaml"
DT_SERVERS = _HERE / "servers.json"
DT_PUBLIC_SERVERS = _HERE / "servers-public.json"
DT_SCENARIOS = ("scenario_1_breast_cancer", "scenario_2_alzheimers", "scenario_3_diabetes")
SOURCES = ("opentargets", "uniprot", "reactome", "kegg", "pdb", "alphafold", "chembl", "pubmed")
_EXAMPLE = "drug_target_discovery"

Subscriber = Callable[[Event], None]


@dataclass(slots=True)
class DrugTargetRun:
    """A finished run: its id, plan, state, findings, where its report is, and timings."""

    run_id: str
    plan: Plan
    state: str
    findings: Findings
    report_dir: Path
    seconds: float
    step_ms: dict[str, float] = field(default_factory=dict)
    failed_steps: int = 0
    retries: int = 0

    def structure(self) -> tuple[tuple[str, str, str, tuple[str, ...]], ...]:
        """The run's step structure: each step's action, server, tool and what it waited
        for, in plan order (the same for every run of one scenario)."""
        servers = dict(self.findings.calls)
        return tuple(
            (s.action, *servers.get(s.id, ("", "")), tuple(sorted(s.after)))
            for s in self.plan.steps
        )


def drug_target_folder() -> Path:
    """The ``drug_target_discovery`` folder of the installed gtpyhop package."""
    from plansmith.compat import mcp_orchestration_example  # noqa: PLC0415

    return mcp_orchestration_example(_EXAMPLE)


def plan_drug_target(
    scenario: str, disease: str | None = None, *, as_published: bool = False
) -> tuple[Plan, Domain]:
    """The plan of a scenario (``DT_SCENARIOS``), and the domain's actions to bind it
    with (``plansmith.formats.action_domain``). ``disease``: another disease than the
    scenario's, planned with its state (the domain's task takes the disease's name).

    The domain is GTPyhop's, extended by plansmith with the KEGG and compound actions and
    methods of ``_extension`` (11 steps, eight servers); ``as_published``: GTPyhop's
    domain as it is (8 steps, no KEGG step)."""
    from plansmith.compat import gtpyhop  # noqa: PLC0415 - keeps this module light
    from plansmith.formats import action_domain, load_gtpyhop_package  # noqa: PLC0415
    from plansmith.planning.htn import plan_python  # noqa: PLC0415

    if scenario not in DT_SCENARIOS:
        raise InputError(
            f"no drug target scenario {scenario!r}", hint=f"one of: {', '.join(DT_SCENARIOS)}"
        )
    domain, problem = load_gtpyhop_package(drug_target_folder(), scenario, stand_in=gtpyhop)
    if not as_published:
        from plansmith.domains.drugtarget._extension import extended_domain  # noqa: PLC0415

        domain = extended_domain(domain)
    if disease is not None:
        if not disease.strip():
            raise InputError("the disease is empty", hint="name a disease: 'breast cancer'")
        state = copy.deepcopy(problem.state)
        state.target_disease = disease
        todo = (("m_drug_target_discovery", disease),)
        problem = replace(problem, name=f"{scenario}/{disease}", state=state, todo=todo)
    return plan_python(domain, problem), action_domain(domain)


def drug_target_bindings(domain: Domain) -> Bindings:
    """``bindings.yaml``, without the bindings of actions ``domain`` lacks (plansmith's
    KEGG action, when the domain is planned as published)."""
    shipped = load_bindings(DT_BINDINGS)
    kept = tuple(b for b in shipped.bindings if domain.action(b.action) is not None)
    return replace(shipped, bindings=kept)


def servers_config(path: Path = DT_SERVERS) -> ServersConfig:
    """The servers file; ``servers.json`` names ``plansmith-drugtarget``, which is found
    beside this Python when its venv is not on PATH."""
    return load_servers(path)


def drug_target_plan(args: Mapping[str, JSONValue]) -> tuple[Plan, Domain, Bindings]:
    """``plan_drug_target`` of JSON arguments: ``scenario`` (one of ``DT_SCENARIOS``,
    default the first), optionally ``disease`` (another disease, by name) and
    ``as_published`` (a boolean); with its bindings. A bad argument is an ``InputError``
    naming it."""
    scenario, disease = args.get("scenario", DT_SCENARIOS[0]), args.get("disease")
    published = args.get("as_published", False)
    if not isinstance(scenario, str):
        raise InputError(
            f"scenario {scenario!r} is not a name", location=Location(argument="scenario")
        )
    if disease is not None and not isinstance(disease, str):
        raise InputError(
            f"disease {disease!r} is not a name", location=Location(argument="disease")
        )
    if not isinstance(published, bool):
        raise InputError(
            f"as_published {published!r} is not true or false",
            location=Location(argument="as_published"),
        )
    plan, domain = plan_drug_target(scenario, disease, as_published=published)
    return plan, domain, drug_target_bindings(domain)


def make_drug_target_run(args: Mapping[str, JSONValue], context: MakeContext) -> MadeRun:
    """The run maker (``plansmith.engine.RunMaker``) ``drug-target``: the run of
    ``drug_target_plan(args)`` over the servers of ``servers.json``; what
    ``run_drug_target`` runs, made so that a face's run table makes, approves and
    resumes it. ``context`` is not needed: the servers keep nothing per run."""
    del context
    plan, domain, bindings = drug_target_plan(args)
    return MadeRun(plan, domain, bindings, servers_config())


async def run_drug_target(
    scenario: str,
    *,
    home: Path,
    engine: Engine | None = None,
    servers: ServersConfig | None = None,
    bindings: Bindings | None = None,
    subscribe: Subscriber | None = None,
    max_parallel: int = 8,
    disease: str | None = None,
    as_published: bool = False,
) -> DrugTargetRun:
    """Plan ``scenario``, bind it to the servers (default ``servers.json``) and run it;
    write its findings as ``report.md`` and ``report.json`` in the run's directory.

    ``engine``: one to run on (a long-lived face's, whose pool factory may keep the
    servers warm), else a new one on ``home``, closed after. ``disease`` and
    ``as_published``: see ``plan_drug_target``."""
    plan, domain = plan_drug_target(scenario, disease, as_published=as_published)
    own = engine is None
    engine = engine or Engine(home)
    step_ms: dict[str, float] = {}

    def on_event(event: Event) -> None:
        duration = getattr(event, "duration_ms", None)
        step = getattr(event, "step", None)
        if step and duration is not None and type(event).__name__ == "StepSucceeded":
            step_ms[str(step)] = float(duration)
        if subscribe is not None:
            subscribe(event)

    started = time.perf_counter()
    try:
        outcome = await engine.run_plan(
            plan,
            domain,
            bindings or drug_target_bindings(domain),
            servers or servers_config(),
            inputs={"plan": f"{plan.domain}/{plan.problem}", "bindings": str(DT_BINDINGS)},
            approve=True,
            max_parallel=max_parallel,
            subscribe=on_event,
        )
        seconds = time.perf_counter() - started
        report = build_report(outcome.run_id, engine.log.events(outcome.run_id), engine.log, {})
        report_dir = engine.run_dir(outcome.run_id)
    finally:
        if own:
            engine.close()
    findings = findings_of(report, plan.problem)
    write_findings(findings, report, report_dir)
    return DrugTargetRun(
        outcome.run_id,
        plan,
        outcome.state,
        findings,
        report_dir,
        seconds,
        step_ms,
        failed_steps=len(report["failures"]),
        retries=int(report["retries"]),
    )
