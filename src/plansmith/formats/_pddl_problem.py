"""Read a PDDL problem into a :class:`~plansmith.model.Problem` over a given domain.

The problem is checked against the domain: its ``(:domain NAME)`` must name it
(the section may be left out), objects have declared types, init facts and
goal literals use declared predicates with the right arity and argument types.
``(= (f a b) 5)`` in the init gives a function value (action costs); the only
metric accepted is ``(:metric minimize (total-cost))``. A negative literal in
the init is redundant under the closed world and is skipped, unless it
contradicts a positive fact. Goals are conjunctions of literals and
(in)equalities, like preconditions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from plansmith.errors import ParseError, ProblemError
from plansmith.formats._pddl_action import TOTAL_COST
from plansmith.formats._pddl_common import (
    check_arity,
    expect_list,
    expect_name,
    group_sections,
    number_of,
    parse_define,
    parse_requirements,
    unsupported,
)
from plansmith.formats._pddl_lexer import Node, SList, Sym, read_sexpr
from plansmith.formats._pddl_logic import Scope, parse_atom, parse_goal
from plansmith.formats._pddl_types import ancestor_table, declare_names
from plansmith.model import Atom, Domain, Number, Problem

__all__ = ["parse_pddl_problem"]

_SECTIONS = (":domain", ":requirements", ":objects", ":init", ":goal", ":metric")
_REFUSED = {
    ":constraints": ("constraints", ":constraints"),
    ":length": ("plan length bounds (':length')", None),
}


def parse_pddl_problem(text: str, domain: Domain, file: str | None = None) -> Problem:
    """The problem that ``text`` defines over ``domain``; ``file`` is used in locations."""
    root = read_sexpr(text, file)
    name, sections = parse_define(root, "problem")
    by_key = group_sections(sections, "problem", _SECTIONS, _REFUSED, ProblemError)
    for section in by_key[":domain"]:
        _check_domain_name(section, domain)
    for section in by_key[":requirements"]:
        parse_requirements(section, ProblemError)
    ancestors = ancestor_table(domain.types)
    known = {c.name: c for c in domain.constants}
    objects = declare_names(
        [n for s in by_key[":objects"] for n in s.items[1:]],
        ancestors,
        known,
        kind="object",
        error=ProblemError,
    )
    scope = Scope(
        error=ProblemError,
        ancestors=ancestors,
        predicates={p.name: p for p in domain.predicates},
        functions={f.name: f for f in domain.functions},
        objects={o.name: o.type for o in known.values()},
        object_kind="object",
    )
    init_items = [n for s in by_key[":init"] for n in s.items[1:]]
    init, values = _init(init_items, replace(scope, where=" in the init", derived=domain.derived))
    goal, goal_formula = parse_goal(
        _goal(by_key[":goal"], root), replace(scope, where=" in the goal")
    )
    for section in by_key[":metric"]:
        _check_metric(section)
    return Problem(
        name=name.text,
        domain=domain,
        objects=tuple(objects),
        init=frozenset(init),
        goal=tuple(goal),
        goal_formula=tuple(goal_formula),
        function_values=tuple(sorted(values.items())),
        source=file,
        loc=root.loc,
    )


def _check_domain_name(section: SList, domain: Domain) -> None:
    if len(section.items) != 2:
        raise ParseError(
            "expected '(:domain NAME)'",
            location=section.loc,
            hint="name the domain this problem belongs to",
        )
    given = expect_name(section.items[1], "a domain name")
    # IPC files mix '-' and '_' in a name (visitall's problems name 'grid_visit_all'
    # for the domain 'grid-visit-all'): names that differ only so are the same
    if given.text.replace("_", "-") != domain.name.replace("_", "-"):
        raise ProblemError(
            f"the problem is for domain '{given.text}', but the domain is '{domain.name}'",
            location=given.loc,
            hint="pass the domain file this problem was written for, or fix '(:domain ...)'",
        )


def _init(items: Sequence[Node], scope: Scope) -> tuple[set[Atom], dict[Atom, Number]]:
    facts: set[Atom] = set()
    negated: dict[Atom, Node] = {}
    values: dict[Atom, Number] = {}
    for node in items:
        fact = expect_list(node, "an init fact")
        head = fact.items[0] if fact.items else None
        word = head.text if isinstance(head, Sym) else ""
        if word == "=":
            atom, value = _function_value(fact, scope)
            if values.get(atom, value) != value:
                raise ProblemError(
                    f"two values for {atom}: {values[atom]} and {value}",
                    location=fact.loc,
                    hint="give each function value once",
                )
            values[atom] = value
        elif word == "not":
            hint = "write '(not (pred arg ...))', or leave it out: the init is closed-world"
            check_arity(fact, 1, "one atom", hint)
            inner = expect_list(fact.items[1], "an atom")
            negated[parse_atom(inner, scope)] = inner
        elif word == "at" and _timed(fact):
            raise unsupported("timed initial literals ('at')", ":timed-initial-literals", fact)
        else:
            atom = parse_atom(fact, scope)
            if atom.predicate in scope.derived:
                raise ProblemError(
                    f"derived predicate '{atom.predicate}' cannot appear in the init",
                    location=fact.loc,
                    hint="its value follows from the domain's '(:derived ...)' rules; "
                    "give the atoms its rules use instead",
                )
            facts.add(atom)
    for atom, where in negated.items():
        if atom in facts:
            raise ProblemError(
                f"the init says both {atom} and not {atom}",
                location=where.loc,
                hint="remove one of them",
            )
    return facts, values


def _timed(fact: SList) -> bool:
    """Whether ``(at ...)`` is a timed initial literal ``(at 10 (p a))``, not a predicate."""
    return len(fact.items) > 1 and number_of(fact.items[1]) is not None


def _function_value(fact: SList, scope: Scope) -> tuple[Atom, Number]:
    hint = "write '(= (road-length a b) 5)'"
    check_arity(fact, 2, "a function and a number", hint, counted=" argument(s)")
    term = fact.items[1]
    if isinstance(term, Sym):
        raise unsupported("object equalities in the init", None, fact)
    if term.items and isinstance(term.items[0], Sym) and term.items[0].text == TOTAL_COST:
        if len(term.items) != 1:
            raise ProblemError(
                "'total-cost' takes no arguments",
                location=term.loc,
                hint="write '(= (total-cost) 0)'",
            )
        atom = Atom(TOTAL_COST)
    else:
        atom = parse_atom(term, scope, function=True)
    value = number_of(fact.items[2])
    if value is None:
        raise ProblemError(
            f"expected a number as the value of {atom}",
            location=fact.items[2].loc,
            hint="write '(= (road-length a b) 5)'",
        )
    if value < 0 and atom.predicate != TOTAL_COST:
        raise ProblemError(
            f"negative value {value} for {atom}",
            location=fact.items[2].loc,
            hint="functions give action costs here, and action costs must be zero or more",
        )
    return atom, value


def _goal(sections: list[SList], root: SList) -> Node:
    if not sections:
        raise ProblemError(
            "the problem has no goal",
            location=root.loc,
            hint="add '(:goal (and ...))'",
        )
    if len(sections) > 1 or len(sections[0].items) != 2:
        where = sections[1] if len(sections) > 1 else sections[0]
        raise ParseError(
            "expected exactly one '(:goal CONDITION)'",
            location=where.loc,
            hint="put all goal literals inside one '(:goal (and ...))'",
        )
    return sections[0].items[1]


def _check_metric(section: SList) -> None:
    items = section.items[1:]
    ok = (
        len(items) == 2
        and isinstance(items[0], Sym)
        and items[0].text == "minimize"
        and isinstance(items[1], SList)
        and len(items[1].items) == 1
        and isinstance(items[1].items[0], Sym)
        and items[1].items[0].text == TOTAL_COST
    )
    if not ok:
        raise unsupported("metrics other than '(:metric minimize (total-cost))'", None, section)
