"""Is a plan's DAG safe? The modal truth criterion for ground STRIPS, checked exactly.

A literal ``p`` needed by step ``j`` holds in *every* linearisation of the DAG iff

* (establishment) ``p`` holds initially, or some ancestor of ``j`` makes it true;
* (no clobbering) every step ``c`` that makes ``p`` false and is not after ``j``
  is followed by a *white knight*: a step ``w`` with ``c < w < j`` that makes
  ``p`` true again.

If the first fails, run ``j``'s ancestors alone: nothing makes ``p`` true. If
the second fails for ``c``, run ``c``'s ancestors and the ancestors of ``j`` that
do not follow ``c``, then ``c``, then the rest of ``j``'s ancestors (none of
which makes ``p`` true), then ``j``. Goals are preconditions of a virtual last
step. So the check accepts a DAG iff each of its linearisations runs and reaches
the goal, given that one of them does (the sequential replay). "Makes true" is
adding ``p``; "makes false" is deleting ``p`` without re-adding it (PDDL applies
deletes first). Reachability sets are bitsets, so each test is a few ``&``.
"""

from __future__ import annotations

from plansmith.errors import Location
from plansmith.model import Atom, GroundAction, Literal, Plan, Problem
from plansmith.planning._plan_graph import StepGraph, bits
from plansmith.planning._plan_steps import PlanIssue

__all__ = ["safety_issues"]


def safety_issues(
    plan: Plan, problem: Problem, actions: list[GroundAction], graph: StepGraph
) -> list[PlanIssue]:
    """The modal truth criterion (module docstring) for every precondition and goal."""
    makes: dict[Atom, int] = {}
    breaks: dict[Atom, int] = {}
    for j, a in enumerate(actions):
        for p in a.add:
            makes[p] = makes.get(p, 0) | (1 << j)
        for p in a.delete - a.add:
            breaks[p] = breaks.get(p, 0) | (1 << j)
    out: list[PlanIssue] = []
    assert graph.order is not None
    for j in graph.order:
        a = actions[j]
        needs = [(p, True) for p in sorted(a.pre_pos)] + [(p, False) for p in sorted(a.pre_neg)]
        for p, positive in needs:
            issue = _unsafe(
                plan, problem, graph, effects=(makes, breaks), atom=p, positive=positive, j=j
            )
            if issue is not None:
                out.append(issue)
    for cond in problem.goal:
        if isinstance(cond, Literal):
            issue = _unsafe(
                plan,
                problem,
                graph,
                effects=(makes, breaks),
                atom=cond.atom,
                positive=cond.positive,
                j=None,
            )
            if issue is not None:
                out.append(issue)
    return out


def _unsafe(
    plan: Plan,
    problem: Problem,
    graph: StepGraph,
    *,
    effects: tuple[dict[Atom, int], dict[Atom, int]],
    atom: Atom,
    positive: bool,
    j: int | None,
) -> PlanIssue | None:
    """Why ``atom`` (``not atom`` if not ``positive``) may fail before step ``j``, if it may.

    ``j`` None stands for the goal, after every step. ``effects`` holds the
    bitsets of the steps that add and that (effectively) delete each atom.
    """
    makes, breaks = effects if positive else (effects[1], effects[0])
    good = makes.get(atom, 0)
    text = str(atom) if positive else f"not {atom}"
    if j is None:
        before, not_after, sid, who = (1 << len(plan.steps)) - 1, ~0, None, "the goal"
    else:
        before = graph.ancestors[j]
        not_after = ~(graph.descendants[j] | (1 << j))
        sid = plan.steps[j].id
        who = f"step {sid} {plan.steps[j]}"
    if (atom in problem.init) != positive and not good & before:
        makers = ", ".join(plan.steps[i].id for i in bits(good)) or "none in the plan"
        return PlanIssue(
            "unsafe-order",
            f"{who} needs {text}, which does not hold initially and which no step it "
            f"depends on makes true",
            Location(step=sid),
            f"add a step that makes it true ({makers}) to the `after` of {sid}"
            if sid is not None
            else f"add a step that makes {text} true",
        )
    for c in bits(breaks.get(atom, 0) & not_after):
        if graph.descendants[c] & before & good:
            continue  # a white knight restores it between c and j
        cid = plan.steps[c].id
        if sid is None:
            return PlanIssue(
                "unsafe-order",
                f"the goal {text} may not hold at the end: step {cid} {plan.steps[c]} "
                "can make it false after every step that makes it true",
                Location(step=cid),
                f"order {cid} before the step that last makes {text} true",
            )
        return PlanIssue(
            "unsafe-order",
            f"{who} needs {text}, but step {cid} {plan.steps[c]} is not ordered after it "
            "and can make it false first, with no step restoring it in between",
            Location(step=sid),
            f"order {cid} after {sid} (add {sid} to the `after` of {cid}), or make {sid} "
            f"depend on a step that makes {text} true after {cid}",
        )
    return None
