"""What plansmith's own MCP server answers: frozen result types, each a tool's output
schema. ``PlanResult.run_id`` names the run ``make_plan`` made (held for approval)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DomainSummary",
    "DomainList",
    "GoalInfo",
    "ActionInfo",
    "DomainInfo",
    "InputInfo",
    "StepInfo",
    "BindingCheck",
    "Translation",
    "PlanResult",
    "ApprovalResult",
    "RunHandle",
    "Question",
    "RunStatus",
    "RunList",
    "RunReport",
]


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class DomainSummary:
    """``ready``: the domain runs here; if not, ``reason`` says why and ``fix`` what to run
    or set. ``notes``: optional programs missing (the steps that need them fail)."""

    name: str
    domain: str
    actions: int
    tasks: int
    goals: tuple[str, ...]
    servers: tuple[str, ...]
    ready: bool = False
    reason: str = ""
    fix: str = ""
    notes: tuple[str, ...] = ()
    #: ``folder`` (a domain folder) or ``made`` (made by code: choose a scenario)
    kind: str = "folder"
    #: a made domain's scenarios (``make_plan``'s ``inputs={"scenario": NAME}``)
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class DomainList:
    domains: tuple[DomainSummary, ...]


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class GoalInfo:
    name: str
    description: str
    parameters: tuple[str, ...]
    goal: tuple[str, ...]


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class ActionInfo:
    name: str
    parameters: tuple[str, ...]
    tier: str
    server: str | None = None
    tool: str | None = None


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class InputInfo:
    """A file a request names (``make_plan``'s ``inputs``, or in its request text)."""

    name: str
    description: str
    formats: tuple[str, ...]
    needed_by: tuple[str, ...]
    kind: str = "file"  # "file", "folder" or "value"
    choices: tuple[str, ...] = ()  # a value's choices (none: any)


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class DomainInfo:
    """A domain as a host sees it: what it can do, what it offers by name, what it needs."""

    name: str
    domain: str
    actions: tuple[ActionInfo, ...]
    tasks: tuple[str, ...]
    goals: tuple[GoalInfo, ...]
    predicates: tuple[str, ...]
    objects: tuple[str, ...]
    init: tuple[str, ...]
    servers: tuple[str, ...]
    has_bindings: bool
    inputs: tuple[InputInfo, ...] = ()
    description: str = ""
    kind: str = "folder"  # ``folder``, or ``made``: made by code (choose a scenario)


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class StepInfo:
    id: str
    action: str
    args: tuple[str, ...]
    after: tuple[str, ...]
    tier: str
    server: str | None = None
    tool: str | None = None


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class BindingCheck:
    """Whether every step binds to a live tool; ``problems`` says what is missing."""

    ok: bool
    servers: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class Translation:
    """Where the goal came from: ``structured``, ``offline``, ``sampling`` or ``openai``.

    For ``needs_choice``, ``reason`` says why the translator was not sure, ``candidates``
    are ``name: description`` with each one's own reason after `` -- ``, and ``unknown``
    lists the request's words taken for objects the domain does not have."""

    source: str
    request: str | None = None
    goal: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    llm_calls: int = 0
    chosen: str | None = None
    candidates: tuple[str, ...] = ()
    reason: str = ""
    unknown: tuple[str, ...] = ()


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class PlanResult:
    """``status`` is ``planned``, or ``needs_choice`` (the translator was unsure:
    ``translation.candidates`` lists the goals to choose from, and there is no plan)."""

    status: str
    domain: str
    translation: Translation
    plan_hash: str | None = None
    steps: tuple[StepInfo, ...] = ()
    mermaid: str = ""
    tiers: tuple[str, ...] = ()
    needs_approval: bool = False
    binding: BindingCheck = field(default_factory=lambda: BindingCheck(ok=False))
    run_id: str | None = None


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class ApprovalResult:
    plan_hash: str
    approved_by: str
    tiers: tuple[str, ...]
    run_id: str | None = None


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class RunHandle:
    run_id: str
    plan_hash: str
    state: str


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class Question:
    """An ask step of a run that waits for a person's answer: its ``question``
    (rendered), ``schema`` (the answer as a JSON Schema property: what
    ``answer_question`` takes and elicitation asks), ``expects`` (the schema as people
    read it: ``one of: as_is, redact``), the answer the plan ``assumed`` and ``since``
    when it waits."""

    step: str
    action: str
    question: str
    schema: dict[str, Any]
    expects: str
    assumed: str | bool | int | float | None = None
    since: str = ""


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class RunStatus:
    """``state`` is ``awaiting answer`` when ask steps wait for a person: ``questions``
    lists them and ``hint`` says how to answer."""

    run_id: str
    plan_hash: str
    state: str
    done: int
    total: int
    percent: float
    in_flight: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()
    replans: int = 0
    error: str | None = None
    questions: tuple[Question, ...] = ()
    hint: str | None = None


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class RunList:
    runs: tuple[RunStatus, ...]


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class RunReport:
    run_id: str
    markdown: str
    report: dict[str, Any]
