"""Domains: predicates, action schemas, HTN tasks and methods, named goals."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from plansmith.errors import Location
from plansmith.model._logic import Atom, Condition, Literal, TypedName, TypeHierarchy

__all__ = [
    "Number",
    "Tier",
    "Predicate",
    "ActionSchema",
    "TaskCall",
    "Ordered",
    "Parallel",
    "Method",
    "TaskSchema",
    "NamedGoal",
    "Domain",
]

Number = int | float


class Tier(StrEnum):
    """What an action may do to the world; approval policies are set per tier."""

    READ = "read"
    WRITE = "write"
    EXECUTE = "execute"


@dataclass(frozen=True, slots=True)
class Predicate:
    """A predicate (or a numeric function, for action costs) with typed arguments."""

    name: str
    parameters: tuple[TypedName, ...] = ()
    loc: Location | None = field(default=None, compare=False, hash=False, repr=False)

    @property
    def arity(self) -> int:
        return len(self.parameters)


@dataclass(frozen=True, slots=True)
class ActionSchema:
    """A lifted action: typed parameters, a precondition, effects and a cost.

    ``cost`` is a number, or an atom over a numeric function whose ground values
    the problem gives (PDDL ``:action-costs``: ``(increase (total-cost) (f ?x))``).
    """

    name: str
    parameters: tuple[TypedName, ...] = ()
    precondition: tuple[Condition, ...] = ()
    effect: tuple[Literal, ...] = ()
    cost: Number | Atom = 1
    tier: Tier = Tier.WRITE
    loc: Location | None = field(default=None, compare=False, hash=False, repr=False)

    @property
    def arity(self) -> int:
        return len(self.parameters)


@dataclass(frozen=True, slots=True)
class TaskCall:
    """``name(arg, ...)`` in a task network: an action or a compound task."""

    name: str
    args: tuple[str, ...] = ()
    loc: Location | None = field(default=None, compare=False, hash=False, repr=False)

    def __str__(self) -> str:
        return f"{self.name}({', '.join(self.args)})"


@dataclass(frozen=True, slots=True)
class Parallel:
    """Branches that may run at the same time; each branch is itself ordered."""

    branches: tuple[Ordered, ...]


@dataclass(frozen=True, slots=True)
class Ordered:
    """Items that run in this order: task calls or parallel blocks."""

    items: tuple[TaskCall | Parallel, ...] = ()


@dataclass(frozen=True, slots=True)
class Method:
    """One way to decompose a task: a precondition and a task network.

    ``parameters`` are extra variables beyond the task's own, bound by the
    precondition when the method is tried.
    """

    name: str
    precondition: tuple[Condition, ...] = ()
    network: Ordered = field(default_factory=Ordered)
    parameters: tuple[TypedName, ...] = ()
    loc: Location | None = field(default=None, compare=False, hash=False, repr=False)


@dataclass(frozen=True, slots=True)
class TaskSchema:
    """A compound task with its methods, tried in the order given."""

    name: str
    parameters: tuple[TypedName, ...] = ()
    methods: tuple[Method, ...] = ()
    loc: Location | None = field(default=None, compare=False, hash=False, repr=False)


@dataclass(frozen=True, slots=True)
class NamedGoal:
    """A goal a domain offers by name, for the natural-language translator."""

    name: str
    goal: tuple[Condition, ...]
    parameters: tuple[TypedName, ...] = ()
    description: str = ""
    loc: Location | None = field(default=None, compare=False, hash=False, repr=False)


@dataclass(frozen=True, slots=True)
class Domain:
    """A planning domain. Every tuple keeps the order of the source file."""

    name: str
    types: TypeHierarchy = field(default_factory=TypeHierarchy)
    constants: tuple[TypedName, ...] = ()
    predicates: tuple[Predicate, ...] = ()
    functions: tuple[Predicate, ...] = ()
    actions: tuple[ActionSchema, ...] = ()
    tasks: tuple[TaskSchema, ...] = ()
    goals: tuple[NamedGoal, ...] = ()
    requirements: tuple[str, ...] = ()
    source: str | None = field(default=None, compare=False, hash=False, repr=False)

    def action(self, name: str) -> ActionSchema | None:
        for a in self.actions:
            if a.name == name:
                return a
        return None

    def task(self, name: str) -> TaskSchema | None:
        for t in self.tasks:
            if t.name == name:
                return t
        return None

    def predicate(self, name: str) -> Predicate | None:
        for p in self.predicates:
            if p.name == name:
                return p
        return None
