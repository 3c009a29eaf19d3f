"""Say why each step is in a plan: what it achieves, supplies and needs, and where it came from.

The causal links are read off the plan run in its topological order (the
plan's own order wherever the DAG allows), as ``build_plan`` derives them: a
precondition comes from the last step before it that made it true, or from the
initial state; an atom of a derived predicate from the domain's rules (a derived
goal also lists the basic atoms it rests on that steps made). Explanations assume
a valid plan (``validate`` it first); a plan whose steps do not fit the domain, or
whose ``after`` edges form a cycle, raises PlanInvalidError.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from plansmith.errors import Location, PlanInvalidError
from plansmith.model import Atom, DecompositionNode, GroundAction, Literal, Plan, Problem
from plansmith.planning._derived import derived_rules
from plansmith.planning._plan_graph import step_graph
from plansmith.planning._plan_steps import ground_steps

__all__ = ["explain"]

_INIT = "the initial state"
_RULES = "the domain's (:derived ...) rules"


@dataclass(slots=True)
class _Why:
    """What one step is for; filled in while the plan is replayed."""

    achieves: list[str] = field(default_factory=list)
    supplies: list[str] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)
    sources: set[int] = field(default_factory=set)


def explain(plan: Plan, problem: Problem) -> str:
    """A plain-text account of why each step of ``plan`` is there (deterministic)."""
    graph = step_graph(plan)
    ground, issues = ground_steps(plan, problem)
    if issues:
        raise PlanInvalidError(issues[0].message, location=issues[0].location, hint=issues[0].hint)
    if graph.order is None:
        first = plan.steps[graph.cycle[0]].id
        raise PlanInvalidError(
            "the plan's `after` edges form a cycle",
            location=Location(step=first),
            hint="run `plansmith validate` for details",
        )
    actions = [a for a in ground if a is not None]
    why = [_Why() for _ in actions]
    goal_lines = _trace(plan, problem, actions, graph.order, why)
    paths = _decomposition_paths(plan.decomposition)
    index = {s.id: i for i, s in enumerate(plan.steps)}
    noun = "step" if len(plan.steps) == 1 else "steps"
    lines = [
        f"Plan for problem {plan.problem} (domain {plan.domain}): "
        f"{len(plan.steps)} {noun}, total cost {plan.cost}.",
    ]
    if problem.goal:
        lines.append(f"Goal: {', '.join(str(c) for c in problem.goal)}")
    if problem.tasks:
        lines.append(f"Tasks: {', '.join(str(t) for t in problem.tasks)}")
    for j in graph.order:
        step, w = plan.steps[j], why[j]
        lines.append("")
        lines.append(f"{step.id} {step}  [cost {step.cost}, {step.tier.value}]")
        lines += _labelled("achieves", [f"goal {g}" for g in w.achieves])
        lines += _labelled("supplies", w.supplies)
        lines += _labelled("needs", w.needs)
        lines += _labelled("after", _orderings(plan, actions, index, j, w.sources))
        if step.id in paths:
            lines += _labelled("task", [paths[step.id]])
        if not (w.achieves or w.supplies or step.id in paths):
            lines += _labelled("note", ["no goal and no later step uses its effects"])
    if goal_lines:
        lines += ["", "Goals:", *(f"  {g}" for g in goal_lines)]
    return "\n".join(lines) + "\n"


def _trace(
    plan: Plan,
    problem: Problem,
    actions: list[GroundAction],
    order: tuple[int, ...],
    why: list[_Why],
) -> list[str]:
    """Replay in ``order``, recording causal links; returns the goal lines."""
    made: dict[Atom, int] = {}  # the last step that made the atom true
    broken: dict[Atom, int] = {}  # the last step that made it false

    def link(text: str, source: int | None, j: int | None) -> str:
        if source is None:
            return _INIT
        src = plan.steps[source]
        if j is None:
            why[source].achieves.append(text)
        else:
            why[source].supplies.append(f"{text} -> {plan.steps[j].id} {plan.steps[j]}")
            why[j].sources.add(source)
        return f"{src.id} {src}"

    derived = problem.domain.derived
    for j in order:
        a = actions[j]
        for p in sorted(a.pre_pos):
            text = _RULES if p.predicate in derived else link(str(p), made.get(p), j)
            why[j].needs.append(f"{p} <- {text}")
        for p in sorted(a.pre_neg):
            text = _RULES if p.predicate in derived else link(f"not {p}", broken.get(p), j)
            why[j].needs.append(f"not {p} <- {text}")
        for p in a.delete - a.add:
            broken[p] = j
            made.pop(p, None)
        for p in a.add:
            made[p] = j
            broken.pop(p, None)
    out: list[str] = []
    rules = derived_rules(problem)
    if rules is not None:
        final = set(problem.init)
        for j in order:
            final.difference_update(actions[j].delete)
            final.update(actions[j].add)
        derivation = rules.derive(final)
    for cond in problem.goal:
        if isinstance(cond, Literal) and cond.atom.predicate in derived:
            # the basic atoms it rests on: those steps made, and how many held initially
            holds = (cond.atom in derivation.atoms) == cond.positive
            parts: list[str] = []
            initially = 0
            for b in derivation.expand(cond) if holds else []:
                source = (made if b.positive else broken).get(b.atom)
                if source is None:
                    initially += 1
                else:
                    parts.append(f"{b} <- {link(f'{b} (for {cond})', source, None)}")
            if initially:
                parts.append(f"{initially}{' more' if parts else ''} from {_INIT}")
            out.append(f"{cond} <- {_RULES}" + (f": {'; '.join(parts)}" if parts else ""))
        elif isinstance(cond, Literal):
            source = (made if cond.positive else broken).get(cond.atom)
            out.append(f"{cond} <- {link(str(cond), source, None)}")
        else:
            out.append(f"{cond} <- holds by itself")
    return out


def _orderings(
    plan: Plan, actions: list[GroundAction], index: dict[str, int], j: int, sources: set[int]
) -> list[str]:
    """Why ``j`` waits for each direct predecessor that supplies it nothing."""
    a = actions[j]
    a_breaks = a.delete - a.add
    out: list[str] = []
    for sid in plan.steps[j].after:
        i = index.get(sid)
        if i is None or i in sources:
            continue
        b = actions[i]
        b_breaks = b.delete - b.add
        threatened = sorted(a_breaks & b.pre_pos) + sorted(a.add & b.pre_neg)
        clash = sorted((b.add & a_breaks) | (b_breaks & a.add))
        if threatened:
            p = threatened[0]
            text = str(p) if p in b.pre_pos else f"not {p}"
            out.append(f"{sid}, which needs {text} before this step changes it")
        elif clash:
            out.append(f"{sid}: both change {clash[0]}, and their order is kept")
        else:
            out.append(f"{sid}, as the plan orders them")
    return out


def _labelled(label: str, items: list[str]) -> list[str]:
    if not items:
        return []
    head = f"  {label + ':':<10}"
    return [head + items[0], *(" " * len(head) + item for item in items[1:])]


def _decomposition_paths(nodes: tuple[DecompositionNode, ...]) -> dict[str, str]:
    """For each step named in the decomposition: task -> method -> ... -> the step."""
    out: dict[str, str] = {}

    def walk(node: DecompositionNode, path: list[str]) -> None:
        call = f"{node.task}({', '.join(node.args)})"
        here = [*path, f"{call} by {node.method}" if node.method else call]
        if node.step is not None:
            out.setdefault(node.step, " > ".join(here))
        for child in node.children:
            walk(child, here)

    for node in nodes:
        walk(node, [])
    return out
