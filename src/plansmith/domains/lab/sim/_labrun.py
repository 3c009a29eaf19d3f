"""Run lab plans on the simulator: ``run_pcr`` through ``Engine.run``, ``run_plan`` through
``Engine.run_plan`` for a plan the engine cannot load from files (GTPyhop's
``bio_opentrons``: ``run_bio``; its Omega HDQ DNA extraction: ``run_omega``).

Both start the role servers the plan uses on a fresh robot, under the run's lease and
traced when tracing is on, feed every event to a ``RunStats`` (and to ``subscribe``),
and read the simulator's command count with ``get_run_log`` through an observer client
before the robot goes away. Runs are stored in ``home/runs.db``, where ``plansmith
serve`` shows them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plansmith.binding import Bindings, ToolCatalog, load_bindings
from plansmith.domains.lab import PCR_BINDINGS, PCR_DOMAIN
from plansmith.domains.lab.sim._bio import (
    BIO_BINDINGS,
    flex_plan,
    one_rack,
    plan_scenario,
    read_mapping,
)
from plansmith.domains.lab.sim._labservers import (
    observe,
    simulator_command_count,
    simulator_deck,
    simulator_run_log,
    write_servers,
)
from plansmith.domains.lab.sim._omega import (
    OMEGA_BINDINGS,
    omega_plan,
    plan_omega,
    read_omega_mapping,
)
from plansmith.domains.lab.sim._stats import RunStats
from plansmith.domains.lab.sim._tips import tip_replanner
from plansmith.engine import Engine, RunInputs
from plansmith.execution import Event, PlanReady, ReplanFn, TraceSetup
from plansmith.model import Domain, JSONValue, Plan
from plansmith.servers import load_servers

__all__ = ["LabRun", "run_plan", "run_bio", "run_omega", "run_pcr"]

Subscriber = Callable[[Event], None]
BIO_TIP_RACKS = ("tips_1000", "tips_1000_reserve")  # as named in bio_opentrons/bindings.yaml


@dataclass(slots=True)
class LabRun:
    """A finished lab run: its id, plan, statistics, and the mappings it used; with
    ``keep_log``, the simulator's run log and its deck when the run was over."""

    run_id: str
    plan: Plan
    stats: RunStats
    mappings: list[str] = field(default_factory=list)
    replan_notes: list[str] = field(default_factory=list)
    run_log: list[str] = field(default_factory=list)
    deck: dict[str, Any] = field(default_factory=dict)


def _fanout(stats: RunStats, subscribe: Subscriber | None) -> Subscriber:
    def on_event(event: Event) -> None:
        stats.on_event(event)
        if subscribe is not None:
            subscribe(event)

    return on_event


async def run_plan(
    plan: Plan,
    domain: Domain,
    bindings: Bindings,
    *,
    home: Path,
    subscribe: Subscriber | None = None,
    replace_racks: Collection[str] = (),
    max_parallel: int = 1,
    lab_python: Path | None = None,
    tracing: TraceSetup | None = None,
    keep_log: bool = False,
) -> LabRun:
    """Bind ``plan`` to the role servers of a fresh robot, record it, and run it
    (``Engine.run_plan``, approved by the person who asked for the run; traced by
    ``tracing``, default: as the environment says, ``OTEL_*``).

    ``replace_racks``: tip racks that a replan may replace when a pick-up runs out
    of tips (none: no replanning). ``lab_python``: the lab venv's python (default:
    ``lab_python()``, see ``plansmith.domains.lab.sim``). ``keep_log``: read the
    simulator's run log and deck state into the result before the robot goes away.
    """
    engine = Engine(home, tracing=tracing)
    run_id = engine.new_run_id()
    run_dir = engine.run_dir(run_id)
    robot = run_dir / "robot"
    config = load_servers(write_servers(run_dir / "servers.json", robot, lab_python))
    stats = RunStats()
    done = LabRun(run_id, plan, stats)
    inputs: dict[str, JSONValue] = {
        "plan": f"{plan.domain}/{plan.problem}",
        "bindings": str(bindings.source),
    }

    def replanner(catalog: ToolCatalog) -> ReplanFn | None:
        if not replace_racks:
            return None
        return tip_replanner(
            plan,
            domain,
            bindings,
            catalog,
            log=engine.log,
            run_id=run_id,
            tip_racks=set(replace_racks),
            on_replan=done.replan_notes.append,
        )

    try:
        async with observe(robot, lab_python) as observer:
            await engine.run_plan(
                plan,
                domain,
                bindings,
                config,
                inputs=inputs,
                run_id=run_id,
                approve=True,
                max_parallel=max_parallel,
                subscribe=_fanout(stats, subscribe),
                replan=replanner,
            )
            stats.commands = await simulator_command_count(observer)
            if keep_log:
                done.run_log = await simulator_run_log(observer)
                done.deck = await simulator_deck(observer)
    finally:
        engine.close()
    return done


