"""``--costs learned`` of ``plansmith plan`` and ``plansmith run``: the costs learned
from the run log, and the lines that say which were learned and from how many runs."""

from __future__ import annotations

from collections.abc import Mapping

from plansmith.execution import LearnedCost

__all__ = ["cost_lines"]


def cost_lines(costs: Mapping[str, LearnedCost]) -> list[str]:
    """One line per action: its cost, and whether it was learned, from what."""
    lines = []
    for c in costs.values():
        if c.calls:
            lines.append(
                f"cost {c.action}: {c.cost:g} (declared {c.declared:g}; learned from {c.calls}"
                f" call(s) in {c.runs} run(s): {c.why})"
            )
        else:
            lines.append(f"cost {c.action}: {c.cost:g} (declared; {c.why})")
    return lines
