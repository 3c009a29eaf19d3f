"""ADL at grounding: quantifiers, disjunctions and conditional effects made STRIPS.

:func:`compile_adl` rewrites a problem the way Fast Downward's translator does,
before grounding, so that the search never interprets a formula:

* ``forall`` in a precondition or a goal becomes the conjunction of its
  instances over the objects of the variable's type;
* ``exists`` in a precondition or a goal becomes extra, *hidden* parameters
  of the action (they are bound by grounding like the others, and are no
  arguments of the action in a plan);
* the precondition is put in disjunctive normal form and an action whose
  precondition has several disjuncts is split into one schema per disjunct,
  all with the action's name;
* conditional effects: the variables of a ``forall`` effect are expanded over
  the objects, and a condition with several disjuncts gives one conditional
  effect per disjunct (with the same effect); grounding turns each into a
  ground ``(condition, effect)`` pair that the successor function applies;
* a goal beyond a conjunction of literals is reached by a synthetic action of
  cost 0, :data:`GOAL_ACTION`, whose precondition is the goal and which adds
  the fact :data:`GOAL_FACT`; the planner drops it from its plans;
* the rules of derived predicates (``Domain.axioms``) become schemas named
  :data:`AXIOM_PREFIX` + the predicate, of cost 0, one per disjunct of their
  condition (existential variables as hidden parameters), that add the derived
  atom: grounding makes them the task's axioms, never operators.

:func:`apply_step` gives the semantics that ``validate`` checks and that plans
are built from: it evaluates the original formulas in a state and returns the
step as a STRIPS action *in that context* (preconditions: the literals that
witness the formula; for each conditional effect, its condition and effect
when it fires, or one literal that keeps it from firing when it does not).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from itertools import product

from plansmith.errors import Location, UnsupportedFeatureError
from plansmith.model import (
    ROOT_TYPE,
    ActionSchema,
    Atom,
    Condition,
    ConditionalEffect,
    Domain,
    Equality,
    Formula,
    GoalPart,
    GroundAction,
    Literal,
    Number,
    Problem,
    TypedName,
)

__all__ = [
    "AXIOM_PREFIX",
    "GOAL_ACTION",
    "GOAL_FACT",
    "MAX_DISJUNCTS",
    "apply_step",
    "compile_adl",
    "goal_holds",
    "goal_witness",
    "needs_compiling",
]

AXIOM_PREFIX = "__derive__ "
GOAL_ACTION = "__goal__"
GOAL_FACT = "__goal-reached__"
MAX_DISJUNCTS = 4096

Sub = Mapping[str, str]
Disjunct = tuple[tuple[Condition, ...], tuple[TypedName, ...]]  # literals, existential variables
Objects = Callable[[str], tuple[str, ...]]


def needs_compiling(problem: Problem) -> bool:
    domain = problem.domain
    return bool(problem.goal_formula or domain.axioms) or any(a.adl for a in domain.actions)


def objects_of(problem: Problem) -> Objects:
    """The objects (constants first) of each type, subtypes included."""
    types = problem.domain.types
    first: dict[str, str] = {}
    for obj in problem.all_objects:
        first.setdefault(obj.name, obj.type)
    cache: dict[str, tuple[str, ...]] = {}

    def objects(type_name: str) -> tuple[str, ...]:
        if type_name not in cache:
            cache[type_name] = tuple(
                n
                for n, t in first.items()
                if type_name == ROOT_TYPE or types.is_subtype(t, type_name)
            )
        return cache[type_name]

    return objects


# -- compiling ---------------------------------------------------------------------------


class _Compiler:
    def __init__(self, problem: Problem) -> None:
        self.objects = objects_of(problem)
        self.fresh = 0

    def dnf(
        self, part: GoalPart, sub: Sub, *, lift: bool, where: Location | None
    ) -> list[Disjunct]:
        """``part`` under ``sub`` as disjuncts; ``lift``: existential variables become
        hidden parameters (else they are expanded over the objects)."""
        if isinstance(part, Literal):
            atom = Atom(part.atom.predicate, tuple(sub.get(t, t) for t in part.atom.args))
            return [((Literal(atom, part.positive, part.loc),), ())]
        if isinstance(part, Equality):
            left, right = sub.get(part.left, part.left), sub.get(part.right, part.right)
            if not left.startswith("?") and not right.startswith("?"):
                return [((), ())] if (left == right) == part.positive else []
            return [((Equality(left, right, part.positive, part.loc),), ())]
        if part.kind == "or":
            out: list[Disjunct] = []
            for p in part.parts:
                out += self.dnf(p, sub, lift=lift, where=where)
                self._cap(len(out), where)
            return out
        if part.kind == "and":
            return self._all([(p, sub) for p in part.parts], lift=lift, where=where)
        if part.kind == "forall":
            subs = [
                {**sub, **{v.name: o for v, o in zip(part.variables, combo, strict=True)}}
                for combo in product(*(self.objects(v.type) for v in part.variables))
            ]
            return self._all([(p, s) for s in subs for p in part.parts], lift=lift, where=where)
        # exists
        if lift:
            names: dict[str, str] = {}
            fresh: list[TypedName] = []
            for v in part.variables:
                self.fresh += 1
                names[v.name] = f"?{v.name[1:]}-{self.fresh}"
                fresh.append(TypedName(names[v.name], v.type, v.loc))
            inner = self._all([(p, {**sub, **names}) for p in part.parts], lift=lift, where=where)
            return [(lits, (*tuple(fresh), *ex)) for lits, ex in inner]
        out = []
        for combo in product(*(self.objects(v.type) for v in part.variables)):
            s = {**sub, **{v.name: o for v, o in zip(part.variables, combo, strict=True)}}
            out += self._all([(p, s) for p in part.parts], lift=lift, where=where)
            self._cap(len(out), where)
        return out

    def _all(
        self, parts: Sequence[tuple[GoalPart, Sub]], *, lift: bool, where: Location | None
    ) -> list[Disjunct]:
        out: list[Disjunct] = [((), ())]
        for p, s in parts:
            options = self.dnf(p, s, lift=lift, where=where)
            out = [(a + b, x + y) for a, x in out for b, y in options]
            self._cap(len(out), where)
            if not out:
                return out
        return out

    def _cap(self, size: int, where: Location | None) -> None:
        if size > MAX_DISJUNCTS:
            raise UnsupportedFeatureError(
                f"unsupported PDDL feature: a condition with more than {MAX_DISJUNCTS} "
                "disjuncts once its quantifiers are expanded over the problem's objects",
                location=where,
                hint="rewrite the condition with fewer 'or'/'imply' under 'forall', or split "
                "the action",
            )

    def schemas(self, schema: ActionSchema) -> list[ActionSchema]:
        conditional = tuple(c for ce in schema.conditional for c in self.conditional(ce, schema))
        base = replace(schema, formula=(), conditional=conditional)
        if not schema.formula:
            return [base]
        disjuncts = self._all([(f, {}) for f in schema.formula], lift=True, where=schema.loc)
        out: list[ActionSchema] = []
        for lits, hidden in disjuncts:
            out.append(
                replace(
                    base,
                    parameters=schema.parameters + hidden,
                    precondition=schema.precondition + lits,
                    hidden=len(hidden),
                )
            )
        return out

    def conditional(self, ce: ConditionalEffect, schema: ActionSchema) -> list[ConditionalEffect]:
        out: list[ConditionalEffect] = []
        for combo in product(*(self.objects(v.type) for v in ce.variables)):
            sub = {v.name: o for v, o in zip(ce.variables, combo, strict=True)}
            effect = tuple(
                Literal(
                    Atom(e.atom.predicate, tuple(sub.get(t, t) for t in e.atom.args)), e.positive
                )
                for e in ce.effect
            )
            for lits, _ in self._all([(c, sub) for c in ce.condition], lift=False, where=ce.loc):
                out.append(ConditionalEffect((), lits, effect, ce.loc))
            self._cap(len(out), schema.loc)
        return out


def compile_adl(problem: Problem) -> Problem:
    """``problem`` over a domain of schemas without formulas (see the module docstring)."""
    compiler = _Compiler(problem)
    domain = problem.domain
    actions = [s for a in domain.actions for s in compiler.schemas(a)]
    goal = problem.goal
    if problem.goal_formula:
        disjuncts = compiler._all(
            [(f, {}) for f in problem.goal_formula], lift=True, where=problem.loc
        )
        reached = Literal(Atom(GOAL_FACT, ()))
        for lits, hidden in disjuncts:
            actions.append(
                ActionSchema(
                    name=GOAL_ACTION,
                    parameters=hidden,
                    precondition=problem.goal + lits,
                    effect=(reached,),
                    cost=0,
                    hidden=len(hidden),
                )
            )
        goal = (reached,)
    for axiom in domain.axioms:
        head = Literal(Atom(axiom.name, tuple(p.name for p in axiom.parameters)))
        conditions: list[tuple[GoalPart, Sub]] = [
            (c, {}) for c in (*axiom.precondition, *axiom.formula)
        ]
        for lits, hidden in compiler._all(conditions, lift=True, where=axiom.loc):
            actions.append(
                ActionSchema(
                    name=AXIOM_PREFIX + axiom.name,
                    parameters=axiom.parameters + hidden,
                    precondition=lits,
                    effect=(head,),
                    cost=0,
                    loc=axiom.loc,
                    hidden=len(hidden),
                )
            )
    compiled = Domain(
        name=domain.name,
        types=domain.types,
        constants=domain.constants,
        predicates=domain.predicates,
        functions=domain.functions,
        actions=tuple(actions),
        requirements=domain.requirements,
        source=domain.source,
        axioms=domain.axioms,
    )
    return replace(problem, domain=compiled, goal=goal, goal_formula=())


# -- semantics ---------------------------------------------------------------------------


def _witness(
    part: GoalPart, sub: Sub, state: frozenset[Atom] | set[Atom], objects: Objects
) -> list[Literal] | None:
    """Ground literals true in ``state`` that make ``part`` hold, or None if it does not."""
    if isinstance(part, Literal):
        atom = Atom(part.atom.predicate, tuple(sub.get(t, t) for t in part.atom.args))
        return [Literal(atom, part.positive)] if (atom in state) == part.positive else None
    if isinstance(part, Equality):
        left, right = sub.get(part.left, part.left), sub.get(part.right, part.right)
        return [] if (left == right) == part.positive else None
    if part.kind in ("and", "or"):
        out: list[Literal] = []
        for p in part.parts:
            w = _witness(p, sub, state, objects)
            if part.kind == "or" and w is not None:
                return w
            if part.kind == "and":
                if w is None:
                    return None
                out += w
        return out if part.kind == "and" else None
    combos = product(*(objects(v.type) for v in part.variables))
    out = []
    for combo in combos:
        s = {**sub, **{v.name: o for v, o in zip(part.variables, combo, strict=True)}}
        w = _witness(Formula("and", part.parts), s, state, objects)
        if part.kind == "exists" and w is not None:
            return w
        if part.kind == "forall":
            if w is None:
                return None
            out += w
    return out if part.kind == "forall" else None


def goal_holds(problem: Problem, state: frozenset[Atom] | set[Atom]) -> list[Formula]:
    """The parts of ``problem.goal_formula`` that do not hold in ``state``."""
    objects = objects_of(problem)
    return [f for f in problem.goal_formula if _witness(f, {}, state, objects) is None]


def goal_witness(problem: Problem, state: frozenset[Atom] | set[Atom]) -> list[Literal]:
    """Literals true in ``state`` that make ``problem.goal_formula`` hold (empty when it
    has none, or does not hold): what orderings must keep true for the goal."""
    objects = objects_of(problem)
    out: list[Literal] = []
    for f in problem.goal_formula:
        out += _witness(f, {}, state, objects) or []
    return out


def apply_step(
    schema: ActionSchema,
    args: Sequence[str],
    cost: Number,
    state: frozenset[Atom] | set[Atom],
    objects: Objects,
    *,
    expand: Callable[[Literal], Sequence[Literal]] | None = None,
) -> GroundAction | None:
    """The step as a STRIPS action in ``state`` (see the module docstring), or None
    if its precondition does not hold there.

    With derived predicates, ``state`` holds the derived atoms too, and ``expand``
    replaces a literal true in it by literals of basic atoms that make it hold
    (:meth:`plansmith.planning._derived.Derivation.expand`): the action's
    preconditions are then basic atoms only, as orderings need."""
    sub = {p.name: a for p, a in zip(schema.parameters, args, strict=True)}
    pre_pos: set[Atom] = set()
    pre_neg: set[Atom] = set()
    for cond in (*schema.precondition, *schema.formula):
        w = _witness(cond, sub, state, objects)
        if w is None:
            return None
        for lit in w:
            (pre_pos if lit.positive else pre_neg).add(lit.atom)
    add: set[Atom] = set()
    delete: set[Atom] = set()

    def effect(lits: Sequence[Literal], s: Sub) -> None:
        for e in lits:
            atom = Atom(e.atom.predicate, tuple(s.get(t, t) for t in e.atom.args))
            (add if e.positive else delete).add(atom)

    effect(schema.effect, sub)
    for ce in schema.conditional:
        for combo in product(*(objects(v.type) for v in ce.variables)):
            s = {**sub, **{v.name: o for v, o in zip(ce.variables, combo, strict=True)}}
            w = _witness(Formula("and", ce.condition), s, state, objects)
            if w is not None:
                for lit in w:
                    (pre_pos if lit.positive else pre_neg).add(lit.atom)
                effect(ce.effect, s)
            else:
                blocker = _blocker(ce.condition, s, state, objects)
                if blocker is not None:
                    (pre_pos if blocker.positive else pre_neg).add(blocker.atom)
    if expand is not None:
        pos: set[Atom] = set()
        neg: set[Atom] = set()
        for atom, positive in [(a, True) for a in pre_pos] + [(a, False) for a in pre_neg]:
            for lit in expand(Literal(atom, positive)):
                (pos if lit.positive else neg).add(lit.atom)
        pre_pos, pre_neg = pos, neg
    return GroundAction(
        name=schema.name,
        args=tuple(args),
        pre_pos=frozenset(pre_pos),
        pre_neg=frozenset(pre_neg),
        add=frozenset(add),
        delete=frozenset(delete - add),
        cost=cost,
        tier=schema.tier,
    )


def _blocker(
    condition: Sequence[GoalPart], sub: Sub, state: frozenset[Atom] | set[Atom], objects: Objects
) -> Literal | None:
    """A ground literal true in ``state`` that keeps a conjunction of literals false
    (None when the condition is richer: then no single literal is kept)."""
    for part in condition:
        if isinstance(part, Literal):
            atom = Atom(part.atom.predicate, tuple(sub.get(t, t) for t in part.atom.args))
            if (atom in state) != part.positive:
                return Literal(atom, not part.positive)
    return None
