"""The plan artifact: a DAG of ground steps with a content hash.

A plan is what people and hosts inspect and approve before anything runs. Its
canonical JSON (``Plan.to_dict``) holds a format version, the hashes of the
domain and the problem, the planner settings, the total cost, the steps (each
with the ids it depends on, ``after``) and, for HTN plans, the decomposition
tree. ``hash`` is the sha256 of that JSON without the ``hash`` key, so the same
inputs give the same bytes and the same hash in any process.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from plansmith.model._canonical import JSONValue, canonical_json, canonical_value, content_hash
from plansmith.model._domain import Number, Tier

__all__ = [
    "PLAN_FORMAT",
    "PLAN_FORMAT_VERSION",
    "SettingValue",
    "StepArg",
    "Step",
    "DecompositionNode",
    "Plan",
]

PLAN_FORMAT = "plansmith.plan"
PLAN_FORMAT_VERSION = 1

SettingValue = str | int | float | bool | None

#: An argument of a step: an object name (classical and YAML HTN plans), or any
#: JSON scalar (plans of Python-function domains, whose actions take numbers).
StepArg = str | int | float | bool | None


@dataclass(frozen=True, slots=True)
class Step:
    """One ground action of the plan; ``after`` lists the step ids it depends on."""

    id: str
    action: str
    args: tuple[StepArg, ...] = ()
    cost: Number = 1
    after: tuple[str, ...] = ()
    tier: Tier = Tier.WRITE

    def __str__(self) -> str:
        text = ", ".join(a if isinstance(a, str) else canonical_json(a) for a in self.args)
        return f"{self.action}({text})"


@dataclass(frozen=True, slots=True)
class DecompositionNode:
    """A node of an HTN decomposition: a task and the method used, or a primitive step."""

    task: str
    args: tuple[str, ...] = ()
    method: str | None = None
    step: str | None = None
    children: tuple[DecompositionNode, ...] = ()


@dataclass(frozen=True, slots=True)
class Plan:
    """A plan for ``problem`` in ``domain``; see the module docstring."""

    domain: str
    problem: str
    domain_hash: str
    problem_hash: str
    steps: tuple[Step, ...] = ()
    settings: tuple[tuple[str, SettingValue], ...] = ()
    decomposition: tuple[DecompositionNode, ...] = ()
    version: int = PLAN_FORMAT_VERSION
    _hash: str = field(default="", init=False, compare=False, repr=False)

    @property
    def cost(self) -> Number:
        total: Number = 0
        for s in self.steps:
            total += s.cost
        return total

    def step(self, step_id: str) -> Step | None:
        for s in self.steps:
            if s.id == step_id:
                return s
        return None

    def content(self) -> dict[str, JSONValue]:
        """The canonical JSON object of the plan, without its hash."""
        body: dict[str, JSONValue] = {
            "format": PLAN_FORMAT,
            "version": self.version,
            "domain": {"name": self.domain, "hash": self.domain_hash},
            "problem": {"name": self.problem, "hash": self.problem_hash},
            "planner": dict(self.settings),
            "cost": canonical_value(self.cost),
            "steps": [
                {
                    "id": s.id,
                    "action": s.action,
                    "args": list(s.args),
                    "cost": canonical_value(s.cost),
                    "after": list(s.after),
                    "tier": s.tier.value,
                }
                for s in self.steps
            ],
        }
        if self.decomposition:
            body["decomposition"] = [canonical_value(n) for n in self.decomposition]
        return body

    @property
    def hash(self) -> str:
        """``sha256:<hex>`` of the canonical plan JSON without the ``hash`` key."""
        if not self._hash:
            object.__setattr__(self, "_hash", content_hash(self.content()))
        return self._hash

    def to_dict(self) -> dict[str, JSONValue]:
        """The canonical plan JSON object, hash included."""
        body = self.content()
        body["hash"] = self.hash
        return body
