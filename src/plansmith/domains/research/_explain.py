"""The optional model calls of a research run: subquestion proposals, and an
explanation of the flagged conflicts.

With a model available, a run may ask it first for more subquestions
(:func:`proposal_prompt`, read by :func:`read_proposals`); they go through the same
rule filter as the rules' own (too small, off-topic, duplicate, over budget), marked
with the facet ``model``, so a model never adds a subquestion the rules refuse.

With a model available (the host's, through MCP sampling, or an OpenAI-compatible
endpoint), a research run may ask it once, after the verifier has labelled the claims,
why the sources may disagree on each flagged value. The flag itself always comes from
the code verifier; the model's text is shown in the report under its own heading,
marked as model text that nothing checked, and counted in the run's ``llm_calls``. A
run makes at most :data:`MAX_RESEARCH_LLM_CALLS` model calls in all (one for the
decomposition's proposals, one for this explanation). Offline, nothing is asked.

Standard library only: the faces make the call (:data:`ModelCall`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from plansmith.domains.research._questions import Question, as_asked
from plansmith.domains.research.verify import ClaimGroup

__all__ = [
    "MAX_RESEARCH_LLM_CALLS",
    "ModelCall",
    "ModelText",
    "EXPLAIN_SYSTEM_PROMPT",
    "EXPLANATION_HEADING",
    "explanation_prompt",
    "value_conflicts",
    "PROPOSE_SYSTEM_PROMPT",
    "MAX_PROPOSALS",
    "proposal_prompt",
    "read_proposals",
]

#: the most subquestions read from a model's proposals
MAX_PROPOSALS = 4
PROPOSE_SYSTEM_PROMPT = (
    "You help decompose a research question that will be answered by searching "
    "document folders. Propose subquestions, one per line, each a short question that "
    "names what it asks about. No numbering, no other text."
)

#: the most model calls one research run makes (decomposition, explanation)
MAX_RESEARCH_LLM_CALLS = 2
#: a model call: (system prompt, user prompt) -> the model's text
ModelCall = Callable[[str, str], Awaitable[str]]
#: the report's heading over the model's text
EXPLANATION_HEADING = "Model's explanation (not verified)"
EXPLAIN_SYSTEM_PROMPT = (
    "You help a reader of a research report. Sources disagree on the values listed. "
    "For each, say in one or two sentences what could explain the difference (a "
    "different version or date the sources describe, a unit, a typo, an outdated "
    "source) and which source the reader should check first. Do not invent facts; "
    "say when the sources do not tell. Plain text, no more than 200 words."
)


@dataclass(frozen=True, slots=True)
class ModelText:
    """What the model said (``text``), through what (``via``: ``openai``, ``sampling``),
    or why there is no text (``error``)."""

    via: str
    text: str = ""
    error: str = ""


def value_conflicts(groups: Sequence[ClaimGroup]) -> list[ClaimGroup]:
    """The disputed groups with a value conflict (what the explanation is about)."""
    return [
        g for g in groups if g.label == "disputed" and any(c.kind == "value" for c in g.conflicts)
    ]


def explanation_prompt(question: str, groups: Sequence[ClaimGroup], *, limit: int = 8) -> str:
    """The user prompt: the question and each flagged difference, with every value's
    source, source type, place and sentence."""
    lines = [f"Question researched: {question}", "", "Flagged differences:"]
    for n, g in enumerate(groups[:limit], 1):
        lines.append(f"{n}. {g.entity}: {g.attribute.replace('_', ' ')}")
        for c in g.claims:
            e = c.evidence
            kind = f" [{e.source_type}]" if e.source_type else ""
            first, last = e.lines_of(c.sentence)
            lines.append(
                f"   - {c.value_text}: {e.source}{kind} {e.path}:{first}-{last}: "
                f"\u201c{' '.join(c.sentence.split())[:300]}\u201d"
            )
    if len(groups) > limit:
        lines.append(f"({len(groups) - limit} more not shown)")
    lines += ["", "Explain each difference briefly."]
    return "\n".join(lines)


def proposal_prompt(question: Question, proposed: Sequence[str]) -> str:
    """The user prompt asking for more subquestions: the question, its kind (and parts),
    and the subquestions the rules propose already."""
    lines = [f"Question: {as_asked(question.text)}", f"Kind: {question.kind}"]
    lines += [f"Part {n}: {p.text} ({p.kind})" for n, p in enumerate(question.parts, 1)]
    lines.append("Subquestions already planned:")
    lines += [f"- {text}" for text in proposed] or ["(none)"]
    lines.append(
        f"Propose at most {MAX_PROPOSALS} more subquestions that would help answer the "
        "question, one per line. Each must name what it asks about; never mix the "
        "entities of two parts in one subquestion."
    )
    return "\n".join(lines)


def read_proposals(text: str) -> tuple[str, ...]:
    """The subquestions in a model's answer: one per line, bullets and numbers dropped,
    at most :data:`MAX_PROPOSALS`, each at most 200 characters."""
    out: list[str] = []
    for line in text.splitlines():
        item = line.strip().lstrip("-*\u2022 \t").strip()
        item = item.split(". ", 1)[1] if item[:1].isdigit() and ". " in item[:4] else item
        item = item.lstrip("0123456789.) ").strip()
        if len(item.split()) >= 2 and len(item) <= 200 and item not in out:
            out.append(item)
    return tuple(out[:MAX_PROPOSALS])
