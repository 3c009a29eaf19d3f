"""What the HTN planner needs of a domain and a problem, checked before it starts.

The YAML reader checks the syntax and the vocabulary of the files it reads;
this checks what decomposition relies on, whatever built the model: every call
names an action or a task with the right number of arguments, every term of a
method is one of its variables or a constant, every task has a method, and the
problem's tasks name objects of the right types.
"""

from __future__ import annotations

from collections.abc import Iterator

from plansmith.errors import DomainError, Location, ProblemError
from plansmith.model import (
    Domain,
    Equality,
    Literal,
    Method,
    Ordered,
    Parallel,
    Problem,
    TaskCall,
    TaskSchema,
    TypedName,
)

__all__ = ["check_htn", "calls_of"]


def calls_of(network: Ordered) -> Iterator[TaskCall]:
    """Every task call of a network, in the order written."""
    for item in network.items:
        if isinstance(item, Parallel):
            for branch in item.branches:
                yield from calls_of(branch)
        else:
            yield item


def _signature(domain: Domain, name: str) -> tuple[str, tuple[TypedName, ...]] | None:
    action = domain.action(name)
    if action is not None:
        return "action", action.parameters
    task = domain.task(name)
    if task is not None:
        return "task", task.parameters
    return None


def _where(loc: Location | None, domain: Domain) -> Location | None:
    return loc or (Location(domain.source) if domain.source else None)


def check_htn(problem: Problem) -> None:
    """Raise DomainError or ProblemError (with the location) for what would break planning."""
    domain = problem.domain
    constants = {c.name for c in domain.constants}
    for task in domain.tasks:
        if not task.methods:
            raise DomainError(
                f"task {task.name} has no methods",
                location=_where(task.loc, domain),
                hint="give the task at least one method, or remove it",
            )
        for method in task.methods:
            _check_method(domain, task, method, constants)
    _check_problem_tasks(problem)


def _check_method(domain: Domain, task: TaskSchema, method: Method, constants: set[str]) -> None:
    what = f"method {method.name} of task {task.name}"
    variables = [p.name for p in (*task.parameters, *method.parameters)]
    twice = sorted({v for v in variables if variables.count(v) > 1})
    if twice:
        raise DomainError(
            f"{what} declares {twice[0]!r} twice",
            location=_where(method.loc, domain),
            hint="a method's parameters must differ from each other and from the task's",
        )
    scope = set(variables) | constants

    def term(name: str, loc: Location | None) -> None:
        if name not in scope:
            raise DomainError(
                f"{what} uses {name!r}, which is neither one of its parameters nor a constant",
                location=_where(loc or method.loc, domain),
                hint="declare it as a parameter of the method (bound by its precondition), "
                "or as a constant of the domain",
            )

    for cond in method.precondition:
        if isinstance(cond, Equality):
            term(cond.left, cond.loc)
            term(cond.right, cond.loc)
        elif isinstance(cond, Literal):
            for arg in cond.atom.args:
                term(arg, cond.loc)
    for call in calls_of(method.network):
        found = _signature(domain, call.name)
        if found is None:
            raise DomainError(
                f"{what} calls {call.name}, which is neither an action nor a task",
                location=_where(call.loc or method.loc, domain),
                hint="declare the action or the task, or fix the name",
            )
        kind, params = found
        if len(call.args) != len(params):
            raise DomainError(
                f"{what} calls {kind} {call.name} with {len(call.args)} argument(s); "
                f"it takes {len(params)}",
                location=_where(call.loc or method.loc, domain),
                hint=f"write {call.name}({', '.join(p.name for p in params)})",
            )
        for arg in call.args:
            term(arg, call.loc)


def _check_problem_tasks(problem: Problem) -> None:
    domain = problem.domain
    types = {o.name: o.type for o in problem.all_objects}
    where = Location(problem.source) if problem.source else None
    for call in problem.tasks:
        found = _signature(domain, call.name)
        loc = call.loc or where
        if found is None:
            raise ProblemError(
                f"task {call} is neither a task nor an action of domain {domain.name}",
                location=loc,
                hint="list tasks the domain declares under tasks:",
            )
        kind, params = found
        if len(call.args) != len(params):
            raise ProblemError(
                f"{kind} {call.name} takes {len(params)} argument(s), got {len(call.args)}",
                location=loc,
                hint=f"write {call.name}({', '.join(p.name for p in params)})",
            )
        for arg, param in zip(call.args, params, strict=True):
            if arg not in types:
                raise ProblemError(
                    f"{call} names {arg!r}, which is not an object of the problem",
                    location=loc,
                    hint="declare it under objects:",
                )
            if not domain.types.is_subtype(types[arg], param.type):
                raise ProblemError(
                    f"{call}: {arg!r} is a {types[arg]}, and {param.name} must be a {param.type}",
                    location=loc,
                    hint=f"pass an object of type {param.type}",
                )
