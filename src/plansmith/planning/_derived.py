"""Derived predicates in a state of atoms: what ``validate`` and plan building read.

:class:`DerivedRules` holds a problem's ``(:derived ...)`` rules, each condition
put in disjunctive normal form (existential variables become extra variables of
the rule, as for action preconditions). :meth:`DerivedRules.derive` closes a
state of basic atoms under the rules, stratum by stratum, to the least
fixpoint (Fast Downward's semantics, and VAL's): each stratum's rules are
applied until nothing new is derived, a negated derived atom of a lower
stratum being false when that stratum did not derive it.

Plans are DAGs of STRIPS actions whose orderings come from the atoms each step
needs; a derived atom is made by no step. :meth:`Derivation.expand` therefore
replaces a literal on a derived atom, true in the state, by literals on basic
atoms that keep it true: for an atom, those of the rule instance that first
derived it (recursively: a well-founded derivation); for a negated atom, for
every instance of every rule of its predicate, one literal that keeps that
instance false, a derived atom rather than a basic one (recursively through
derived atoms; atoms met again on the way are left out, as they stay false
together: an unfounded set).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import product

from plansmith.model import (
    Atom,
    Condition,
    Equality,
    GoalPart,
    Literal,
    Problem,
    TypedName,
    axiom_strata,
)
from plansmith.planning._adl import _Compiler, goal_witness, objects_of

__all__ = ["Derivation", "DerivedRules", "closed", "derived_rules", "plan_goal"]

Sub = dict[str, str]


class _Rule:
    """One disjunct of a rule: ``head`` holds for a binding of ``variables`` (the
    head's parameters first) under which every literal of ``body`` holds."""

    __slots__ = ("body", "head", "negative", "positive", "variables")

    def __init__(
        self, head: Atom, variables: tuple[TypedName, ...], body: tuple[Condition, ...]
    ) -> None:
        self.head = head
        self.variables = variables
        self.body = body
        self.positive = [c for c in body if isinstance(c, Literal) and c.positive]
        self.negative = [c for c in body if not (isinstance(c, Literal) and c.positive)]


def derived_rules(problem: Problem) -> DerivedRules | None:
    """The rules of ``problem``'s derived predicates, or None when it has none."""
    return DerivedRules(problem) if problem.domain.axioms else None


def closed(problem: Problem, state: set[Atom]) -> set[Atom]:
    """``state`` with the derived atoms that hold in it (``state`` itself without rules)."""
    rules = derived_rules(problem)
    return state if rules is None else rules.derive(state).atoms


def plan_goal(problem: Problem, final: set[Atom]) -> list[Literal]:
    """The goal's literals, with a witness of its formula, that ``final`` (a state of
    basic atoms that satisfies the goal) makes true: what a plan's orderings must keep;
    on basic atoms only (derived literals expanded)."""
    rules = derived_rules(problem)
    goal = [c for c in problem.goal if isinstance(c, Literal)]
    if rules is None:
        return goal + goal_witness(problem, final) if problem.goal_formula else goal
    derivation = rules.derive(final)
    return derivation.expand_all([*goal, *goal_witness(problem, derivation.atoms)])


class DerivedRules:
    """A problem's derived predicates, by stratum (see the module docstring)."""

    def __init__(self, problem: Problem) -> None:
        domain = problem.domain
        self.derived = domain.derived
        strata = axiom_strata(domain.axioms)
        self.objects = objects_of(problem)
        compiler = _Compiler(problem)
        self.by_predicate: dict[str, list[_Rule]] = {}
        layers: dict[int, list[_Rule]] = {}
        for axiom in domain.axioms:
            head = Atom(axiom.name, tuple(p.name for p in axiom.parameters))
            conditions: list[tuple[GoalPart, Sub]] = [
                (c, {}) for c in (*axiom.precondition, *axiom.formula)
            ]
            for lits, hidden in compiler._all(conditions, lift=True, where=axiom.loc):
                rule = _Rule(head, axiom.parameters + hidden, lits)
                self.by_predicate.setdefault(axiom.name, []).append(rule)
                layers.setdefault(strata[axiom.name], []).append(rule)
        self.strata = [layers[k] for k in sorted(layers)]
        self._members: dict[str, frozenset[str]] = {}

    def of_type(self, type_name: str) -> frozenset[str]:
        if type_name not in self._members:
            self._members[type_name] = frozenset(self.objects(type_name))
        return self._members[type_name]

    def derive(self, state: Iterable[Atom]) -> Derivation:
        """The state closed under the rules (basic atoms of ``state`` kept as they are;
        derived atoms in it are ignored)."""
        atoms = {a for a in state if a.predicate not in self.derived}
        support: dict[Atom, tuple[Condition, ...]] = {}
        for layer in self.strata:
            while True:
                new: dict[Atom, tuple[Condition, ...]] = {}
                index = _index(atoms)
                for rule in layer:
                    for sub in self._matches(rule, atoms, index):
                        head = _ground(rule.head, sub)
                        if head not in atoms and head not in new:
                            new[head] = tuple(_ground_condition(c, sub) for c in rule.body)
                if not new:
                    break
                atoms.update(new)
                support.update(new)
        return Derivation(self, atoms, support)

    def _matches(
        self, rule: _Rule, atoms: set[Atom], index: dict[str, list[Atom]]
    ) -> Iterator[Sub]:
        """The bindings of the rule's variables under which its body holds in ``atoms``."""
        variables = rule.variables

        def join(i: int, sub: Sub) -> Iterator[Sub]:
            if i < len(rule.positive):
                pattern = rule.positive[i].atom
                for atom in index.get(pattern.predicate, ()):
                    bound = _unify(pattern.args, atom.args, sub)
                    if bound is not None:
                        yield from join(i + 1, bound)
                return
            if not all(sub[v.name] in self.of_type(v.type) for v in variables if v.name in sub):
                return
            free = [v for v in variables if v.name not in sub]
            for combo in product(*(self.objects(v.type) for v in free)):
                full = {**sub, **{v.name: o for v, o in zip(free, combo, strict=True)}}
                if all(_holds(_ground_condition(c, full), atoms) for c in rule.negative):
                    yield full

        return join(0, {})


class Derivation:
    """A state closed under the derived predicates' rules, and how each derived atom
    was first derived (the ground body of its rule)."""

    def __init__(
        self,
        rules: DerivedRules,
        atoms: set[Atom],
        support: dict[Atom, tuple[Condition, ...]],
    ) -> None:
        self.rules = rules
        self.atoms = atoms
        self.support = support
        self._positive: dict[Atom, list[Literal]] = {}

    def expand(self, lit: Literal) -> list[Literal]:
        """Literals of basic atoms, true in the state, that make ``lit`` (true in the
        state) hold; ``[lit]`` for a literal of a basic atom."""
        if lit.atom.predicate not in self.rules.derived:
            return [lit]
        if lit.positive:
            return self._why(lit.atom)
        out: list[Literal] = []
        self._why_not(lit.atom, set(), out)
        return list(dict.fromkeys(out))

    def expand_all(self, lits: Iterable[Literal]) -> list[Literal]:
        return list(dict.fromkeys(x for lit in lits for x in self.expand(lit)))

    def _why(self, atom: Atom) -> list[Literal]:
        if atom not in self._positive:
            out: list[Literal] = []
            for c in self.support[atom]:
                if isinstance(c, Literal):
                    out += self.expand(c)
            self._positive[atom] = list(dict.fromkeys(out))
        return self._positive[atom]

    def _why_not(self, atom: Atom, seen: set[Atom], out: list[Literal]) -> None:
        """Collect in ``out`` what keeps every instance of every rule of ``atom`` false."""
        if atom in seen:
            return
        seen.add(atom)
        derived, rules = self.rules.derived, self.rules
        for rule in rules.by_predicate.get(atom.predicate, ()):
            sub = _unify(rule.head.args, atom.args, {})
            n = len(rule.head.args)
            if sub is None or not all(
                sub[v.name] in rules.of_type(v.type) for v in rule.variables[:n]
            ):
                continue
            hidden = rule.variables[n:]
            for combo in product(*(rules.objects(v.type) for v in hidden)):
                full = {**sub, **{v.name: o for v, o in zip(hidden, combo, strict=True)}}
                false = [
                    g for c in rule.body if not _holds(g := _ground_condition(c, full), self.atoms)
                ]
                if any(isinstance(g, Equality) for g in false):
                    continue  # never holds: nothing to keep
                g = min(false, key=lambda c: _blocker_rank(c, derived))
                assert isinstance(g, Literal)  # the body holds otherwise, yet atom is false
                keep = Literal(g.atom, not g.positive)  # true in the state
                if keep.atom.predicate not in derived:
                    out.append(keep)
                elif keep.positive:
                    out += self._why(keep.atom)
                else:
                    self._why_not(keep.atom, seen, out)


def _blocker_rank(c: Condition, derived: frozenset[str]) -> int:
    """Which false literal keeps a rule instance false, best first: a derived atom (its
    own rules keep it false, often with the atoms being explained), a basic literal,
    the negation of a derived atom (which needs a whole derivation)."""
    assert isinstance(c, Literal)
    if c.atom.predicate not in derived:
        return 1
    return 0 if c.positive else 2


def _index(atoms: Iterable[Atom]) -> dict[str, list[Atom]]:
    out: dict[str, list[Atom]] = {}
    for a in atoms:
        out.setdefault(a.predicate, []).append(a)
    return out


def _unify(pattern: Sequence[str], args: Sequence[str], sub: Sub) -> Sub | None:
    out = sub
    for term, value in zip(pattern, args, strict=True):
        if term.startswith("?"):
            bound = out.get(term)
            if bound is None:
                if out is sub:
                    out = dict(sub)
                out[term] = value
            elif bound != value:
                return None
        elif term != value:
            return None
    return out


def _ground(atom: Atom, sub: Sub) -> Atom:
    return Atom(atom.predicate, tuple(sub.get(t, t) for t in atom.args))


def _ground_condition(c: Condition, sub: Sub) -> Condition:
    if isinstance(c, Equality):
        return Equality(sub.get(c.left, c.left), sub.get(c.right, c.right), c.positive)
    return Literal(_ground(c.atom, sub), c.positive)


def _holds(c: Condition, atoms: set[Atom]) -> bool:
    if isinstance(c, Equality):
        return (c.left == c.right) == c.positive
    return (c.atom in atoms) == c.positive