async def run_bio(
    scenario: str,
    *,
    home: Path,
    subscribe: Subscriber | None = None,
    tip_racks: int = 2,
    replan_tips: bool = True,
    lab_python: Path | None = None,
    tracing: TraceSetup | None = None,
) -> LabRun:
    """Plan a ``bio_opentrons`` scenario, map it to the Flex, and run it."""
    gtpyhop_plan, py_domain = plan_scenario(scenario)
    mapping = read_mapping(BIO_BINDINGS)
    plan, domain = flex_plan(gtpyhop_plan, py_domain, mapping)
    bindings = load_bindings(BIO_BINDINGS)
    if tip_racks == 1:
        bindings = one_rack(bindings)
    run = await run_plan(
        plan,
        domain,
        bindings,
        home=home,
        subscribe=subscribe,
        replace_racks=BIO_TIP_RACKS if replan_tips else (),
        lab_python=lab_python,
        tracing=tracing,
    )
    run.mappings = mapping.lines()
    if tip_racks == 1:
        run.mappings = [m for m in run.mappings if not m.startswith("reserve tip rack")]
        run.mappings.append("tip racks: one, tips_1000 at C1, as the domain has it")
    return run


async def run_omega(
    scenario: str,
    *,
    home: Path,
    subscribe: Subscriber | None = None,
    lab_python: Path | None = None,
    tracing: TraceSetup | None = None,
    keep_log: bool = False,
) -> LabRun:
    """Plan an Omega HDQ DNA extraction scenario (``OMEGA_SCENARIOS``), map it to the
    Flex with the 96-channel pipette, set up the deck, and run it (``keep_log``: see
    ``run_plan``)."""
    gtpyhop_plan, py_domain, heater_shaker = plan_omega(scenario)
    mapping = read_omega_mapping(OMEGA_BINDINGS)
    plan, domain = omega_plan(gtpyhop_plan, py_domain, mapping, heater_shaker=heater_shaker)
    run = await run_plan(
        plan,
        domain,
        load_bindings(OMEGA_BINDINGS),
        home=home,
        subscribe=subscribe,
        lab_python=lab_python,
        tracing=tracing,
        keep_log=keep_log,
    )
    run.mappings = mapping.lines(heater_shaker=heater_shaker)
    return run


async def run_pcr(
    problem: Path,
    *,
    home: Path,
    subscribe: Subscriber | None = None,
    max_parallel: int = 8,
    lab_python: Path | None = None,
) -> LabRun:
    """Run a ``flex-pcr`` problem file through ``Engine.run`` on a fresh robot
    (``lab_python``: the lab venv's python, default ``lab_python()``)."""
    engine = Engine(home)
    run_id = engine.new_run_id()
    run_dir = engine.run_dir(run_id)
    robot = run_dir / "robot"
    servers = write_servers(run_dir / "servers.json", robot, lab_python)
    stats = RunStats()
    plans: list[Plan] = []

    def on_event(event: Event) -> None:
        if isinstance(event, PlanReady) and not plans:
            import json  # noqa: PLC0415

            from plansmith.formats import parse_plan_json  # noqa: PLC0415

            plans.append(parse_plan_json(json.dumps(event.plan)))
        _fanout(stats, subscribe)(event)

    try:
        async with observe(robot, lab_python) as observer:
            await engine.run(
                RunInputs(PCR_DOMAIN, problem, servers, PCR_BINDINGS),
                approve=True,
                max_parallel=max_parallel,
                subscribe=on_event,
                run_id=run_id,
            )
            stats.commands = await simulator_command_count(observer)
    finally:
        engine.close()
    return LabRun(run_id, plans[0], stats)
