"""Renderings of a plan for people: a terminal list, a Mermaid flowchart and Graphviz DOT.

All three are deterministic functions of the plan. Labels are escaped for
their target, so an odd object name cannot break (or inject into) a diagram.
"""

from __future__ import annotations

import re

from plansmith.model import Number, Plan, Step, Tier, canonical_value

__all__ = ["render_text", "render_mermaid", "render_dot"]

_CANONICAL_ID = re.compile(r"s[0-9]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # incl. every line break
# Mermaid entity codes (decimal): '#' first, since the others use it.
_MERMAID = (
    ("#", "#35;"),
    ('"', "#34;"),
    ("<", "#60;"),
    (">", "#62;"),
    ("&", "#38;"),
    ("`", "#96;"),
)
_COLOURS = {
    Tier.READ: ("#e8f5e9", "#2e7d32"),
    Tier.WRITE: ("#fff8e1", "#f9a825"),
    Tier.EXECUTE: ("#ffebee", "#c62828"),
}


def _num(value: Number) -> str:
    return str(canonical_value(value))


def render_text(plan: Plan) -> str:
    """A numbered list of the steps with cost, tier and dependencies, then the total."""
    count = len(plan.steps)
    lines = [
        f"Plan for problem {plan.problem} (domain {plan.domain}): "
        f"{count} step{'' if count == 1 else 's'}"
    ]
    if plan.settings:
        lines.append("Planner: " + ", ".join(f"{k}={v}" for k, v in plan.settings))
    if not plan.steps:
        lines.append("  (no steps: the goal holds in the initial state)")
    width_n = len(str(count))
    width_id = max((len(s.id) for s in plan.steps), default=0)
    width_act = max((len(str(s)) for s in plan.steps), default=0)
    width_cost = max((len(_num(s.cost)) for s in plan.steps), default=0)
    for n, s in enumerate(plan.steps, start=1):
        row = (
            f"  {n:>{width_n}}. {_clean(s.id):<{width_id}}  {_clean(str(s)):<{width_act}}  "
            f"cost {_num(s.cost):>{width_cost}}  {s.tier.value:<7}"
        )
        if s.after:
            row += "  after " + ", ".join(s.after)
        lines.append(row.rstrip())
    lines.append(f"Total cost: {_num(plan.cost)}")
    lines.append(f"Hash: {plan.hash}")
    return "\n".join(lines) + "\n"


def _clean(text: str) -> str:
    return _CONTROL.sub(" ", text)


def _mermaid_ids(plan: Plan) -> dict[str, str]:
    """Canonical ids (``s12``) stay; any other id becomes ``n<position>``."""
    out: dict[str, str] = {}
    for n, s in enumerate(plan.steps, start=1):
        out.setdefault(s.id, s.id if _CANONICAL_ID.fullmatch(s.id) else f"n{n}")
    return out


def _mermaid_label(text: str) -> str:
    text = _clean(text)
    for char, code in _MERMAID:
        text = text.replace(char, code)
    return text


def render_mermaid(plan: Plan) -> str:
    """``flowchart TD`` with one node per step, labelled ``action(args)``, edges from ``after``."""
    ids = _mermaid_ids(plan)
    lines = ["flowchart TD"]
    lines += [f'  {ids[s.id]}["{_mermaid_label(str(s))}"]' for s in plan.steps]
    lines += [f"  {ids[a]} --> {ids[s.id]}" for s in plan.steps for a in s.after if a in ids]
    for tier, (fill, stroke) in _COLOURS.items():
        members = [ids[s.id] for s in plan.steps if s.tier is tier]
        if members:
            lines.append(f"  classDef {tier.value} fill:{fill},stroke:{stroke}")
            lines.append(f"  class {','.join(dict.fromkeys(members))} {tier.value}")
    return "\n".join(lines) + "\n"


def _dot_string(text: str) -> str:
    text = _clean(text).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def render_dot(plan: Plan) -> str:
    """A Graphviz digraph: one box per step (coloured by tier), edges from ``after``."""
    known = {s.id for s in plan.steps}
    lines = [
        "digraph plan {",
        "  rankdir=TB;",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica"];',
    ]
    for s in plan.steps:
        fill, stroke = _COLOURS[s.tier]
        lines.append(
            f"  {_dot_string(s.id)} [label={_dot_string(str(s))}, "
            f"tooltip={_dot_string(_tooltip(s))}, "
            f'fillcolor="{fill}", color="{stroke}"];'
        )
    lines += [
        f"  {_dot_string(a)} -> {_dot_string(s.id)};"
        for s in plan.steps
        for a in s.after
        if a in known
    ]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _tooltip(step: Step) -> str:
    return f"{step.id}: cost {_num(step.cost)}, {step.tier.value}"
