"""Ground actions and states: what a plan is made of and what it acts on."""

from __future__ import annotations

from dataclasses import dataclass

from plansmith.model._domain import Number, Tier
from plansmith.model._logic import Atom

__all__ = ["State", "GroundAction"]

State = frozenset[Atom]


@dataclass(frozen=True, slots=True)
class GroundAction:
    """An action schema applied to objects: STRIPS with negative preconditions."""

    name: str
    args: tuple[str, ...]
    pre_pos: frozenset[Atom] = frozenset()
    pre_neg: frozenset[Atom] = frozenset()
    add: frozenset[Atom] = frozenset()
    delete: frozenset[Atom] = frozenset()
    cost: Number = 1
    tier: Tier = Tier.WRITE

    def __str__(self) -> str:
        return f"{self.name}({', '.join(self.args)})"

    def applicable(self, state: State) -> bool:
        return self.pre_pos <= state and not (self.pre_neg & state)

    def apply(self, state: State) -> State:
        """Delete, then add (PDDL semantics: an atom both deleted and added stays true)."""
        return (state - self.delete) | self.add
