"""The trace of a research run: what was asked, called, found, flagged and decided.

A :class:`ResearchTrace` is what the report is written from and what is kept
per run id, so that every conclusion can be followed back to its sources. It is
plain data: :meth:`ResearchTrace.to_json` gives a JSON object (with the
verifier's labelled claims and conflicts, computed from the evidence), and
:meth:`ResearchTrace.from_json` reads it back.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field
from typing import Any

from plansmith.domains.research._problem import ResearchProblem
from plansmith.domains.research._subquestions import Budget, Decision
from plansmith.domains.research.verify import ClaimGroup, Evidence, Verdict, verify

__all__ = [
    "CallRecord",
    "SubquestionRecord",
    "FollowUpRecord",
    "Usage",
    "ResearchTrace",
    "group_json",
]

TRACE_FORMAT = "plansmith.research-trace"


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One tool call of the run (a search or a fetch on one source)."""

    subquestion: str
    source: str
    tool: str
    query: str
    ok: bool = True
    hits: int = 0
    cached: bool = False
    duration_ms: float = 0.0
    error: str = ""
    step: str = ""


@dataclass(frozen=True, slots=True)
class SubquestionRecord:
    """A subquestion of the plan and what became of it (``answered``, ``no evidence``,
    ``not searched: ...``)."""

    id: str
    text: str
    facet: str
    query: str
    status: str
    option: str = ""
    criterion: str = ""


@dataclass(frozen=True, slots=True)
class FollowUpRecord:
    """A search for a third source, made because the verifier flagged a conflict.

    ``id`` (``fu1``, ...) is the ``subquestion`` of its calls and evidence; ``found``
    the passages it added that state the disputed attribute; ``outcome`` says, in
    words, what it found."""

    id: str
    entity: str
    attribute: str
    query: str
    also: str
    sources: tuple[str, ...]
    found: tuple[str, ...]
    outcome: str


@dataclass(frozen=True, slots=True)
class Usage:
    """What the run used of its budget; ``limited`` when the budget cut coverage.

    The sources' limits over time: ``delayed`` calls waited for a rate quota's slot,
    ``waited`` seconds in all; circuit breakers opened ``breaker_openings`` times and
    closed again ``breaker_recoveries`` times on this run's calls, and refused
    ``breaker_refusals`` of its searches; ``breaker_events`` says when, in words;
    ``limits`` the limits set per source, in words ("python-docs: 5 calls per 1 s;
    breaker after 5 failures in a row, cool-down 30 s; ...")."""

    subtasks: int
    searches: int
    seconds: float
    limited: bool = False
    reasons: tuple[str, ...] = ()
    delayed: int = 0
    waited: float = 0.0
    breaker_openings: int = 0
    breaker_recoveries: int = 0
    breaker_refusals: int = 0
    breaker_events: tuple[str, ...] = ()
    limits: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ResearchTrace:
    """Everything the report rests on (see the module)."""

    run_id: str
    problem: ResearchProblem
    subquestions: tuple[SubquestionRecord, ...]
    calls: tuple[CallRecord, ...]
    evidence: tuple[Evidence, ...]
    usage: Usage
    decisions: tuple[Decision, ...] = ()
    as_of: str | None = None
    max_age_days: int | None = None
    followups: tuple[FollowUpRecord, ...] = ()
    #: model calls the run made (at most 2: decomposition proposals, explanation)
    llm_calls: int = 0
    #: the model's explanation of the flagged conflicts (model text, not verified),
    #: what it came through (``openai``, ``sampling``), or why there is none
    explanation: str = ""
    explanation_via: str = ""
    explanation_error: str = ""
    _verdict: list[Verdict] = field(default_factory=list, compare=False, repr=False)

    @property
    def budget(self) -> Budget:
        return self.problem.budget

    def verdict(self) -> Verdict:
        """The verifier's labels for the evidence (computed once)."""
        if not self._verdict:
            as_of = dt.date.fromisoformat(self.as_of) if self.as_of else None
            self._verdict.append(verify(self.evidence, as_of=as_of, max_age_days=self.max_age_days))
        return self._verdict[0]

    def all_decisions(self) -> tuple[Decision, ...]:
        """The rule filter's decisions, then the run's own."""
        return self.problem.decisions + self.decisions

    def to_json(self) -> dict[str, Any]:
        verdict = self.verdict()
        return {
            "format": TRACE_FORMAT,
            "run_id": self.run_id,
            "problem": self.problem.to_json(),
            "subquestions": [asdict(s) for s in self.subquestions],
            "calls": [asdict(c) for c in self.calls],
            "evidence": [asdict(e) for e in self.evidence],
            "decisions": [asdict(d) for d in self.decisions],
            "usage": asdict(self.usage),
            "as_of": self.as_of,
            "max_age_days": self.max_age_days,
            "followups": [asdict(f) for f in self.followups],
            "llm_calls": self.llm_calls,
            "explanation": self.explanation,
            "explanation_via": self.explanation_via,
            "explanation_error": self.explanation_error,
            "claims": [group_json(g) for g in verdict.groups],
            "conflicts": [group_json(g) for g in verdict.groups if g.conflicts],
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> ResearchTrace:
        """Read a trace written by :meth:`to_json` (claims are recomputed, not read)."""
        return ResearchTrace(
            run_id=data["run_id"],
            problem=ResearchProblem.from_json(data["problem"]),
            subquestions=tuple(SubquestionRecord(**s) for s in data["subquestions"]),
            calls=tuple(CallRecord(**c) for c in data["calls"]),
            evidence=tuple(
                Evidence(**{**e, "spans": tuple(tuple(x) for x in e.get("spans", ()))})
                for e in data["evidence"]
            ),
            usage=Usage(
                **{
                    **data["usage"],
                    "reasons": tuple(data["usage"]["reasons"]),
                    "breaker_events": tuple(data["usage"].get("breaker_events", ())),
                    "limits": tuple(data["usage"].get("limits", ())),
                }
            ),
            decisions=tuple(Decision(**d) for d in data.get("decisions", [])),
            as_of=data.get("as_of"),
            max_age_days=data.get("max_age_days"),
            followups=tuple(
                FollowUpRecord(**{**f, "sources": tuple(f["sources"]), "found": tuple(f["found"])})
                for f in data.get("followups", [])
            ),
            llm_calls=int(data.get("llm_calls", 0)),
            explanation=str(data.get("explanation", "")),
            explanation_via=str(data.get("explanation_via", "")),
            explanation_error=str(data.get("explanation_error", "")),
        )


def group_json(group: ClaimGroup) -> dict[str, Any]:
    """A labelled claim group as JSON (claims cited by source, path, lines, passage)."""
    return {
        "entity": group.entity,
        "attribute": group.attribute,
        "kind": group.kind,
        "label": group.label,
        "agreeing": group.agreeing,
        "sources": list(group.sources),
        "values": {value: list(sources) for value, sources in group.values},
        "conflicts": [{"kind": c.kind, "detail": c.detail} for c in group.conflicts],
        "claims": [
            {
                "value": c.value_text,
                "sentence": c.sentence,
                "source": c.evidence.source,
                "source_type": c.evidence.source_type,
                "path": c.evidence.path,
                "passage": c.evidence.passage,
                "lines": list(c.evidence.lines_of(c.sentence)),
            }
            for c in group.claims
        ],
    }
