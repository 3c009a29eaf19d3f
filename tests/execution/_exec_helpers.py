"""Hand-made domains, plans, bindings and catalogs for the execution and binding tests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

from plansmith.binding import Bindings, ToolCatalog, ToolSpec, bind, parse_bindings
from plansmith.binding._model import BoundPlan
from plansmith.execution import (
    MemoryRunLog,
    PlanReady,
    RunLog,
    Runner,
    RunOutcome,
    ToolCall,
    ToolResult,
    bound_to_dict,
    fold,
)
from plansmith.execution._emit import Emitter
from plansmith.execution._states import RunState
from plansmith.model import (
    ActionSchema,
    Atom,
    Domain,
    Literal,
    Plan,
    Problem,
    Step,
    Tier,
    TypedName,
)

ITEM = (TypedName("x", "item"),)


async def run_until(
    runner: Runner, ready: Callable[[], Awaitable[object]], stop: Callable[[], None]
) -> RunOutcome:
    """Run ``runner``; once ``ready()`` returns (under a deadline), call ``stop()``; the
    run's outcome."""
    outcomes: list[RunOutcome] = []
    async with anyio.create_task_group() as tg:

        async def go() -> None:
            outcomes.append(await runner.run())

        tg.start_soon(go)
        with anyio.fail_after(10):
            await ready()
        stop()
    return outcomes[0]


async def work_ok(call: ToolCall) -> ToolResult:
    """A tool that answers every call: ``work`` says it is done, others echo ``x``."""
    if call.tool == "work":
        return ToolResult({"done": f"{call.arguments['name']}!", "key": call.key}, "")
    return ToolResult({"value": call.arguments.get("x")}, "")


def domain() -> Domain:
    """``work(x)``: makes ``done(x)``; ``finish(x)`` needs ``done(x)``; ``alt(x)`` also makes it."""
    return Domain(
        name="toy",
        predicates=(),
        actions=(
            ActionSchema("work", ITEM, (), (Literal(Atom("done", ("x",))),), tier=Tier.READ),
            ActionSchema(
                "finish",
                ITEM,
                (Literal(Atom("done", ("x",))),),
                (Literal(Atom("finished", ("x",))),),
                tier=Tier.WRITE,
            ),
            ActionSchema("alt", ITEM, (), (Literal(Atom("done", ("x",))),), tier=Tier.READ),
        ),
    )


def problem(n: int = 3) -> Problem:
    objs = tuple(TypedName(f"i{k}", "item") for k in range(n))
    return Problem("toy-p", domain(), objs, frozenset(), goal=())


def plan(steps: list[Step]) -> Plan:
    return Plan("toy", "toy-p", "sha256:d", "sha256:p", tuple(steps))


def chain(n: int, action: str = "work") -> Plan:
    return plan(
        [Step(f"s{k}", action, (f"i{k}",), after=(f"s{k - 1}",) if k else ()) for k in range(n)]
    )


def wide(n: int, action: str = "work") -> Plan:
    return plan([Step(f"s{k}", action, (f"i{k}",)) for k in range(n)])


CATALOG = ToolCatalog(
    (
        (
            "counter",
            (
                ToolSpec(
                    "work",
                    {
                        "type": "object",
                        "properties": {"name": {"type": "string"}, "cost": {"type": "integer"}},
                        "required": ["name"],
                    },
                ),
                ToolSpec("echo", {"type": "object", "properties": {"x": {}}, "required": ["x"]}),
                ToolSpec(
                    "sleep", {"type": "object", "properties": {"seconds": {"type": "number"}}}
                ),
                ToolSpec("fail", {"type": "object"}),
                ToolSpec("flaky", {"type": "object"}),
                ToolSpec("malformed", {"type": "object"}),
                ToolSpec("die", {"type": "object"}),
                ToolSpec("progress", {"type": "object"}),
                ToolSpec("echo_text", {"type": "object"}),
            ),
        ),
    )
)

BINDINGS = """\
bindings:
  work:
    server: counter
    tool: work
    arguments: {name: "${x}"}
    outputs: {done: "$.structured.done", key: "$.structured.key"}
    retries: 2
    idempotent: true
  finish:
    server: counter
    tool: echo
    arguments: {x: "${work(x).done}"}
    outputs: {value: "$.structured.value"}
  alt:
    server: counter
    tool: echo
    arguments: {x: "alt ${x}"}
    outputs: {value: "$.structured.value"}
"""


def bindings(text: str = BINDINGS) -> Bindings:
    return parse_bindings(text, source="bindings.yaml")


def bound(p: Plan, text: str = BINDINGS, catalog: ToolCatalog = CATALOG) -> BoundPlan:
    return bind(p, domain(), bindings(text), catalog, env={})


def start_run(
    b: BoundPlan, log: RunLog | None = None, run_id: str = "run-1"
) -> tuple[RunLog, RunState]:
    """A log holding a new run with ``PlanReady``; the folded state to run from."""
    log = log or MemoryRunLog()
    log.create_run(run_id, "2026-01-01T00:00:00.000Z", {})
    Emitter(log, run_id).emit(
        PlanReady(run_id=run_id, plan_hash=b.plan_hash, bound=bound_to_dict(b))
    )
    return log, fold(run_id, log.events(run_id))


#: ``work`` answers with JSON text (its ``text`` argument: ``{"done": "<x>"}``); ``finish``
#: sends on what ``work`` read from it, and would be retried three times
JSON_TEXT_BINDINGS = """\
bindings:
  work:
    server: counter
    tool: echo_text
    arguments: {text: '{"done": "${x}"}'}
    outputs: {done: "$.json.done"}
  finish:
    server: counter
    tool: echo
    arguments: {x: "${work(x).done}"}
    outputs: {value: "$.structured.value"}
    retries: 3
    idempotent: true
"""
