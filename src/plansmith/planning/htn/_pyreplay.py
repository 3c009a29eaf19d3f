"""Replay a Python-domain plan and find the steps that leave the state unchanged.

GTPyhop 2.0.2 drops such steps from its plans; plansmith keeps them (a
read-only tool call is a real step). This tells the two apart when plans of
both are compared: removing these steps from a plansmith plan gives GTPyhop's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plansmith.errors import Location, PlanInvalidError
from plansmith.model import PyDomain
from plansmith.planning.htn._pystate import StateOps

__all__ = ["unchanged_steps", "without_unchanged"]


def unchanged_steps(domain: PyDomain, state: Any, actions: Sequence[Any]) -> tuple[int, ...]:
    """Indices of the actions of ``actions`` that leave the state as it was
    (variables compared by value, the state's ``__name__`` ignored).

    Each action runs on a copy of the state before it, which is kept to compare.
    """
    table = dict(domain.actions)
    ops = StateOps(state)
    current = state
    out: list[int] = []
    for index, item in enumerate(actions):
        after = ops.apply(current, True, table[item[0]], item[1:])
        if after is None:
            raise PlanInvalidError(
                f"action {item!r} (step {index + 1}) does not apply",
                location=Location(step=f"s{index + 1}"),
                hint="replay the plan from the state it was made for",
            )
        if _vars(after) == _vars(current):
            out.append(index)
        current = after
    return tuple(out)


def without_unchanged(domain: PyDomain, state: Any, actions: Sequence[Any]) -> list[Any]:
    """``actions`` without the ones that leave the state unchanged."""
    drop = set(unchanged_steps(domain, state, actions))
    return [a for i, a in enumerate(actions) if i not in drop]


def _vars(state: Any) -> dict[str, Any]:
    return {k: v for k, v in state.__dict__.items() if k != "__name__"}
