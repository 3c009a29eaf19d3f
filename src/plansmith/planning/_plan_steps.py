"""Turn a plan's steps back into ground actions of its domain, reporting what does not fit."""

from __future__ import annotations

from dataclasses import dataclass

from plansmith.errors import Location, PlanInvalidError
from plansmith.model import (
    Atom,
    GroundAction,
    Number,
    Plan,
    Problem,
    Step,
    StepArg,
    TypedName,
    TypeHierarchy,
    canonical_json,
)
from plansmith.planning._instantiate import function_table, instantiate

__all__ = ["PlanIssue", "ground_steps", "object_args"]


@dataclass(frozen=True, slots=True)
class PlanIssue:
    """One thing wrong with a plan: a kind, a message, where (a step id) and a hint.

    Kinds: ``domain-hash``, ``problem-hash``, ``duplicate-id``, ``self-after``,
    ``unknown-after``, ``cycle``, ``decomposition``, ``unknown-action``,
    ``arity``, ``argument``, ``equality``, ``cost``, ``tier``, ``precondition``,
    ``goal``, ``unsafe-order``.
    """

    kind: str
    message: str
    location: Location
    hint: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


def object_args(step: Step) -> tuple[str, ...]:
    """The step's arguments as object names; PlanInvalidError if one is not a string.

    Steps of declarative (PDDL, YAML) domains always name objects; only plans of
    Python-function domains carry numbers, booleans or null.
    """
    names: list[str] = []
    for n, arg in enumerate(step.args, start=1):
        if not isinstance(arg, str):
            raise PlanInvalidError(
                f"step {step.id} {step}: argument {n} is {canonical_json(arg)}, not an object name",
                location=Location(step=step.id),
                hint="actions of PDDL and YAML domains take objects of the problem",
            )
        names.append(arg)
    return tuple(names)


def ground_steps(plan: Plan, problem: Problem) -> tuple[list[GroundAction | None], list[PlanIssue]]:
    """The ground action of each step (None where it does not fit), and the issues found."""
    objects = {o.name: o.type for o in problem.all_objects}
    functions = function_table(problem)
    ground: list[GroundAction | None] = []
    issues: list[PlanIssue] = []
    for step in plan.steps:
        result = _ground(step, problem, objects, functions)
        if isinstance(result, PlanIssue):
            ground.append(None)
            issues.append(result)
        else:
            ground.append(result)
            issues += _declared(step, result)
    return ground, issues


def _ground(
    step: Step,
    problem: Problem,
    objects: dict[str, str],
    functions: dict[Atom, Number],
) -> GroundAction | PlanIssue:
    where = Location(step=step.id)
    domain = problem.domain
    schema = domain.action(step.action)
    if schema is None:
        known = ", ".join(a.name for a in domain.actions[:12]) or "none"
        return PlanIssue(
            "unknown-action",
            f"step {step.id} uses action {step.action!r}, which domain {domain.name!r} "
            "does not define",
            where,
            f"known actions: {known}",
        )
    if len(step.args) != schema.arity:
        params = ", ".join(f"{p.name}: {p.type}" for p in schema.parameters)
        return PlanIssue(
            "arity",
            f"step {step.id} gives {step.action} {len(step.args)} argument(s), "
            f"but it takes {schema.arity}",
            where,
            f"{step.action} takes ({params})",
        )
    names: list[str] = []
    for param, arg in zip(schema.parameters, step.args, strict=True):
        name = _argument(step, arg, param, objects, domain.types)
        if isinstance(name, PlanIssue):
            return name
        names.append(name)
    action = instantiate(schema, names, functions)
    if action is None:
        return PlanIssue(
            "equality",
            f"step {step.id} {step}: an equality precondition of {step.action} fails "
            "for these arguments",
            where,
            "check the (in)equality conditions of the action against the arguments",
        )
    return action


def _argument(
    step: Step, arg: StepArg, param: TypedName, objects: dict[str, str], types: TypeHierarchy
) -> str | PlanIssue:
    """The object ``arg`` names, or the issue with it."""
    want = param.type
    if not isinstance(arg, str):
        return PlanIssue(
            "argument",
            f"step {step.id} {step}: {canonical_json(arg)} is not an object name "
            f"(parameter {param.name} of {step.action} needs a {want})",
            Location(step=step.id),
            "actions of PDDL and YAML domains take objects of the problem, not numbers",
        )
    if arg not in objects:
        return PlanIssue(
            "argument",
            f"step {step.id} {step}: {arg!r} is not an object of the problem",
            Location(step=step.id),
            "arguments must be objects of the problem or constants of the domain",
        )
    if not types.is_subtype(objects[arg], want):
        return PlanIssue(
            "argument",
            f"step {step.id} {step}: {arg} is a {objects[arg]}, but parameter {param.name} "
            f"of {step.action} needs a {want}",
            Location(step=step.id),
            f"pass an object of type {want}",
        )
    return arg


def _declared(step: Step, action: GroundAction) -> list[PlanIssue]:
    """The step's recorded cost and tier must be the domain's."""
    out: list[PlanIssue] = []
    if step.cost != action.cost:
        out.append(
            PlanIssue(
                "cost",
                f"step {step.id} {step} says cost {step.cost}, but the domain gives {action.cost}",
                Location(step=step.id),
                "a plan records the costs its domain gives; plan again",
            )
        )
    if step.tier != action.tier:
        out.append(
            PlanIssue(
                "tier",
                f"step {step.id} {step} says tier {step.tier.value}, but the domain gives "
                f"{action.tier.value}",
                Location(step=step.id),
                "the tier decides who must approve a step; plan again rather than edit it",
            )
        )
    return out
