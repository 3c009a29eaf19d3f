"""Bound plans to JSON and back, so a run log is enough to resume or replay a run."""

from __future__ import annotations

from typing import cast

from plansmith.binding import BoundPlan, BoundStep, StepPolicy
from plansmith.model import JSONValue, Step, StepArg, Tier, canonical_json

__all__ = ["bound_to_dict", "bound_from_dict"]


def _pairs(value: JSONValue) -> tuple[tuple[str, str], ...]:
    items = cast(list[list[str]], value or [])
    return tuple((str(a), str(b)) for a, b in items)


def _arg(value: JSONValue) -> StepArg:
    """A step argument as the log holds it: a JSON scalar, kept with its type.

    The writer only writes scalars; anything else is kept as its JSON text.
    """
    if value is None or isinstance(value, str | int | float):
        return value
    return canonical_json(value)


def _params(value: JSONValue) -> tuple[tuple[str, StepArg], ...]:
    items = cast(list[list[JSONValue]], value or [])
    return tuple((str(a), _arg(b)) for a, b in items)


def bound_to_dict(bound: BoundPlan) -> dict[str, JSONValue]:
    return {
        "plan_hash": bound.plan_hash,
        "steps": [
            {
                "id": s.step.id,
                "action": s.step.action,
                "args": list(s.step.args),
                "cost": s.step.cost,
                "plan_after": list(s.step.after),
                "step_tier": s.step.tier.value,
                "server": s.server,
                "tool": s.tool,
                "arguments": s.arguments,
                "params": [list(p) for p in s.params],
                "producers": [list(p) for p in s.producers],
                "outputs": [list(o) for o in s.outputs],
                "policy": {
                    "timeout": s.policy.timeout,
                    "retries": s.policy.retries,
                    "idempotent": s.policy.idempotent,
                    "tier": s.policy.tier.value if s.policy.tier else None,
                },
                "tier": s.tier.value,
                "after": list(s.after),
            }
            for s in bound.steps
        ],
    }


def bound_from_dict(data: dict[str, JSONValue]) -> BoundPlan:
    steps: list[BoundStep] = []
    for raw in cast(list[dict[str, JSONValue]], data.get("steps") or []):
        policy = cast(dict[str, JSONValue], raw.get("policy") or {})
        timeout = policy.get("timeout")
        tier = policy.get("tier")
        cost = raw.get("cost", 1)
        step = Step(
            id=str(raw["id"]),
            action=str(raw["action"]),
            args=tuple(_arg(a) for a in cast(list[JSONValue], raw.get("args") or [])),
            cost=cost if isinstance(cost, int | float) else 1,
            after=tuple(str(a) for a in cast(list[str], raw.get("plan_after") or [])),
            tier=Tier(str(raw.get("step_tier", "write"))),
        )
        steps.append(
            BoundStep(
                step=step,
                server=str(raw["server"]),
                tool=str(raw["tool"]),
                arguments=raw.get("arguments"),
                params=_params(raw.get("params")),
                producers=_pairs(raw.get("producers")),
                outputs=_pairs(raw.get("outputs")),
                policy=StepPolicy(
                    timeout=float(timeout) if isinstance(timeout, int | float) else None,
                    retries=int(cast(int, policy.get("retries") or 0)),
                    idempotent=bool(policy.get("idempotent")),
                    tier=Tier(str(tier)) if tier else None,
                ),
                tier=Tier(str(raw.get("tier", "write"))),
                after=tuple(str(a) for a in cast(list[str], raw.get("after") or [])),
            )
        )
    return BoundPlan(str(data.get("plan_hash", "")), tuple(steps))
