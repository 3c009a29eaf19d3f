"""Bindings and bound plans: which tool runs each action, with which arguments and policy."""

from __future__ import annotations

from dataclasses import dataclass, field

from plansmith.binding._types import TypeCheck
from plansmith.errors import Location
from plansmith.model import JSONValue, Step, StepArg, Tier

__all__ = ["StepPolicy", "Binding", "Bindings", "ToolSpec", "ToolCatalog", "BoundStep", "BoundPlan"]


@dataclass(frozen=True, slots=True)
class StepPolicy:
    """How a step runs: its timeout (seconds), extra attempts, idempotency and tier.

    ``tier`` None means: the tier of the domain's action. ``resend_on_transport_lost``:
    an attempt whose server died (``transport_lost``) is sent once more after the
    restart even when ``retries`` is 0 (its idempotency key makes the repeat safe);
    False leaves ``transport_lost`` to ``retries`` alone. ``skip_when_absent``
    (``when_absent: skip``): a step whose argument reads a value an earlier step did not
    give (an optional output null or missing, an index past a list's end, a skipped
    step's output) is skipped, not failed; the tool is not called.
    """

    timeout: float | None = None
    retries: int = 0
    idempotent: bool = False
    tier: Tier | None = None
    resend_on_transport_lost: bool = True
    skip_when_absent: bool = False


@dataclass(frozen=True, slots=True)
class Binding:
    """One action's binding: server, tool, argument template, output extractors, policy.

    ``defaults`` are the outputs that are optional (the rest are required: a singular
    path that matches nothing fails the step), each with the value it then takes.
    ``locations`` maps a field path (``"server"``, ``"tool"``, ``"arguments"``,
    ``"outputs.NAME"``, ...) to where it was written, for error messages; a value inside
    the arguments has ``"arguments"`` and its JSON Pointer (``"arguments/x/0"``).
    """

    action: str
    server: str
    tool: str
    arguments: JSONValue = field(default_factory=dict)
    outputs: tuple[tuple[str, str], ...] = ()
    policy: StepPolicy = field(default_factory=StepPolicy)
    loc: Location | None = field(default=None, compare=False)
    locations: tuple[tuple[str, Location], ...] = field(default=(), compare=False, repr=False)
    #: the optional outputs: each name with the value it takes when its path matches
    #: nothing (``default:``; null for ``optional: true``)
    defaults: tuple[tuple[str, JSONValue], ...] = ()

    def where(self, key: str) -> Location | None:
        """Where ``key`` (or, failing that, the binding) was written."""
        for k, loc in self.locations:
            if k == key:
                return loc
        return self.loc

    def where_argument(self, pointer: str) -> Location | None:
        """Where the argument value at JSON Pointer ``pointer`` (``"/x/0"``; ``""`` for
        the whole) was written: its own place if the reader kept it (``locations`` key
        ``"arguments" + pointer``), else its nearest enclosing value's, else the binding's."""
        places = dict(self.locations)
        while True:
            loc = places.get("arguments" + pointer)
            if loc is not None or not pointer:
                return loc or self.loc
            pointer = pointer.rpartition("/")[0]

    def output_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.outputs)


@dataclass(frozen=True, slots=True)
class Bindings:
    """All bindings of a file, by action name."""

    bindings: tuple[Binding, ...] = ()
    source: str | None = None

    def get(self, action: str) -> Binding | None:
        for b in self.bindings:
            if b.action == action:
                return b
        return None


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as a server lists it: name, input schema, output schema (if any), and
    what ``plansmith tools`` shows besides: its title and its annotations (MCP's
    ``readOnlyHint``, ``destructiveHint``, ``idempotentHint``, ``openWorldHint``, as the
    server wrote them; None when it gave none)."""

    name: str
    input_schema: dict[str, JSONValue] = field(default_factory=dict)
    output_schema: dict[str, JSONValue] | None = None
    description: str = ""
    title: str | None = None
    annotations: dict[str, JSONValue] | None = None


@dataclass(frozen=True, slots=True)
class ToolCatalog:
    """The live tools of each server, as ``(server, tools)`` pairs."""

    servers: tuple[tuple[str, tuple[ToolSpec, ...]], ...] = ()

    def has_server(self, server: str) -> bool:
        return any(name == server for name, _ in self.servers)

    def tool(self, server: str, tool: str) -> ToolSpec | None:
        for name, tools in self.servers:
            if name == server:
                for t in tools:
                    if t.name == tool:
                        return t
        return None

    def tool_names(self, server: str) -> tuple[str, ...]:
        for name, tools in self.servers:
            if name == server:
                return tuple(t.name for t in tools)
        return ()


@dataclass(frozen=True, slots=True)
class BoundStep:
    """A plan step with its tool, argument template, producers, extractors and policy.

    ``params`` maps the action's parameter names to the step's arguments;
    ``producers`` maps each output reference's text as written (``act(x).out``, or
    ``fact(p(x)).out``) to the id of the step that produces it (for a reference to a
    fact, the last step before this one that makes it true; ``context.NAME`` for GTPyhop's
    ``${context.NAME}`` in the step's arguments, the last step before it whose binding
    declares the output ``NAME``); ``after`` is the plan's
    dependencies plus the data edges the references add. ``type_checks`` are the JSON
    types the tool's inputSchema declares for the arguments that are one output
    reference, to check with ``type_mismatch`` once they are rendered (worked out from
    the catalog by ``bind``; not part of what the step is, so not compared).
    ``defaults`` are its binding's optional outputs with their values
    (``Binding.defaults``).
    """

    step: Step
    server: str
    tool: str
    arguments: JSONValue
    params: tuple[tuple[str, StepArg], ...] = ()
    producers: tuple[tuple[str, str], ...] = ()
    outputs: tuple[tuple[str, str], ...] = ()
    policy: StepPolicy = field(default_factory=StepPolicy)
    tier: Tier = Tier.WRITE
    after: tuple[str, ...] = ()
    type_checks: tuple[TypeCheck, ...] = field(default=(), compare=False)
    defaults: tuple[tuple[str, JSONValue], ...] = ()

    @property
    def id(self) -> str:
        return self.step.id


@dataclass(frozen=True, slots=True)
class BoundPlan:
    """A plan whose every step is bound to a live tool; ``plan_hash`` is what is approved."""

    plan_hash: str
    steps: tuple[BoundStep, ...] = ()

    def step(self, step_id: str) -> BoundStep | None:
        for s in self.steps:
            if s.id == step_id:
                return s
        return None
