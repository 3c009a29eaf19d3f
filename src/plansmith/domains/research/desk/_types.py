"""What a research run answers through the faces: its handle, its status, its report."""

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ResearchHandle", "ResearchStatus", "ResearchReport"]


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class ResearchHandle:
    run_id: str
    state: str
    question: str
    kind: str
    sources: tuple[str, ...]
    subquestions: tuple[str, ...] = ()


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class ResearchStatus:
    """``state``: starting, running, succeeded, failed or cancelled; ``done`` of
    ``total`` plan steps; the budget used so far; ``coverage_limited`` and why."""

    run_id: str
    state: str
    done: int
    total: int
    percent: float
    searches: int
    max_searches: int
    seconds: float
    max_seconds: float
    evidence: int = 0
    coverage_limited: bool = False
    reasons: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class ResearchReport:
    """The cited report (Markdown) and, with ``trace``, the whole trace of the run;
    ``llm_calls``: the model calls the run made (0 offline)."""

    run_id: str
    state: str
    markdown: str
    coverage_limited: bool
    citations: int
    trace: dict[str, Any] = field(default_factory=dict)
    llm_calls: int = 0
