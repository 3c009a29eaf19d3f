"""Validate a plan against its problem, symbolically, and check that its DAG is safe.

``check_plan`` returns every problem it finds, in this order:

1. the plan's domain and problem hashes (``check_hashes=True``);
2. the graph: duplicate step ids, unknown or self ``after`` ids, cycles, and
   decomposition nodes naming unknown steps;
3. each step: a known action, the right number of arguments, known objects of
   the right types, equality preconditions, and the cost and tier the domain
   gives (a plan whose tier was lowered could slip past an approval policy);
4. the sequential replay in topological order (the plan's own order wherever
   the DAG allows): every precondition, then the goal (when the problem has
   one; an HTN problem without a goal only replays preconditions);
5. the safety of the DAG, which needs a graph and a replay without problems.

Safety is checked exactly (``_plan_safety``): a DAG passes iff each of its
linearisations runs and reaches the goal.

``validate`` raises PlanFormatError when a hash does not match (the plan
artifact does not belong to this domain and problem: wrong input, exit code 2,
the class errors.py documents for this), otherwise PlanInvalidError for the
first problem, listing the others in its message.
"""

from __future__ import annotations

from dataclasses import replace

from plansmith.errors import Location, PlanFormatError, PlanInvalidError
from plansmith.model import (
    Atom,
    Condition,
    DecompositionNode,
    Equality,
    Formula,
    GroundAction,
    Literal,
    Plan,
    Problem,
    content_hash,
)
from plansmith.planning._adl import (
    apply_step,
    goal_holds,
    needs_compiling,
    objects_of,
)
from plansmith.planning._dag import problem_hash
from plansmith.planning._derived import closed, derived_rules, plan_goal
from plansmith.planning._plan_graph import StepGraph, step_graph
from plansmith.planning._plan_safety import safety_issues
from plansmith.planning._plan_steps import PlanIssue, ground_steps

__all__ = ["PlanIssue", "check_plan", "validate"]

HASH_KINDS = frozenset({"domain-hash", "problem-hash"})


def validate(plan: Plan, problem: Problem, *, check_hashes: bool = True) -> None:
    """Raise PlanFormatError or PlanInvalidError if ``plan`` does not solve ``problem``."""
    issues = check_plan(plan, problem, check_hashes=check_hashes)
    if not issues:
        return
    first = issues[0]
    message = first.message
    if len(issues) > 1:
        rest = "\n".join(f"  - {i.location}: {i.message}" for i in issues[1:])
        message = f"{message}\n{len(issues) - 1} more problem(s):\n{rest}"
    if first.kind in HASH_KINDS:
        raise PlanFormatError(message, location=first.location, hint=first.hint)
    raise PlanInvalidError(message, location=first.location, hint=first.hint)


def check_plan(plan: Plan, problem: Problem, *, check_hashes: bool = True) -> list[PlanIssue]:
    """Every problem of ``plan`` for ``problem``; empty when the plan is valid."""
    issues: list[PlanIssue] = []
    if check_hashes:
        issues += _hash_issues(plan, problem)
    graph = step_graph(plan)
    structure = _graph_issues(plan, graph)
    issues += structure
    ground, step_issues = ground_steps(plan, problem)
    issues += step_issues
    if structure or step_issues or graph.order is None:
        return issues
    actions = [a for a in ground if a is not None]
    if needs_compiling(problem):
        actions, replay = _adl_replay(plan, problem, actions, graph.order)
    else:
        replay = _replay_issues(plan, problem, actions, graph.order)
    issues += replay
    if not replay:
        if problem.goal_formula or problem.domain.axioms:
            final = set(problem.init)
            for j in graph.order:
                final.difference_update(actions[j].delete)
                final.update(actions[j].add)
            equalities = tuple(c for c in problem.goal if isinstance(c, Equality))
            witness = tuple(plan_goal(problem, final))
            problem = replace(problem, goal=equalities + witness, goal_formula=())
        issues += safety_issues(plan, problem, actions, graph)
    return issues


def _hash_issues(plan: Plan, problem: Problem) -> list[PlanIssue]:
    out: list[PlanIssue] = []
    domain_hash = content_hash(problem.domain)
    if plan.domain_hash != domain_hash:
        out.append(
            PlanIssue(
                "domain-hash",
                f"the plan is for domain {plan.domain!r} with hash {plan.domain_hash}, "
                f"but domain {problem.domain.name!r} has hash {domain_hash}",
                Location(file=problem.domain.source),
                "plan again for this domain, or validate against the domain the plan was made for",
            )
        )
    hash_of_problem = problem_hash(problem)
    if plan.problem_hash != hash_of_problem:
        out.append(
            PlanIssue(
                "problem-hash",
                f"the plan is for problem {plan.problem!r} with hash {plan.problem_hash}, "
                f"but problem {problem.name!r} has hash {hash_of_problem}",
                Location(file=problem.source),
                "plan again for this problem, or validate against the problem the plan "
                "was made for",
            )
        )
    return out


