"""What the run log says of each action and tool: calls, outcomes, durations.

``stats_of`` folds the events of many runs into one ``ActionStats`` per (action,
server, tool): every attempt is a call (a ``StepSucceeded``, a ``StepFailed`` or a
``StepRetrying``, which is a failed attempt tried again); failures are counted by error
class; durations (p50, p95, by the nearest-rank method) are those of the attempts that
report one. ``learned_costs`` turns them into action costs for the planner: the declared
cost scaled by how long the action takes relative to the others and by how often it
fails, shrunk toward the declared cost while the action has few calls. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from plansmith.execution._events import Event, StepFailed, StepRetrying, StepSucceeded
from plansmith.model import Problem

__all__ = [
    "ActionStats",
    "LearnedCost",
    "stats_of",
    "learned_costs",
    "declared_costs",
    "with_costs",
    "with_action_costs",
    "nearest_rank",
    "learned_cost_table",
    "PRIOR_CALLS",
]

#: calls an action needs before its figures weigh as much as its declared cost
PRIOR_CALLS = 5


@dataclass(frozen=True, slots=True)
class ActionStats:
    """One action bound to one tool, over the runs read."""

    action: str
    server: str
    tool: str
    calls: int
    succeeded: int
    failed: tuple[tuple[str, int], ...] = ()  # error class -> failed attempts
    p50_ms: float | None = None
    p95_ms: float | None = None
    runs: int = 0  # the runs it was called in

    @property
    def success_rate(self) -> float:
        return self.succeeded / self.calls if self.calls else 0.0


@dataclass(frozen=True, slots=True)
class LearnedCost:
    """An action's cost for the planner, and what it was learned from."""

    action: str
    declared: float
    cost: float
    calls: int
    runs: int
    factor: float = 1.0  # cost / declared
    why: str = field(default="", compare=False)


def nearest_rank(sorted_values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile ``share`` (0-1) of sorted values."""
    index = max(0, math.ceil(share * len(sorted_values)) - 1)
    return sorted_values[index]


def stats_of(runs: Iterable[Sequence[Event]]) -> tuple[ActionStats, ...]:
    """One ``ActionStats`` per (action, server, tool) over the runs' events, sorted."""
    calls: Counter[tuple[str, str, str]] = Counter()
    succeeded: Counter[tuple[str, str, str]] = Counter()
    failed: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    durations: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    in_runs: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for events in runs:
        for event in events:
            if not isinstance(event, StepSucceeded | StepFailed | StepRetrying):
                continue
            key = (event.action, event.server, event.tool)
            calls[key] += 1
            in_runs[key].add(event.run_id)
            if isinstance(event, StepSucceeded):
                succeeded[key] += 1
                durations[key].append(event.duration_ms)
            else:
                failed[key][event.error_class or "unknown"] += 1
                if isinstance(event, StepFailed):
                    durations[key].append(event.duration_ms)
    out: list[ActionStats] = []
    for key in sorted(calls):
        ds = sorted(durations[key])
        out.append(
            ActionStats(
                *key,
                calls=calls[key],
                succeeded=succeeded[key],
                failed=tuple(sorted(failed[key].items())),
                p50_ms=nearest_rank(ds, 0.5) if ds else None,
                p95_ms=nearest_rank(ds, 0.95) if ds else None,
                runs=len(in_runs[key]),
            )
        )
    return tuple(out)


def learned_costs(
    stats: Sequence[ActionStats], declared: Mapping[str, float], *, prior: int = PRIOR_CALLS
) -> dict[str, LearnedCost]:
    """Each declared action's cost from the figures (its declared cost where none).

    An action's factor is (its p50 duration / the median p50 of the actions observed)
    divided by its success rate; with ``n`` calls it is shrunk toward 1 as
    ``(n * factor + prior) / (n + prior)``. The cost is ``declared * factor``, so an
    action twice as slow as the others, or failing half the time, costs about twice its
    declared cost once it has many calls, and its declared cost before it has any.
    """
    by_action: dict[str, list[ActionStats]] = defaultdict(list)
    for s in stats:
        by_action[s.action].append(s)
    timed = sorted(s.p50_ms for group in by_action.values() for s in group if s.p50_ms is not None)
    reference = nearest_rank(timed, 0.5) if timed else None
    out: dict[str, LearnedCost] = {}
    for action, cost in sorted(declared.items()):
        group = by_action.get(action, [])
        n = sum(s.calls for s in group)
        runs = max((s.runs for s in group), default=0)
        ok = sum(s.succeeded for s in group)
        p50s = sorted(s.p50_ms for s in group if s.p50_ms is not None)
        if n == 0 or not reference or not p50s or ok == 0:
            why = "no calls in the log" if n == 0 else "no successful call timed"
            out[action] = LearnedCost(action, cost, cost, n, runs, 1.0, why)
            continue
        raw = (nearest_rank(p50s, 0.5) / reference) / (ok / n)
        factor = (n * raw + prior) / (n + prior)
        why = (
            f"p50 {nearest_rank(p50s, 0.5):.0f} ms vs {reference:.0f} ms, {ok}/{n} calls succeeded"
        )
        out[action] = LearnedCost(action, cost, round(cost * factor, 6), n, runs, factor, why)
    return out


def declared_costs(problem: Problem) -> dict[str, float]:
    """The constant cost of each action of the problem's domain (a cost that is a
    function of the problem, as PDDL's ``(increase (total-cost) (f ?x))``, is left)."""
    return {
        a.name: float(a.cost) for a in problem.domain.actions if isinstance(a.cost, int | float)
    }


def with_costs(problem: Problem, costs: Mapping[str, LearnedCost]) -> Problem:
    """The problem over its domain with each action's cost replaced by the learned one."""
    return with_action_costs(problem, {name: c.cost for name, c in costs.items()})


def with_action_costs(problem: Problem, costs: Mapping[str, float]) -> Problem:
    """The problem over its domain with the cost of each action named in ``costs``
    replaced by that cost (a run records the costs it was planned with this way)."""
    actions = tuple(
        replace(a, cost=costs[a.name]) if a.name in costs else a for a in problem.domain.actions
    )
    return replace(problem, domain=replace(problem.domain, actions=actions))


def learned_cost_table(costs: Mapping[str, LearnedCost]) -> dict[str, float]:
    """The costs a run records and plans with (``Engine.run``'s ``costs``): the learned
    ones only, ``{action: cost}`` (an action with no calls keeps its declared cost)."""
    return {name: c.cost for name, c in costs.items() if c.calls}
