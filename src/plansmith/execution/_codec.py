"""Bound plans to JSON and back, so a run log is enough to resume or replay a run."""

from __future__ import annotations

import sys
from typing import Any, TypeVar, cast

from plansmith.binding import BoundPlan, BoundStep, StepPolicy, TypeCheck
from plansmith.model import JSONValue, Step, StepArg, Tier, canonical_json

__all__ = ["bound_to_dict", "bound_from_dict"]


_T = TypeVar("_T")
#: a policy key written only when false (see ``StepPolicy.resend_on_transport_lost``)
_RESEND = "resend_on_transport_lost"
#: a policy key written only when it says skip (see ``StepPolicy.skip_when_absent``)
_ABSENT = "when_absent"


class _Sharing:
    """One object for equal values while a plan is read back: the steps of a bound
    plan share their server, tool, policy, extractors and often their arguments, as
    ``bind`` made them, instead of each holding copies from the JSON (which the
    runner would hash and compare by content at every step)."""

    def __init__(self) -> None:
        self._seen: dict[Any, Any] = {}
        self._arguments: dict[str, JSONValue] = {}

    def text(self, value: JSONValue) -> str:
        return sys.intern(str(value))

    def one(self, value: _T) -> _T:
        return cast(_T, self._seen.setdefault(value, value))

    def arguments(self, value: JSONValue) -> JSONValue:
        if not isinstance(value, dict | list):
            return value
        # repr tells apart what JSON text would not (a tuple from a list, 1 from 1.0
        # or True) and keeps a dict's key order, which the tool receives
        return self._arguments.setdefault(repr(value), value)


def _pairs(value: JSONValue, share: _Sharing) -> tuple[tuple[str, str], ...]:
    items = cast(list[list[str]], value or [])
    return share.one(tuple((share.text(a), share.text(b)) for a, b in items))


def _arg(value: JSONValue) -> StepArg:
    """A step argument as the log holds it: a JSON scalar, kept with its type.

    The writer only writes scalars; anything else is kept as its JSON text.
    """
    if value is None or isinstance(value, str | int | float):
        return value
    return canonical_json(value)


def _params(value: JSONValue, share: _Sharing) -> tuple[tuple[str, StepArg], ...]:
    items = cast(list[list[JSONValue]], value or [])
    return tuple((share.text(a), _arg(b)) for a, b in items)


def _checks_to_json(checks: tuple[TypeCheck, ...]) -> JSONValue:
    return [[list(c.keys), list(c.types), c.reference] for c in checks]


def _checks(value: JSONValue, share: _Sharing) -> tuple[TypeCheck, ...]:
    """A step's ``type_checks`` as the log holds them (none in a log written before)."""
    items = cast(list[list[Any]], value or [])
    return share.one(tuple(TypeCheck(tuple(k), tuple(t), str(r)) for k, t, r in items))


def _defaults(value: JSONValue, share: _Sharing) -> tuple[tuple[str, JSONValue], ...]:
    """A step's optional outputs with their defaults (none in a log written before)."""
    items = cast(list[list[JSONValue]], value or [])
    return tuple((share.text(n), v) for n, v in items)


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
                    # written only when off: the default (and older logs) say nothing
                    **({} if s.policy.resend_on_transport_lost else {_RESEND: False}),
                    # written only when on (older logs say nothing: fail)
                    **({_ABSENT: "skip"} if s.policy.skip_when_absent else {}),
                },
                "tier": s.tier.value,
                "after": list(s.after),
                **({"type_checks": _checks_to_json(s.type_checks)} if s.type_checks else {}),
                # written only when some output is optional (older logs have none)
                **({"defaults": [[n, v] for n, v in s.defaults]} if s.defaults else {}),
            }
            for s in bound.steps
        ],
    }


def bound_from_dict(data: dict[str, JSONValue]) -> BoundPlan:
    share = _Sharing()
    steps: list[BoundStep] = []
    for raw in cast(list[dict[str, JSONValue]], data.get("steps") or []):
        policy = cast(dict[str, JSONValue], raw.get("policy") or {})
        timeout = policy.get("timeout")
        tier = policy.get("tier")
        cost = raw.get("cost", 1)
        step = Step(
            id=str(raw["id"]),
            action=share.text(raw["action"]),
            args=tuple(_arg(a) for a in cast(list[JSONValue], raw.get("args") or [])),
            cost=cost if isinstance(cost, int | float) else 1,
            after=tuple(str(a) for a in cast(list[str], raw.get("plan_after") or [])),
            tier=Tier(str(raw.get("step_tier", "write"))),
        )
        steps.append(
            BoundStep(
                step=step,
                server=share.text(raw["server"]),
                tool=share.text(raw["tool"]),
                arguments=share.arguments(raw.get("arguments")),
                params=_params(raw.get("params"), share),
                producers=_pairs(raw.get("producers"), share),
                outputs=_pairs(raw.get("outputs"), share),
                policy=share.one(
                    StepPolicy(
                        timeout=float(timeout) if isinstance(timeout, int | float) else None,
                        retries=int(cast(int, policy.get("retries") or 0)),
                        idempotent=bool(policy.get("idempotent")),
                        tier=Tier(str(tier)) if tier else None,
                        # absent (the default, an older log) or true: on
                        resend_on_transport_lost=policy.get(_RESEND) is not False,
                        skip_when_absent=policy.get(_ABSENT) == "skip",
                    )
                ),
                tier=Tier(str(raw.get("tier", "write"))),
                after=tuple(str(a) for a in cast(list[str], raw.get("after") or [])),
                type_checks=_checks(raw.get("type_checks"), share),
                defaults=_defaults(raw.get("defaults"), share),
            )
        )
    return BoundPlan(str(data.get("plan_hash", "")), tuple(steps))
