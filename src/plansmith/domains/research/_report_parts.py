"""The sections of the research report (see :mod:`._report` for the citation form)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from plansmith.domains.research._explain import EXPLANATION_HEADING, MAX_RESEARCH_LLM_CALLS
from plansmith.domains.research._questions import Question, as_asked
from plansmith.domains.research._source_types import weight
from plansmith.domains.research._subquestions import Subquestion
from plansmith.domains.research._trace import CallRecord, ResearchTrace, SubquestionRecord
from plansmith.domains.research.verify import Claim, ClaimGroup, Verdict, claims_of

__all__ = ["Citation", "Writer"]


@dataclass(frozen=True, slots=True)
class Citation:
    """Where a quoted sentence is: the source, path, lines and passage id, and the quote."""

    source: str
    path: str
    line_start: int
    line_end: int
    passage: str
    quote: str

    def marker(self) -> str:
        return f"({self.source}: {self.path}:{self.line_start}-{self.line_end}, {self.passage})"


Quotes = Mapping[str, Sequence[Citation]]
#: a question (or one part of a compound question) and its subquestions
Parts = Sequence[tuple[Question, Sequence[SubquestionRecord]]]
#: subquestion id -> the disputed claims ("entity: attribute") found in its evidence
Disputes = Mapping[str, Sequence[str]]


class Writer:
    """Accumulates Markdown lines, the sections written, and every citation used."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.sections: list[str] = []
        self.citations: list[Citation] = []

    def line(self, text: str) -> None:
        self.lines.append(text)

    def section(self, title: str) -> None:
        self.lines += ["", f"## {title}", ""]
        self.sections.append(title)

    def cite(self, c: Citation, prefix: str = "", indent: str = "") -> None:
        """A quoted sentence with its citation, on one line."""
        self.citations.append(c)
        self.lines.append(f"{indent}- {prefix}\u201c{' '.join(c.quote.split())}\u201d {c.marker()}")

    def text(self) -> str:
        return "\n".join(self.lines).rstrip() + "\n"

    # -- sections ---------------------------------------------------------------

    def background(self, parts: Parts, quotes: Quotes) -> None:
        self.section("Background")
        wrote = False
        for q, sqs in parts:
            if q.kind == "compare":
                for option in q.options:
                    mine = [c for sq in sqs if sq.option == option for c in quotes[sq.id]]
                    if mine:
                        self.cite(mine[0], f"{option}: ")
                        wrote = True
            elif q.kind in ("explain", "should"):
                facet = "definition" if q.kind == "explain" else "options"
                for sq in sqs:
                    if sq.facet == facet:
                        for c in quotes[sq.id]:
                            self.cite(c)
                            wrote = True
        if not wrote:
            self.line("- No passage for the background was found within the budget.")

    def findings(self, parts: Parts, quotes: Quotes, disputes: Disputes) -> None:
        """The comparison (a compare question) or the findings; a compound question's
        parts each under their own heading, each with its own subquestions only."""
        compound = len(parts) > 1
        if not compound and parts[0][0].kind == "compare":
            self.section("Comparison")
            self._comparison(parts[0][0], parts[0][1], quotes, disputes, "###")
            return
        self.section("Findings")
        for n, (q, sqs) in enumerate(parts, 1):
            sub = "###"
            if compound:
                self.lines += [f"### Part {n} ({q.kind}): {as_asked(q.text)}", ""]
                sub = "####"
            if q.kind == "compare":
                self._comparison(q, sqs, quotes, disputes, sub)
                continue
            skip = "definition" if q.kind == "explain" else "options" if q.kind == "should" else ""
            for sq in sqs:
                if sq.facet == skip:
                    continue
                if not (compound and q.kind == "fact"):
                    self.lines += [f"{sub} {sq.text}", ""]
                for c in quotes[sq.id]:
                    self.cite(c)
                self._disputes(sq, disputes)
                if not quotes[sq.id] and not disputes.get(sq.id):
                    self.line(f"- {_missing(sq)}")
                self.line("")

    def _comparison(
        self,
        q: Question,
        sqs: Sequence[SubquestionRecord],
        quotes: Quotes,
        disputes: Disputes,
        heading: str,
    ) -> None:
        for option in q.options:
            self.lines += [f"{heading} {option}", ""]
            for sq in sqs:
                if sq.option == option:
                    found = quotes[sq.id]
                    if found:
                        self.cite(found[0], f"**{sq.criterion}**: ")
                    elif not disputes.get(sq.id):
                        self.line(f"- **{sq.criterion}**: {_missing(sq)}")
                    self._disputes(sq, disputes)
            self.line("")

    def _disputes(self, sq: SubquestionRecord, disputes: Disputes) -> None:
        for about in disputes.get(sq.id, ()):
            self.line(f"- Sources disagree on {about}: see Disputed claims.")

    def evidence_chain(
        self,
        sqs: Sequence[SubquestionRecord],
        chain: Quotes,
        calls: Sequence[CallRecord],
        specs: Sequence[Subquestion],
    ) -> None:
        self.section("Evidence chain")
        also = {s.id: s.also for s in specs}
        for sq in sqs:
            self.lines += [f"### {sq.id}: {sq.text}", ""]
            extra = f" (ranked first if holding one of: {also[sq.id]})" if also.get(sq.id) else ""
            self.line(f"- Query `{sq.query}`{extra}; status: {sq.status}.")
            for call in calls:
                if call.subquestion == sq.id:
                    how = f"{call.hits} hits" if call.ok else f"failed: {call.error}"
                    cached = ", from the cache" if call.cached else ""
                    self.line(f"- {call.tool} on {call.source}: {how}{cached}.")
            for c in chain[sq.id]:
                self.cite(c)
            self.line("")

    def disputed(self, verdict: Verdict) -> None:
        self.section("Disputed claims")
        groups = verdict.with_label("disputed")
        if not groups:
            self.line("- None: no two claims found disagree on a version, date, amount or count.")
        for g in groups:
            self.lines += [f"### {g.entity}: {g.attribute}", ""]
            for conflict in g.conflicts:
                self.line(f"- Flagged ({conflict.kind}): {conflict.detail}.")
            weighed = _weighed(g)
            if weighed:
                self.line(f"- Weighed by source type: {weighed}.")
            for claim in g.claims:
                kind = f" [{claim.evidence.source_type}]" if claim.evidence.source_type else ""
                self.cite(
                    _claim_citation(claim),
                    f"{claim.evidence.source} says {claim.value_text}{kind}: ",
                )
            self.line("")

    def explanation(self, trace: ResearchTrace) -> None:
        """The model's explanation of the flagged conflicts, marked as model text (none
        asked: no section)."""
        if not (trace.explanation or trace.explanation_error):
            return
        self.section(EXPLANATION_HEADING)
        via = f" ({trace.explanation_via})" if trace.explanation_via else ""
        if not trace.explanation:
            self.line(
                f"- A model{via} was asked once to explain the disputed claims and gave no "
                f"explanation: {trace.explanation_error}."
            )
            return
        self.line(
            f"*Model text{via}, not verified: nothing below was checked against the "
            "sources, and it cites none. The disputed claims above are the verifier's.*"
        )
        self.line("")
        for line in trace.explanation.strip().splitlines():
            self.line(f"> {line}".rstrip())

    def followups(self, trace: ResearchTrace) -> None:
        """What the searches made because of a conflict found (none: no section)."""
        if not trace.followups:
            return
        self.section("Follow-up searches")
        for f in trace.followups:
            searched = ", ".join(f.sources) or "no source"
            also = f" (ranked first if holding one of: {f.also})" if f.also else ""
            self.line(
                f"- {f.id}: conflict on {f.entity}: {f.attribute}; searched {searched} for "
                f"`{f.query}`{also}: {f.outcome}."
            )
            for e in trace.evidence:
                if e.subquestion == f.id:
                    for c in claims_of(e):
                        if (c.entity, c.attribute) == (f.entity, f.attribute):
                            self.cite(_claim_citation(c), "found: ", indent="  ")

    def conclusions(self, parts: Parts, quotes: Quotes, verdict: Verdict) -> None:
        self.section("Conclusions and recommendations")
        for g in verdict.with_label("consistent"):
            self._agreed(g)
        singles = verdict.with_label("single-source")
        for g in singles[:10]:
            self.cite(_claim_citation(g.claims[0]), "Single source: ")
        if len(singles) > 10:
            self.line(f"- {len(singles) - 10} more single-source claims are in the trace.")
        disputed = verdict.with_label("disputed")
        if disputed:
            self.line(
                f"- {len(disputed)} claims are disputed (see Disputed claims); "
                "no conclusion rests on them: check them before relying on them."
            )
        for n, (q, sqs) in enumerate(parts, 1):
            if len(parts) > 1:
                self.line(f"- Part {n} ({q.kind}): {as_asked(q.text)}")
            if q.kind == "compare":
                for option in q.options:
                    mine = [sq for sq in sqs if sq.option == option]
                    found = sum(1 for sq in mine if quotes[sq.id])
                    self.line(f"- {option}: evidence found on {found} of {len(mine)} criteria.")
            elif q.kind == "should":
                self._recommend(q, sqs, quotes, bool(disputed))
            elif q.kind == "fact":
                for sq in sqs:
                    found = len(quotes[sq.id])
                    self.line(f"- {sq.text} {found} quoted passage(s) found ({sq.status}).")
            else:
                for sq in sqs:
                    if sq.facet == "definition" and quotes[sq.id]:
                        self.cite(quotes[sq.id][0], "In short: ")

    def _agreed(self, g: ClaimGroup) -> None:
        first = g.claims[0]
        self.cite(_claim_citation(first), f"Agreed by {g.agreeing} sources: ")
        shown = {first.evidence.source}
        for claim in g.claims[1:]:
            if claim.evidence.source not in shown:
                shown.add(claim.evidence.source)
                self.cite(_claim_citation(claim), "also: ", indent="  ")

    def _recommend(
        self, q: Question, sqs: Sequence[SubquestionRecord], quotes: Quotes, disputed: bool
    ) -> None:
        for option in q.options or (q.topic,):
            pros = [
                c for sq in sqs if sq.facet == "pros" and sq.option == option for c in quotes[sq.id]
            ]
            cons = [
                c for sq in sqs if sq.facet == "cons" and sq.option == option for c in quotes[sq.id]
            ]
            lean = "for" if len(pros) > len(cons) else "against" if cons else "neither way"
            self.line(
                f"- {option}: {len(pros)} quoted passages for, {len(cons)} against; "
                f"the evidence found leans {lean}."
            )
            if pros:
                self.cite(pros[0], "Strongest for: ", indent="  ")
            if cons:
                self.cite(cons[0], "Strongest against: ", indent="  ")
        advice = "Recommendation: decide on the passages above"
        if disputed:
            advice += ", after checking the disputed claims"
        self.line(f"- {advice}; this report weighs evidence, it does not decide.")

    def coverage(self, trace: ResearchTrace) -> None:
        self.section("Coverage and budget")
        sqs = trace.subquestions
        answered = sum(1 for s in sqs if s.status == "answered")
        dropped = [d for d in trace.all_decisions() if not d.kept]
        b, u = trace.budget, trace.usage
        self.line(
            f"- Subquestions: {answered} answered of {len(sqs)} planned; "
            f"{len(dropped)} dropped by the rules."
        )
        for d in dropped:
            self.line(f"- Dropped: {d.subquestion} ({d.reason}).")
        self.line(
            f"- Budget used: {u.subtasks} of {b.max_subtasks} subtasks, {u.searches} of "
            f"{b.max_searches} searches, {u.seconds:.1f} of {b.max_seconds:g} seconds."
        )
        if trace.llm_calls:
            self.line(
                f"- Model calls: {trace.llm_calls} (of at most {MAX_RESEARCH_LLM_CALLS}); "
                "the verifier's labels never come from a model."
            )
        if u.delayed or u.breaker_openings or u.breaker_recoveries or u.breaker_refusals:
            self.line(
                f"- Source limits: {u.delayed} call(s) delayed by a rate quota "
                f"({u.waited:.1f} s waited in all); circuit breakers opened "
                f"{u.breaker_openings} time(s), recovered {u.breaker_recoveries} time(s), "
                f"refused {u.breaker_refusals} search(es)."
            )
        for limit in u.limits:
            self.line(f"- Limits of {limit}.")
        if u.limited:
            self.line("- Coverage limited: " + "; ".join(u.reasons or ("budget reached",)) + ".")
        else:
            self.line("- Coverage: every planned subquestion was searched within the budget.")


