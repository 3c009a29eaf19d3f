"""Domains: predicates, action schemas, HTN tasks and methods, named goals."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, TypeVar

from plansmith.errors import Location, UnsupportedFeatureError
from plansmith.model._ask import AskSpec
from plansmith.model._logic import (
    OMIT_DEFAULT,
    Atom,
    Condition,
    Formula,
    GoalPart,
    Literal,
    TypedName,
    TypeHierarchy,
)

__all__ = [
    "Number",
    "Tier",
    "Predicate",
    "ActionSchema",
    "ConditionalEffect",
    "Axiom",
    "axiom_strata",
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


class _Parameterised:
    """What takes typed parameters: its arity is their number."""

    __slots__ = ()
    parameters: tuple[TypedName, ...]

    @property
    def arity(self) -> int:
        return len(self.parameters)


@dataclass(frozen=True, slots=True)
class Predicate(_Parameterised):
    """A predicate (or a numeric function, for action costs) with typed arguments."""

    name: str
    parameters: tuple[TypedName, ...] = ()
    loc: Location | None = field(default=None, compare=False, hash=False, repr=False)


@dataclass(frozen=True, slots=True)
class ConditionalEffect:
    """``forall (variables) (when condition effect)``: for each binding of the
    variables, the literals of ``effect`` happen if ``condition`` holds in the
    state the action is applied in (no variables: a plain ``when``; an empty
    condition: an unconditional ``forall``)."""

    variables: tuple[TypedName, ...]
    condition: tuple[GoalPart, ...]
    effect: tuple[Literal, ...]
    loc: Location | None = field(default=None, compare=False, hash=False, repr=False)


@dataclass(frozen=True, slots=True)
class ActionSchema(_Parameterised):
    """A lifted action: typed parameters, a precondition, effects and a cost.

    ``cost`` is a number, or an atom over a numeric function whose ground values
    the problem gives (PDDL ``:action-costs``: ``(increase (total-cost) (f ?x))``).

    ADL (all left out of the canonical form while empty): ``formula`` holds the
    parts of the precondition that are no literals (``or``, ``forall``,
    ``exists``; all must hold, as well as ``precondition``); ``conditional``
    the conditional and universally quantified effects; ``hidden`` counts the
    trailing parameters that grounding added for existential variables (they are
    no arguments of the action in a plan).
    """

    name: str
    parameters: tuple[TypedName, ...] = ()
    precondition: tuple[Condition, ...] = ()
    effect: tuple[Literal, ...] = ()
    cost: Number | Atom = 1
    tier: Tier = Tier.WRITE
    loc: Location | None = field(default=None, compare=False, hash=False, repr=False)
    formula: tuple[Formula, ...] = field(default=(), metadata=OMIT_DEFAULT)
    conditional: tuple[ConditionalEffect, ...] = field(default=(), metadata=OMIT_DEFAULT)
    hidden: int = field(default=0, metadata=OMIT_DEFAULT)
    #: an ask action's question, answer schema and effects by answer (``effect`` holds
    #: those of the answer the planner assumes); None for an action that calls a tool
    ask: AskSpec | None = field(default=None, metadata=OMIT_DEFAULT)

    @property
    def adl(self) -> bool:
        """Whether the action uses more than STRIPS with negation and equality."""
        return bool(self.formula or self.conditional)


@dataclass(frozen=True, slots=True)
class Axiom(_Parameterised):
    """A rule of a derived predicate (PDDL ``(:derived (name ?x ...) condition)``).

    In every state, ``name(args)`` holds iff the condition holds for some rule of
    ``name`` with its parameters bound to ``args`` (the least fixpoint, stratum by
    stratum: see :func:`axiom_strata`). ``precondition`` holds the literal
    conjuncts of the condition, ``formula`` the others (as in an action)."""

    name: str
    parameters: tuple[TypedName, ...] = ()
    precondition: tuple[Condition, ...] = ()
    formula: tuple[Formula, ...] = ()
    loc: Location | None = field(default=None, compare=False, hash=False, repr=False)


def _literals(parts: Iterable[GoalPart]) -> Iterable[Literal]:
    for part in parts:
        if isinstance(part, Literal):
            yield part
        elif isinstance(part, Formula):
            yield from _literals(part.parts)


def axiom_strata(axioms: Iterable[Axiom]) -> dict[str, int]:
    """The stratum of each derived predicate: at least that of every derived predicate
    its rules use, and above that of every one they use negated (conditions are in
    negation normal form). Raises UnsupportedFeatureError, located at a rule, when a
    derived predicate depends negatively on itself (no stratification exists)."""
    rules = list(axioms)
    names = {a.name for a in rules}
    edges: list[tuple[str, str, int, Axiom]] = []  # head, body predicate, 1 if negated
    for a in rules:
        edges.extend(
            (a.name, lit.atom.predicate, 0 if lit.positive else 1, a)
            for lit in _literals((*a.precondition, *a.formula))
            if lit.atom.predicate in names
        )
    stratum = dict.fromkeys(sorted(names), 0)
    for _ in range(len(names) + 1):
        changed = False
        for head, body, negated, rule in edges:
            if stratum[body] + negated > stratum[head]:
                stratum[head] = stratum[body] + negated
                changed = True
                if stratum[head] > len(names):
                    raise UnsupportedFeatureError(
                        f"unsupported PDDL feature: derived predicate '{head}' depends on "
                        "its own negation (the axioms are not stratifiable)",
                        location=rule.loc,
                        hint="a derived predicate may use the negation of another only if "
                        "that one does not depend, even indirectly, on it",
                    )
        if not changed:
            return stratum
    return stratum  # pragma: no cover - the loop above returns or raises


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
    axioms: tuple[Axiom, ...] = field(default=(), metadata=OMIT_DEFAULT)
    """The rules of the derived predicates (which are declared as predicates too)."""

    @property
    def derived(self) -> frozenset[str]:
        """The names of the derived predicates."""
        return frozenset(a.name for a in self.axioms)

    def action(self, name: str) -> ActionSchema | None:
        return _named(self.actions, name)

    def task(self, name: str) -> TaskSchema | None:
        return _named(self.tasks, name)

    def predicate(self, name: str) -> Predicate | None:
        return _named(self.predicates, name)


class _Named(Protocol):
    @property
    def name(self) -> str: ...


_N = TypeVar("_N", bound=_Named)


def _named(items: Iterable[_N], name: str) -> _N | None:
    """The first of ``items`` called ``name``, or None."""
    for item in items:
        if item.name == name:
            return item
    return None
