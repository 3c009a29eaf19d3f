"""``${fact(pred(x)).out}``: the step that makes a fact true, whichever action it is.

A reference that names its producer (``${read_note(n).content}``) has none once a
replan puts another action in its place (``fetch_archived(n)``, which makes the same
fact true). A reference to a fact names the data instead: ``bind`` resolves it to the
plan's last step before the reader whose action adds that ground atom (or, failing
that, the last step of the run that already did), and checks that this step's binding
declares the output. It does so at every bind, a replan's among them.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from plansmith.errors import BindingError, Location, PlansmithError
from plansmith.model import Domain

__all__ = [
    "FactReferenceError",
    "FactProducerMissingError",
    "FactOutputMissingError",
    "FactProducers",
    "Producer",
]

GroundAtom = tuple[str, tuple[str, ...]]


class FactReferenceError(BindingError):
    """A ``${fact(...)}`` reference that cannot be bound. ``consumer`` is the step that
    reads it (``consumer_action`` its ground action, as text), ``fact`` the ground atom
    (``note_read(groceries)``), ``output`` the output read; a subclass says what is wrong."""

    def __init__(
        self,
        message: str,
        *,
        location: Location | None = None,
        hint: str | None = None,
        problems: tuple[PlansmithError, ...] = (),
        consumer: str | None = None,
        consumer_action: str | None = None,
        fact: str | None = None,
        output: str | None = None,
        producer: str | None = None,
        producer_action: str | None = None,
    ) -> None:
        super().__init__(message, location=location, hint=hint, problems=problems)
        self.consumer = consumer
        self.consumer_action = consumer_action
        self.fact = fact
        self.output = output
        self.producer = producer
        self.producer_action = producer_action


class FactProducerMissingError(FactReferenceError):
    """No step before the consumer (in the plan, or earlier in the run) makes the fact true."""


class FactOutputMissingError(FactReferenceError):
    """The step that makes the fact true has a binding without the output the consumer
    reads; ``producer`` and ``producer_action`` name that step."""


@dataclass(frozen=True, slots=True)
class Producer:
    """A step that makes facts true: its id, its ground action as text, its action's name."""

    id: str
    shown: str
    action: str


class FactProducers:
    """Which step last made each ground atom true before a given step of a plan.

    ``earlier`` are the steps the run already carried out (``(action, args as text)``
    with their ids, in the order they ran), ``steps`` the plan's (the same, in plan
    order). A step makes true the positive atoms of its action's effect, with its
    arguments in its parameters' places (a conditional effect, or one over a
    ``forall``'s variables, depends on the state: it does not count). The index is made
    at the first question (a plan without a reference to a fact never pays for it);
    then each answer is a look-up and a bisection.
    """

    def __init__(
        self,
        domain: Domain,
        earlier: Iterable[tuple[tuple[str, tuple[str, ...]], str]],
        steps: Iterable[tuple[tuple[str, tuple[str, ...]], str]],
    ) -> None:
        self._domain = domain
        self._earlier_keys = earlier
        self._step_keys = steps
        self._steps: list[Producer] = []
        self._index: dict[str, int] = {}
        self._positions: dict[GroundAtom, list[int]] = {}  # plan positions, increasing
        self._earlier: dict[GroundAtom, Producer] = {}  # the last earlier step that did
        self._built = False

    def _build(self) -> None:
        schemas: dict[str, _Effect] = {}
        for key, step_id in self._earlier_keys:
            producer = _producer(key, step_id)
            for atom in _adds(self._domain, key, schemas):
                self._earlier[atom] = producer
        for position, (key, step_id) in enumerate(self._step_keys):
            self._steps.append(_producer(key, step_id))
            self._index.setdefault(step_id, position)
            for atom in _adds(self._domain, key, schemas):
                self._positions.setdefault(atom, []).append(position)
        self._built = True

    def latest(self, atom: GroundAtom, before: str) -> Producer | None:
        """The last step before the plan's step ``before`` that makes ``atom`` true."""
        if not self._built:
            self._build()
        end = self._index.get(before, len(self._steps))
        positions = self._positions.get(atom, [])
        at = bisect.bisect_left(positions, end) - 1
        if at >= 0:
            return self._steps[positions[at]]
        return self._earlier.get(atom)


def _producer(key: tuple[str, tuple[str, ...]], step_id: str) -> Producer:
    action, args = key
    return Producer(step_id, f"{action}({', '.join(args)})", action)


#: an action's parameter names and the atoms its effect makes true, as written
_Effect = tuple[tuple[str, ...], frozenset[GroundAtom]]


def _adds(
    domain: Domain, key: tuple[str, tuple[str, ...]], schemas: dict[str, _Effect]
) -> Iterator[GroundAtom]:
    """The atoms the step ``key`` makes true; ``schemas`` keeps each action's
    ``_Effect`` once worked out."""
    action, args = key
    effect = schemas.get(action)
    if effect is None:
        effect = schemas[action] = _effect(domain, action)
    names, atoms = effect
    sub: Mapping[str, str] = dict(zip(names, args, strict=False))
    for predicate, terms in atoms:
        yield predicate, tuple(sub.get(t, t) for t in terms)


def _effect(domain: Domain, action: str) -> _Effect:
    schema = domain.action(action)
    if schema is None:
        return (), frozenset()
    literals = [*schema.effect]
    for conditional in schema.conditional:
        if not conditional.variables and not conditional.condition:
            literals.extend(conditional.effect)
    atoms = frozenset((lit.atom.predicate, lit.atom.args) for lit in literals if lit.positive)
    return tuple(p.name for p in schema.parameters), atoms
