"""Write the research report from a trace (pure): Markdown plus its citations.

Sections: background; comparison (compare) or findings (explain, should, fact;
a compound question's parts each under their own heading); evidence chain;
disputed claims (each value with its source, type and lines, weighed by source
type); follow-up searches (what the searches made on a conflict found); the model's
explanation of the disputed claims, when a model was asked (under a heading saying it
is model text, not verified, quoted as a block: it cites nothing);
conclusions and recommendations; coverage and budget. Every sentence that
states a fact is a quote of a source, written as

    - “<exact words of the passage>” (<source>: <path>:<first line>-<last line>, <passage id>)

so a reader, or a test, can fetch the passage and find the words. Other lines
speak about the research itself (what was searched, what was found, what the
budget allowed) and quote nothing. Disputed claims are listed in their own
section, and no other section quotes them. When the budget cut the run short, the
report says "coverage limited" at the top and in the coverage section.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from plansmith.domains.research._questions import Question, as_asked
from plansmith.domains.research._quotes import best_sentences, score
from plansmith.domains.research._report_parts import Citation, Writer
from plansmith.domains.research._terms import terms
from plansmith.domains.research._trace import ResearchTrace, SubquestionRecord

__all__ = ["Citation", "Report", "write_report"]

_NAME = re.compile(r"^[A-Z]|[._]\w|\d")


@dataclass(frozen=True, slots=True)
class Report:
    """The report's Markdown, every citation in it, and whether coverage was limited."""

    markdown: str
    citations: tuple[Citation, ...]
    coverage_limited: bool
    sections: tuple[str, ...]
    llm_calls: int = 0  # model calls the run made (0 offline)

    def to_json(self) -> dict[str, Any]:
        return {
            "markdown": self.markdown,
            "citations": [asdict(c) for c in self.citations],
            "coverage_limited": self.coverage_limited,
            "sections": list(self.sections),
            "llm_calls": self.llm_calls,
        }


def _quotes(
    trace: ResearchTrace, sq: SubquestionRecord, n: int, avoid: set[tuple[str, str]]
) -> list[Citation]:
    """The ``n`` best quotes of a subquestion's evidence (one per piece of evidence, the
    ones holding the most words asked, then in evidence order), no repeats, none
    holding a sentence of ``avoid`` (passage id, sentence): the disputed claims."""
    spec = {s.id: s for s in trace.problem.subquestions}.get(sq.id)
    asked = terms(sq.query)
    wanted = terms(f"{sq.query} {spec.also if spec else ''}")
    # a quote names what is asked about: a fact's, every word of its query; any other's,
    # every name in it ("Xylophonix", "TOML", "os.path")
    names = terms(" ".join(w for w in sq.query.split() if _NAME.search(w)))
    needed = asked if sq.facet == "fact" else names
    found: list[tuple[int, int, Citation]] = []
    seen: set[tuple[str, str]] = set()
    for order, e in enumerate(trace.evidence):
        if e.subquestion != sq.id:
            continue
        for s, t in best_sentences(e.text, wanted, 1):
            quote = e.text[s:t]
            held = score(quote, asked)
            whole = score(quote, needed) == len(needed)
            if (e.passage, quote) in seen or len(quote.split()) < 3 or not whole or not held:
                continue  # a quote must be about what was asked, not only near it
            if any(p == e.passage and (x in quote or quote in x) for p, x in avoid):
                continue
            seen.add((e.passage, quote))
            first, last = e.lines_of(quote)
            cited = Citation(e.source, e.path, first, last, e.passage, quote)
            found.append((-score(quote, wanted), order, cited))
    return [c for _, _, c in sorted(found, key=lambda x: (x[0], x[1]))[:n]]


def _parts(trace: ResearchTrace) -> list[tuple[Question, list[SubquestionRecord]]]:
    """The question's parts with their own subquestions (a simple question: itself)."""
    q = trace.problem.question
    if not q.parts:
        return [(q, list(trace.subquestions))]
    part_of = {s.id: s.part for s in trace.problem.subquestions}
    return [
        (p, [sq for sq in trace.subquestions if part_of.get(sq.id) == n])
        for n, p in enumerate(q.parts, 1)
    ]


def write_report(trace: ResearchTrace, *, per_subquestion: int = 2) -> Report:
    """The report of ``trace`` (see the module)."""
    w = Writer()
    problem = trace.problem
    q = problem.question
    sqs = trace.subquestions
    verdict = trace.verdict()
    avoid = {
        (c.evidence.passage, c.sentence) for g in verdict.with_label("disputed") for c in g.claims
    }
    quotes = {sq.id: _quotes(trace, sq, per_subquestion, avoid) for sq in sqs}
    chain = {sq.id: _quotes(trace, sq, 6, avoid) for sq in sqs}
    sources = ", ".join(name for _, name in problem.sources)
    w.line(f"# Research report: {q.text}")
    w.line("")
    w.line(f"*Question kind: {q.kind}. Sources: {sources}. Run: {trace.run_id}.*")
    if trace.usage.limited:
        w.line("")
        w.line("**Coverage limited**: " + "; ".join(trace.usage.reasons or ("budget reached",)))
    if q.parts:
        w.line("")
        w.line(f"*Decomposed into {len(q.parts)} parts, each with its own subquestions:*")
        for n, part in enumerate(q.parts, 1):
            mine = ", ".join(s.id for s in problem.subquestions if s.part == n) or "none kept"
            w.line(f"{n}. ({part.kind}) {as_asked(part.text)} \u2014 {mine}")
    parts = _parts(trace)
    disputes: dict[str, list[str]] = {}
    queries = {s.id: terms(s.query) for s in problem.subquestions}
    for g in verdict.with_label("disputed"):
        for c in g.claims:
            asked = queries.get(c.evidence.subquestion, [])
            if not score(g.entity, [t for t in asked if len(t) >= 3]):
                continue  # a dispute in the passage, not about what was asked
            about = disputes.setdefault(c.evidence.subquestion, [])
            if f"{g.entity}: {g.attribute}" not in about:
                about.append(f"{g.entity}: {g.attribute}")
    w.background(parts, quotes)
    w.findings(parts, quotes, disputes)
    w.evidence_chain(sqs, chain, trace.calls, problem.subquestions)
    w.disputed(verdict)
    w.followups(trace)
    w.explanation(trace)
    w.conclusions(parts, quotes, verdict)
    w.coverage(trace)
    return Report(
        markdown=w.text(),
        citations=tuple(w.citations),
        coverage_limited=trace.usage.limited,
        sections=tuple(w.sections),
        llm_calls=trace.llm_calls,
    )
