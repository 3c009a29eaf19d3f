"""Instantiate an action schema with objects: the one place that grounds a schema."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from plansmith.model import (
    ActionSchema,
    Atom,
    Equality,
    GroundAction,
    Literal,
    Number,
    Problem,
)

__all__ = ["function_table", "instantiate", "literal_holds"]


def function_table(problem: Problem) -> dict[Atom, Number]:
    """The problem's numeric function values (PDDL action costs) as a lookup table."""
    return dict(problem.function_values)


def instantiate(
    schema: ActionSchema,
    args: Sequence[str],
    functions: Mapping[Atom, Number] | None = None,
) -> GroundAction | None:
    """``schema`` applied to ``args``, or None if an equality condition fails.

    Terms that are not parameters (constants) stay as they are. A cost given as a
    function atom is looked up in ``functions`` (a missing value costs 0, as in
    PDDL, where unset fluents make the cost undefined; we choose the neutral one).
    """
    sub = {p.name: a for p, a in zip(schema.parameters, args, strict=True)}
    pre_pos: set[Atom] = set()
    pre_neg: set[Atom] = set()
    for cond in schema.precondition:
        if isinstance(cond, Equality):
            left, right = sub.get(cond.left, cond.left), sub.get(cond.right, cond.right)
            if (left == right) != cond.positive:
                return None
            continue
        atom = Atom(cond.atom.predicate, tuple(sub.get(t, t) for t in cond.atom.args))
        (pre_pos if cond.positive else pre_neg).add(atom)
    add: set[Atom] = set()
    delete: set[Atom] = set()
    for eff in schema.effect:
        atom = Atom(eff.atom.predicate, tuple(sub.get(t, t) for t in eff.atom.args))
        (add if eff.positive else delete).add(atom)
    cost: Number
    if isinstance(schema.cost, Atom):
        key = Atom(schema.cost.predicate, tuple(sub.get(t, t) for t in schema.cost.args))
        cost = (functions or {}).get(key, 0)
    else:
        cost = schema.cost
    return GroundAction(
        name=schema.name,
        args=tuple(args[: len(args) - schema.hidden]),
        pre_pos=frozenset(pre_pos),
        pre_neg=frozenset(pre_neg),
        add=frozenset(add),
        delete=frozenset(delete),
        cost=cost,
        tier=schema.tier,
    )


def literal_holds(lit: Literal, state: frozenset[Atom]) -> bool:
    """Whether a ground literal holds in ``state`` (closed world)."""
    return (lit.atom in state) == lit.positive
