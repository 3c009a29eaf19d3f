"""One research run through the engine: plan, then ``Engine.run_plan``: bind, log, run.

:func:`run_research` writes the research problem (the question classified and
decomposed, within the budget), plans it with the HTN planner, and runs the plan with
``Engine.run_plan`` on the desk's tools (``RunTools``: ``search`` steps routed to the
source servers, the rest to the desk), under the run's lease and traced when tracing is
on: the run log gets ``RunCreated``, ``PlanReady``, ``PlanApproved`` (by policy: every
research action is tier ``read``) and the runner's events. The
report (``report.md``) and the whole trace (``research.json``: subquestions,
calls, evidence, claims, conflicts, decisions, budget used) land in the run's
folder, ``home/runs/RUN_ID``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from plansmith.binding import load_bindings
from plansmith.domains.research import (
    DOMAIN_FILE,
    Budget,
    ModelCall,
    problem_yaml,
    research_problem,
)
from plansmith.domains.research.desk._cache import QueryCache
from plansmith.domains.research.desk._desk import CallSource, ResearchDesk
from plansmith.domains.research.desk._invoker import (
    BINDINGS_FILE,
    DeskInvoker,
    desk_catalog,
    route_searches,
)
from plansmith.domains.research.desk._limits import SourceGuard
from plansmith.domains.research.desk._quota import SourceQuota
from plansmith.engine import Engine, RunTools, make_plan
from plansmith.errors import ApprovalRequiredError, Location
from plansmith.execution import ApprovalPolicy, Event, RunOutcome
from plansmith.formats import load_domain, parse_problem
from plansmith.model import JSONValue

__all__ = ["ResearchRequest", "prepare_research", "run_research"]


@dataclass(frozen=True, slots=True)
class ResearchRequest:
    """What a research run is asked: the question, its sources, budget and depth."""

    question: str
    sources: tuple[str, ...]
    budget: Budget = field(default_factory=Budget)
    depth: int = 3
    extra: tuple[str, ...] = ()
    proposed: tuple[str, ...] = ()  # a model's subquestions (the rules keep or drop them)
    llm_calls: int = 0  # model calls made for the run before it starts (the proposals)


def prepare_research(
    engine: Engine,
    run_id: str,
    request: ResearchRequest,
    call_source: CallSource,
    *,
    cache: QueryCache,
    quota: Mapping[str, SourceQuota],
    source_types: Mapping[str, str] | None = None,
    guards: Mapping[str, SourceGuard] | None = None,
    run_guards: Mapping[str, SourceGuard] | None = None,
    limits: tuple[str, ...] = (),
    model: ModelCall | None = None,
    model_via: str = "",
) -> ResearchDesk:
    """Write the run's problem file and make its desk (nothing is logged or called yet).
    ``guards``: the sources' limits over time, shared with other runs (default: the
    desk's own, from ``quota``); ``run_guards``: the run's own limits, after those;
    ``limits``: all of them in words, for the trace and the report; ``model``: a model
    that explains the flagged conflicts (one call, ``model_via`` says through what)."""
    problem = research_problem(
        request.question,
        request.sources,
        request.budget,
        extra=request.extra,
        proposed=request.proposed,
    )
    run_dir = engine.run_dir(run_id)
    (run_dir / "problem.yaml").write_text(problem_yaml(problem), encoding="utf-8")
    return ResearchDesk(
        run_id,
        problem,
        call_source,
        cache,
        quota,
        depth=request.depth,
        run_dir=run_dir,
        source_types=dict(source_types or {}),
        guards=guards,
        run_guards=run_guards,
        limits=limits,
        model=model,
        model_via=model_via,
        llm_calls=request.llm_calls,
    )


async def run_research(
    engine: Engine,
    desk: ResearchDesk,
    *,
    max_parallel: int = 8,
    subscribe: Callable[[Event], None] | None = None,
) -> RunOutcome:
    """Plan, bind, record and run ``desk``'s research problem (see the module)."""
    run_id = desk.run_id
    run_dir = engine.run_dir(run_id)
    problem_file = run_dir / "problem.yaml"
    domain = load_domain(DOMAIN_FILE)
    problem = parse_problem(
        problem_file.read_text(encoding="utf-8"), domain, file=str(problem_file)
    )
    plan = await anyio.to_thread.run_sync(make_plan, problem)
    tiers = sorted({s.tier.value for s in plan.steps if s.tier in ApprovalPolicy().needs_person})
    # The shipped domain is read-only; an edited one is refused before anything is logged
    # (a run of a plan made here cannot be resumed, so it must not wait for approval).
    # ``run_plan`` checks the bound steps' tiers again (a binding may set a step's tier).
    if tiers:
        raise ApprovalRequiredError(
            f"the research plan has {', '.join(tiers)} steps",
            location=Location(str(DOMAIN_FILE)),
            hint="research actions must be tier read; plan and approve it with make_plan",
        )
    inputs: dict[str, JSONValue] = {
        "kind": "research",
        "question": desk.problem.question.text,
        "sources": [name for _, name in desk.problem.sources],
        "domain": str(DOMAIN_FILE),
        "problem": str(problem_file),
        "bindings": str(BINDINGS_FILE),
        "servers": str(Path(run_dir) / "servers.json"),
    }
    tools = RunTools(
        desk_catalog(),
        DeskInvoker(desk),
        limits={name: q.max_in_flight for name, q in desk.quota.items()},
        route=lambda bound: route_searches(bound, desk.sources),
    )
    return await engine.run_plan(
        plan,
        domain,
        load_bindings(BINDINGS_FILE),
        tools,
        inputs=inputs,
        run_id=run_id,
        max_parallel=max_parallel,
        subscribe=subscribe,
    )
