"""Build the plan artifact: lift a sequence of ground actions to a DAG of steps.

The search returns a total order; most of it is accidental. ``build_plan``
keeps only the orderings the plan needs (partial-order lifting, or
*deordering*), so that independent steps come out unordered and may run at
the same time. Step ``j`` is ordered after step ``i`` when:

* **causal link**: ``i`` is the last step before ``j`` that makes a
  precondition of ``j`` true (adds ``p`` for ``p``; deletes ``p`` without
  re-adding it for ``not p``);
* **threat**: ``j`` needs ``p`` from the link ``i -> j`` (or from the initial
  state) and another step ``k`` would falsify ``p``: ``k`` stays before ``i`` or
  after ``j``, on the side where it was in the sequence;
* **interference**: one of them adds an atom the other deletes; they keep
  their sequence order, so every linearisation ends in the same state;
* **goal**: a step that would falsify a goal stays before the goal's final
  achiever.

All these edges point forward in the sequence, so the result is acyclic. What
``after`` stores is the *transitive reduction* of these constraints: the
fewest edges with the same reachability. It is unique for a DAG (so the
artifact stays canonical), it draws cleanly, and nothing needs more:
``validate`` and the runner only ask whether one step is (transitively)
before another. Ids in ``after`` are listed in sequence order.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from itertools import pairwise

from plansmith.errors import Location, PlanInvalidError
from plansmith.model import (
    Atom,
    DecompositionNode,
    Equality,
    GroundAction,
    Literal,
    Plan,
    Problem,
    SettingValue,
    Step,
    content_hash,
)
from plansmith.planning._derived import closed, plan_goal

__all__ = ["build_plan", "assemble_plan", "problem_hash"]


def problem_hash(problem: Problem) -> str:
    """``sha256:<hex>`` of the problem's content without its domain and name.

    It covers what decides whether a plan solves the problem: the objects (in
    order, since grounding order can break ties), the initial state (sorted),
    the goal, the tasks and the function values. The name is recorded beside the
    hash in the plan, so renaming a problem file does not invalidate its plans.
    """
    return content_hash(
        {
            "objects": problem.objects,
            "init": problem.init,
            "goal": problem.goal,
            "tasks": problem.tasks,
            "function_values": problem.function_values,
        }
    )


def build_plan(
    problem: Problem,
    actions: Sequence[GroundAction],
    settings: tuple[tuple[str, SettingValue], ...],
    *,
    decomposition: tuple[DecompositionNode, ...] = (),
) -> Plan:
    """The plan DAG for the action sequence ``actions``, which must solve ``problem``.

    Steps get ids ``s1..sn`` in sequence order. ``settings`` are kept sorted by
    key (the JSON object is sorted anyway; this makes a read-back plan equal).
    Raises PlanInvalidError (with the step id) if the sequence is not executable
    from the initial state or, when the problem has a goal, does not reach it.
    """
    seq = list(actions)
    ids = [f"s{j + 1}" for j in range(len(seq))]
    _replay(problem, seq, ids)
    goal = [c for c in problem.goal if isinstance(c, Literal)]
    if problem.goal_formula or problem.domain.axioms:
        final = set(problem.init)
        for a in seq:
            final.difference_update(a.delete)
            final.update(a.add)
        goal = plan_goal(problem, final)
    after = transitive_reduction(ordering_constraints(seq, goal))
    settings = tuple(sorted(dict(settings).items()))
    return assemble_plan(problem, seq, after, settings, decomposition=decomposition)


def assemble_plan(
    problem: Problem,
    actions: Sequence[GroundAction],
    after: Sequence[Iterable[int]],
    settings: tuple[tuple[str, SettingValue], ...],
    *,
    decomposition: tuple[DecompositionNode, ...] = (),
) -> Plan:
    """The plan of ``problem`` whose step ``s<j+1>`` is ``actions[j]``, after the steps
    ``after[j]`` (indexes into ``actions``); nothing is checked."""
    ids = [f"s{j + 1}" for j in range(len(actions))]
    steps = tuple(
        Step(
            id=ids[j],
            action=a.name,
            args=a.args,
            cost=a.cost,
            after=tuple(ids[i] for i in after[j]),
            tier=a.tier,
        )
        for j, a in enumerate(actions)
    )
    return Plan(
        domain=problem.domain.name,
        problem=problem.name,
        domain_hash=content_hash(problem.domain),
        problem_hash=problem_hash(problem),
        steps=steps,
        settings=settings,
        decomposition=decomposition,
    )


def _replay(problem: Problem, seq: Sequence[GroundAction], ids: Sequence[str]) -> None:
    state = set(problem.init)
    for a, sid in zip(seq, ids, strict=True):
        missing = sorted(a.pre_pos - state) + sorted(a.pre_neg & state)
        if missing:
            p = missing[0]
            text = str(p) if p in a.pre_pos else f"not {p}"
            raise PlanInvalidError(
                f"step {sid} {a}: precondition {text} does not hold",
                location=Location(step=sid),
                hint="the action sequence is not executable from the initial state; "
                "build_plan needs the sequence the planner returned",
            )
        state.difference_update(a.delete)
        state.update(a.add)
    state = closed(problem, state)
    for cond in problem.goal:
        if isinstance(cond, Equality):
            holds = (cond.left == cond.right) == cond.positive
        else:
            holds = (cond.atom in state) == cond.positive
        if not holds:
            raise PlanInvalidError(
                f"the action sequence does not reach the goal {cond}",
                location=cond.loc or Location(step=ids[-1] if ids else None),
                hint="build_plan needs a sequence that solves the problem",
            )


def ordering_constraints(
    seq: Sequence[GroundAction], goal: Sequence[Literal] = ()
) -> list[set[int]]:
    """For each step, the earlier steps it must follow (see the module docstring).

    ``seq`` must be executable and reach ``goal``; every returned edge points
    forward in the sequence.
    """
    n = len(seq)
    adders: dict[Atom, list[int]] = {}
    deleters: dict[Atom, list[int]] = {}  # effective: deleted and not re-added
    for j, a in enumerate(seq):
        for p in a.add:
            adders.setdefault(p, []).append(j)
        for p in a.delete - a.add:
            deleters.setdefault(p, []).append(j)
    preds: list[set[int]] = [set() for _ in range(n)]

    def protect(i: int | None, j: int, threats: list[int]) -> None:
        """Keep each threat before ``i`` or after ``j`` (``i`` None: the initial state)."""
        if i is not None:
            preds[j].add(i)
        for k in threats:
            if k == j:
                continue
            if k > j:
                preds[k].add(j)
            elif i is not None and k < i:
                preds[i].add(k)

    for j, a in enumerate(seq):
        for p in a.pre_pos:
            protect(_last_before(adders.get(p, []), j), j, deleters.get(p, []))
        for p in a.pre_neg:
            protect(_last_before(deleters.get(p, []), j), j, adders.get(p, []))
    for lit in goal:
        makers, breakers = (adders, deleters) if lit.positive else (deleters, adders)
        if lit.atom in makers:
            last = makers[lit.atom][-1]
            for k in breakers.get(lit.atom, []):
                if k < last:
                    preds[last].add(k)
    for p in sorted(adders.keys() & deleters.keys()):
        _order_runs(sorted(adders[p] + deleters[p]), set(adders[p]), preds)
    return preds


def _last_before(indices: list[int], j: int) -> int | None:
    pos = bisect_left(indices, j)
    return indices[pos - 1] if pos > 0 else None


def _order_runs(touchers: list[int], adds: set[int], preds: list[set[int]]) -> None:
    """Order adders against deleters of one atom as in the sequence.

    Consecutive steps of the same kind form a run; ordering every step of a run
    after every step of the run before it orders each adder/deleter pair
    (transitively) with far fewer edges than all pairs.
    """
    runs: list[list[int]] = []
    for k in touchers:
        if runs and (runs[-1][0] in adds) == (k in adds):
            runs[-1].append(k)
        else:
            runs.append([k])
    for before, later in pairwise(runs):
        for k in later:
            preds[k].update(before)


def transitive_reduction(preds: Sequence[set[int]]) -> list[tuple[int, ...]]:
    """The fewest predecessors per step with the same reachability.

    Needs every edge to point forward (``i < j``). Predecessors are visited from
    the latest down: an edge ``p -> j`` is redundant exactly when ``p`` is an
    ancestor of a later predecessor of ``j``.
    """
    ancestors = [0] * len(preds)
    out: list[tuple[int, ...]] = []
    for j, ps in enumerate(preds):
        keep: list[int] = []
        covered = 0
        for p in sorted(ps, reverse=True):
            if not (covered >> p) & 1:
                keep.append(p)
            covered |= ancestors[p]
        for p in keep:
            covered |= 1 << p
        ancestors[j] = covered
        out.append(tuple(sorted(keep)))
    return out