def _facet_quotes(
    sqs: Sequence[SubquestionRecord], quotes: Quotes, facet: str, option: str
) -> list[Citation]:
    return [c for sq in sqs if sq.facet == facet and sq.option == option for c in quotes[sq.id]]


def _weighed(g: ClaimGroup) -> str:
    """Which value the weightiest source type backs, when the types differ."""
    best: dict[str, tuple[int, str, str]] = {}  # value -> (weight, type, source)
    for c in g.claims:
        t = c.evidence.source_type
        if not t:
            continue
        mine = (weight(t), t, c.evidence.source)
        if c.value_text not in best or mine[0] > best[c.value_text][0]:
            best[c.value_text] = mine
    if len(best) < 2:
        return ""
    ranked = sorted(best.items(), key=lambda kv: -kv[1][0])
    (top, (w1, t1, s1)), (_, (w2, t2, _s2)) = ranked[0], ranked[1]
    if w1 == w2:
        return f"the values come from sources of equal weight ({t1}, {t2}): neither outweighs"
    return f"{top} is backed by the weightiest source type, {t1} ({s1}); the others: " + ", ".join(
        f"{v} ({t})" for v, (_, t, _s) in ranked[1:]
    )


def _missing(sq: SubquestionRecord) -> str:
    return "no evidence found" if sq.status == "answered" else f"not answered ({sq.status})"


def _claim_citation(claim: Claim) -> Citation:
    e = claim.evidence
    first, last = e.lines_of(claim.sentence)
    return Citation(e.source, e.path, first, last, e.passage, claim.sentence)