def _graph_issues(plan: Plan, graph: StepGraph) -> list[PlanIssue]:
    out: list[PlanIssue] = []
    seen: set[str] = set()
    for s in plan.steps:
        if s.id in seen:
            out.append(
                PlanIssue(
                    "duplicate-id",
                    f"step id {s.id} is used more than once",
                    Location(step=s.id),
                    "give every step its own id",
                )
            )
        seen.add(s.id)
    for s in plan.steps:
        for a in s.after:
            if a == s.id:
                out.append(
                    PlanIssue(
                        "self-after",
                        f"step {s.id} lists itself in its `after`",
                        Location(step=s.id),
                        "remove the id from its own `after`",
                    )
                )
            elif a not in seen:
                out.append(
                    PlanIssue(
                        "unknown-after",
                        f"step {s.id} depends on unknown step {a}",
                        Location(step=s.id),
                        "`after` may only list ids of steps in the plan",
                    )
                )
    if graph.order is None and not any(i.kind == "self-after" for i in out):
        ids = [plan.steps[i].id for i in graph.cycle]
        out.append(
            PlanIssue(
                "cycle",
                f"the steps {' -> '.join([*ids, ids[0]])} depend on each other in a cycle",
                Location(step=ids[0]),
                "a plan is a DAG: remove one of these `after` entries",
            )
        )
    out += _decomposition_issues(plan.decomposition, seen)
    return out


def _decomposition_issues(nodes: tuple[DecompositionNode, ...], ids: set[str]) -> list[PlanIssue]:
    out: list[PlanIssue] = []
    for node in nodes:
        if node.step is not None and node.step not in ids:
            out.append(
                PlanIssue(
                    "decomposition",
                    f"decomposition node {node.task}({', '.join(node.args)}) names unknown "
                    f"step {node.step}",
                    Location(step=node.step),
                    "decomposition leaves must name steps of the plan",
                )
            )
        out += _decomposition_issues(node.children, ids)
    return out


def _holds(cond: Literal | Equality, state: set[Atom]) -> bool:
    if isinstance(cond, Equality):
        return (cond.left == cond.right) == cond.positive
    return (cond.atom in state) == cond.positive


def _adl_replay(
    plan: Plan, problem: Problem, actions: list[GroundAction], order: tuple[int, ...]
) -> tuple[list[GroundAction], list[PlanIssue]]:
    """The replay with ADL semantics (:func:`apply_step`): each step becomes the STRIPS
    action it is in the state where it runs, which the safety check then uses."""
    objects = objects_of(problem)
    rules = derived_rules(problem)
    state = set(problem.init)
    out = list(actions)
    for j in order:
        a, sid = actions[j], plan.steps[j].id
        schema = problem.domain.action(a.name)
        assert schema is not None  # ground_steps checked it
        if rules is None:
            context = apply_step(schema, a.args, a.cost, state, objects)
        else:
            derivation = rules.derive(state)
            context = apply_step(
                schema, a.args, a.cost, derivation.atoms, objects, expand=derivation.expand
            )
        if context is None:
            return out, [
                PlanIssue(
                    "precondition",
                    f"step {sid} {a}: its precondition does not hold when the steps run in order",
                    Location(step=sid),
                    "an earlier step must make it true (or it must hold initially)",
                )
            ]
        out[j] = context
        state.difference_update(context.delete)
        state.update(context.add)
    state = closed(problem, state)
    issues = [_goal_missed(c) for c in problem.goal if not _holds(c, state)]
    issues += [_goal_missed(f) for f in goal_holds(problem, state)]
    return out, issues


def _replay_issues(
    plan: Plan, problem: Problem, actions: list[GroundAction], order: tuple[int, ...]
) -> list[PlanIssue]:
    """Run the steps in ``order``; report the first failing step, or each missed goal."""
    state = set(problem.init)
    for j in order:
        a, sid = actions[j], plan.steps[j].id
        failed = [str(p) for p in sorted(a.pre_pos - state)]
        failed += [f"not {p}" for p in sorted(a.pre_neg & state)]
        if failed:
            return [
                PlanIssue(
                    "precondition",
                    f"step {sid} {a}: precondition {', '.join(failed)} does not hold "
                    "when the steps run in order",
                    Location(step=sid),
                    "an earlier step must make it true (or it must hold initially); "
                    "`plansmith explain` shows where each precondition comes from",
                )
            ]
        state.difference_update(a.delete)
        state.update(a.add)
    return [_goal_missed(c) for c in problem.goal if not _holds(c, state)]


def _goal_missed(goal: Condition | Formula) -> PlanIssue:
    """The issue of a goal (a literal, or a formula beyond literals) false at the end."""
    return PlanIssue(
        "goal",
        f"the goal {goal} does not hold after the last step",
        goal.loc or Location(),
        "add steps that achieve it, or check that no later step undoes it",
    )
