"""The YAML/JSON problem reader: text and its domain to a checked, located :class:`Problem`.

A problem names its domain, declares typed objects, lists the true ground atoms
of the initial state (closed world), and gives a classical goal (ground
literals), an HTN task list (ground task calls), or both. Every mistake is a
:class:`ProblemError` (or a :class:`ParseError` for syntax) at file:line:column.
"""

from __future__ import annotations

from plansmith.errors import ProblemError
from plansmith.formats._yaml_items import items
from plansmith.formats._yaml_node import (
    LOOSE_NAME,
    Source,
    name,
    read_top,
    value_of,
)
from plansmith.formats._yaml_scope import Scope, Vocabulary, condition, task_call, typed_names
from plansmith.model import Atom, Domain, Literal, Problem

__all__ = ["read_yaml_problem"]

_PROBLEM_KEYS = ("problem", "domain", "objects", "init", "goal", "tasks", "$schema")


def _vocabulary(domain: Domain) -> Vocabulary:
    vocab = Vocabulary(domain.types)
    vocab.constants = {c.name: c for c in domain.constants}
    vocab.predicates = {p.name: p for p in domain.predicates}
    vocab.callees = {a.name: ("action", a.parameters) for a in domain.actions}
    vocab.callees |= {t.name: ("task", t.parameters) for t in domain.tasks}
    return vocab


def read_yaml_problem(
    text: str, domain: Domain, *, file: str | None = None, json_syntax: bool = False
) -> Problem:
    """Read a problem over ``domain`` written in YAML (or JSON, with ``json_syntax``)."""
    src = Source(file, ProblemError)
    hint = "start it with `problem: NAME` and `domain: NAME`, then objects, init and goal"
    required = ("problem", "domain")
    root, top = read_top(
        src, text, "problem", _PROBLEM_KEYS, required, json_syntax=json_syntax, hint=hint
    )
    problem_name = name(src, top["problem"][1], "the problem name", LOOSE_NAME)
    domain_node = top["domain"][1]
    domain_name = name(src, domain_node, "the domain name", LOOSE_NAME)
    if domain_name != domain.name:
        raise src.fail(
            domain_node,
            f"this problem is for domain {domain_name!r}, but the domain given is {domain.name!r}",
            hint=f"pass the domain file of {domain_name!r}, or write `domain: {domain.name}`",
        )
    if "goal" not in top and "tasks" not in top:
        raise src.fail(
            root,
            f"problem {problem_name} has neither a goal nor tasks",
            hint="add `goal: [pred(obj), ...]` (classical) or `tasks: [task(obj), ...]` (HTN)",
        )
    vocab = _vocabulary(domain)
    taken = {c.name: "a constant of the domain" for c in domain.constants}
    objects = typed_names(src, domain.types, value_of(top, "objects"), "objects", taken)
    terms = {c.name: c.type for c in (*domain.constants, *objects)}
    scope = Scope(terms, noun="object", declare="declare it under `objects:` (name: type)")
    init: set[Atom] = set()
    for item in items(src, value_of(top, "init"), "init"):
        literal = condition(src, vocab, scope, item, "init", true_atom=True)
        assert isinstance(literal, Literal)
        init.add(literal.atom)
    goal = tuple(
        condition(src, vocab, scope, item, "the goal")
        for item in items(src, value_of(top, "goal"), "the goal")
    )
    tasks = tuple(
        task_call(src, vocab, scope, item, "the tasks")
        for item in items(src, value_of(top, "tasks"), "the tasks")
    )
    return Problem(
        name=problem_name,
        domain=domain,
        objects=objects,
        init=frozenset(init),
        goal=goal,
        tasks=tasks,
        source=file,
        loc=src.loc(top["problem"][0]),
    )
