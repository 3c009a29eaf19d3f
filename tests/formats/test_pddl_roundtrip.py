"""A generated domain and problem, printed as PDDL, read back as the same model."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from plansmith.formats._pddl import parse_pddl_domain, parse_pddl_problem
from plansmith.model import (
    ROOT_TYPE,
    ActionSchema,
    Atom,
    Condition,
    Domain,
    Equality,
    Literal,
    Number,
    Predicate,
    Problem,
    TypedName,
    TypeHierarchy,
)

# -- a small PDDL printer (the reader's inverse, for these tests only) ---------------------


def _typed(names: tuple[TypedName, ...]) -> str:
    return " ".join(f"{n.name} - {n.type}" for n in names)


def _atom(atom: Atom) -> str:
    return f"({' '.join([atom.predicate, *atom.args])})"


def _condition(cond: Condition) -> str:
    text = f"(= {cond.left} {cond.right})" if isinstance(cond, Equality) else _atom(cond.atom)
    return text if cond.positive else f"(not {text})"


def _sig(pred: Predicate) -> str:
    return f"({' '.join([pred.name, _typed(pred.parameters)])})"


def print_domain(domain: Domain, *, costs: bool) -> str:
    out = [f"(define (domain {domain.name})", f"  (:requirements {' '.join(domain.requirements)})"]
    out.append(f"  (:types {' '.join(f'{t} - {p}' for t, p in domain.types.parents)})")
    out.append(f"  (:constants {_typed(domain.constants)})")
    out.append(f"  (:predicates {' '.join(_sig(p) for p in domain.predicates)})")
    if domain.functions:
        out.append(f"  (:functions {' '.join(_sig(f) + ' - number' for f in domain.functions)})")
    for a in domain.actions:
        effect = [_condition(e) for e in a.effect]
        if costs:
            value = _atom(a.cost) if isinstance(a.cost, Atom) else str(a.cost)
            effect.append(f"(increase (total-cost) {value})")
        out.append(
            f"  (:action {a.name}\n    :parameters ({_typed(a.parameters)})\n"
            f"    :precondition (and {' '.join(_condition(c) for c in a.precondition)})\n"
            f"    :effect (and {' '.join(effect)}))"
        )
    return "\n".join(out) + ")\n"


def print_problem(problem: Problem) -> str:
    init = [_atom(a) for a in sorted(problem.init)]
    init += [f"(= {_atom(f)} {v})" for f, v in problem.function_values]
    return (
        f"(define (problem {problem.name}) (:domain {problem.domain.name})\n"
        f"  (:objects {_typed(problem.objects)})\n  (:init {' '.join(init)})\n"
        f"  (:goal (and {' '.join(_condition(c) for c in problem.goal)}))\n"
        "  (:metric minimize (total-cost)))\n"
    )


# -- strategies -----------------------------------------------------------------------------


def _fits(actual: str, slot: str, parents: dict[str, str], *, variable: bool) -> bool:
    def ancestors(t: str) -> set[str]:
        seen = {t, ROOT_TYPE}
        while t in parents:
            t = parents[t]
            seen.add(t)
        return seen

    return slot in ancestors(actual) or (variable and actual in ancestors(slot))


@st.composite
def domains(draw: st.DrawFn) -> tuple[Domain, bool]:
    parents: dict[str, str] = {}
    for i in range(draw(st.integers(0, 4))):
        parents[f"t{i}"] = draw(st.sampled_from([ROOT_TYPE, *parents]))
    types = [ROOT_TYPE, *parents]
    constants = tuple(
        TypedName(f"k{i}", draw(st.sampled_from(types))) for i in range(draw(st.integers(0, 3)))
    )

    def params(prefix: str, n: int) -> tuple[TypedName, ...]:
        return tuple(TypedName(f"?{prefix}{i}", draw(st.sampled_from(types))) for i in range(n))

    predicates = tuple(
        Predicate(f"p{i}", params("a", draw(st.integers(0, 3))))
        for i in range(draw(st.integers(1, 4)))
    )
    costs = draw(st.booleans())
    cost_fn = Predicate("len", params("a", draw(st.integers(0, 2))))
    functions = (Predicate("total-cost"), cost_fn) if costs else ()

    def args(slots: tuple[TypedName, ...], vars_: tuple[TypedName, ...]) -> tuple[str, ...] | None:
        out = []
        for slot in slots:
            fits = [v.name for v in vars_ if _fits(v.type, slot.type, parents, variable=True)]
            fits += [c.name for c in constants if _fits(c.type, slot.type, parents, variable=False)]
            if not fits:
                return None
            out.append(draw(st.sampled_from(fits)))
        return tuple(out)

    def literals(vars_: tuple[TypedName, ...], n: int) -> list[Literal]:
        out = []
        for _ in range(n):
            pred = draw(st.sampled_from(predicates))
            a = args(pred.parameters, vars_)
            if a is not None:
                out.append(Literal(Atom(pred.name, a), draw(st.booleans())))
        return out

    actions = []
    for i in range(draw(st.integers(0, 3))):
        ps = params("v", draw(st.integers(0, 3)))
        pre: list[Condition] = list(literals(ps, draw(st.integers(0, 3))))
        terms = [p.name for p in ps] + [c.name for c in constants]
        with_equality: bool = draw(st.booleans())
        if terms and with_equality:
            left, right = draw(st.sampled_from(terms)), draw(st.sampled_from(terms))
            pre.append(Equality(left, right, positive=draw(st.booleans())))
        cost: Number | Atom = 1
        if costs:
            fn_args = args(cost_fn.parameters, ps)
            use_fn = fn_args is not None and draw(st.booleans())
            cost = (
                Atom("len", fn_args) if use_fn and fn_args is not None else draw(st.integers(0, 9))
            )
        effect = tuple(literals(ps, draw(st.integers(0, 3))))
        actions.append(ActionSchema(f"act{i}", ps, tuple(pre), effect, cost))
    requirements = (":strips", ":typing", ":negative-preconditions", ":equality")
    domain = Domain(
        name=draw(st.sampled_from(["d", "my-domain", "x_1"])),
        types=TypeHierarchy.of(parents),
        constants=constants,
        predicates=predicates,
        functions=functions,
        actions=tuple(actions),
        requirements=requirements + ((":action-costs",) if costs else ()),
    )
    return domain, costs


@st.composite
def problems(draw: st.DrawFn) -> tuple[Problem, bool]:
    domain, costs = draw(domains())
    parents = dict(domain.types.parents)
    types = sorted(domain.types.names)
    objects = tuple(
        TypedName(f"o{i}", draw(st.sampled_from(types))) for i in range(draw(st.integers(0, 4)))
    )
    everything = domain.constants + objects

    def ground(pred: Predicate) -> Atom | None:
        out = []
        for slot in pred.parameters:
            fits = [o.name for o in everything if _fits(o.type, slot.type, parents, variable=False)]
            if not fits:
                return None
            out.append(draw(st.sampled_from(fits)))
        return Atom(pred.name, tuple(out))

    atoms = [
        ground(draw(st.sampled_from(domain.predicates))) for _ in range(draw(st.integers(0, 6)))
    ]
    init = frozenset(a for a in atoms if a is not None)
    goal = tuple(Literal(a, draw(st.booleans())) for a in atoms[:3] if a is not None)
    values: dict[Atom, Number] = {}
    for f in domain.functions:
        atom = ground(f)
        if atom is not None:
            values[atom] = draw(st.integers(0, 20))
    problem = Problem(
        name="prob",
        domain=domain,
        objects=objects,
        init=init,
        goal=goal,
        function_values=tuple(sorted(values.items())),
    )
    return problem, costs


# -- properties -----------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(generated=domains(), shout=st.booleans())
def test_printed_domain_reads_back_as_the_same_model(
    generated: tuple[Domain, bool], shout: bool
) -> None:
    domain, costs = generated
    text = print_domain(domain, costs=costs)
    if shout:  # PDDL is case-insensitive
        text = text.upper()
    assert parse_pddl_domain(text) == domain


@settings(max_examples=150, deadline=None)
@given(generated=problems())
def test_printed_problem_reads_back_as_the_same_model(generated: tuple[Problem, bool]) -> None:
    problem, costs = generated
    domain = parse_pddl_domain(print_domain(problem.domain, costs=costs))
    assert parse_pddl_problem(print_problem(problem), domain) == problem
