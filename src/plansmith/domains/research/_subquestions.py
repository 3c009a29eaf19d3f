"""Subquestions of a classified question, and the rules that keep or drop them.

Each kind of question gives its own subquestions:

* compare: one per option and criterion ("How does json fare on speed?");
* explain: definition, usage, caveats, version history;
* should: the options, the evidence for, the evidence against (per option).

Every subquestion has a ``query`` (the words every source must match) and
``also`` (words of which a passage should hold one: "example", "warning",
"version"...), so the search stays on the topic.

Extra subquestions (proposed by a model, say) go through the same rules as
the generated ones. The rules, in order, and what each decision records:

1. too small: the subquestion has no term of three letters or more;
2. off-topic: it shares no term (on five-letter stems) with the question;
3. duplicate: it asks about a term an already kept subquestion asks about, and
   their words (query and ``also``) overlap by 80% or more;
4. over budget: keeping it would pass ``max_subtasks``, or its searches (one per
   source) would pass ``max_searches``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from plansmith.domains.research._questions import Question
from plansmith.domains.research._terms import similar, stem, terms

__all__ = ["Budget", "Subquestion", "Decision", "propose", "select"]

DUPLICATE = 0.8


@dataclass(frozen=True, slots=True)
class Budget:
    """The most a research run may do: subquestions, searches (calls), and seconds."""

    max_subtasks: int = 12
    max_searches: int = 48
    max_seconds: float = 300.0


@dataclass(frozen=True, slots=True)
class Subquestion:
    """A question a person reads (``text``), its facet and what the sources are asked."""

    id: str
    facet: str
    text: str
    query: str
    also: str = ""
    option: str = ""
    criterion: str = ""


@dataclass(frozen=True, slots=True)
class Decision:
    """Why a subquestion was kept or dropped."""

    subquestion: str
    kept: bool
    reason: str


_DEFINITION = "provides module class function defined interface is"
_USAGE = "example usage use call returns"
_CAVEATS = "note warning caveat deprecated limitation not"
_HISTORY = "version added changed deprecated new removed"
_PROS = "advantage benefit recommended faster simpler safe convenient"
_CONS = "disadvantage limitation warning caveat deprecated slower unsafe not"
_ALTERNATIVES = "alternative instead see also compared"


def _sq(facet: str, text: str, query: str, also: str = "", **kw: str) -> Subquestion:
    return Subquestion("", facet, text, query, also, **kw)


def propose(question: Question) -> list[Subquestion]:
    """The subquestions of ``question``'s kind (ids are given by :func:`select`)."""
    q = question
    if q.kind == "compare":
        return [
            _sq("criterion", f"How does {o} fare on {c}?", o, c, option=o, criterion=c)
            for o in q.options
            for c in q.criteria
        ]
    if q.kind == "explain":
        t = q.topic
        return [
            _sq("definition", f"What is {t}?", t, _DEFINITION),
            _sq("usage", f"How is {t} used?", t, _USAGE),
            _sq("caveats", f"What are the caveats of {t}?", t, _CAVEATS),
            _sq("history", f"What is the version history of {t}?", t, _HISTORY),
        ]
    options = q.options or (q.topic,)
    purpose = " ".join(q.criteria)
    out = [_sq("options", f"What are the options besides {q.topic}?", q.topic, _ALTERNATIVES)]
    for o in options:
        out.append(_sq("pros", f"What speaks for {o}?", o, f"{_PROS} {purpose}", option=o))
        out.append(_sq("cons", f"What speaks against {o}?", o, f"{_CONS} {purpose}", option=o))
    return out


def _rule(sq: Subquestion, question_terms: list[str], kept: list[Subquestion]) -> str | None:
    words = terms(sq.query)
    if not any(len(t) >= 3 for t in words):
        return f"too small: {sq.query!r} has no term of three letters or more"
    stems = {stem(t) for t in question_terms}
    if not any(stem(t) in stems for t in words):
        return "off-topic: shares no term with the question"
    own = terms(f"{sq.query} {sq.also}")
    for other in kept:
        shared = {stem(t) for t in words} & {stem(t) for t in terms(other.query)}
        overlap = similar(own, terms(f"{other.query} {other.also}"))
        if shared and overlap >= DUPLICATE:
            return f"duplicate of {other.id} ({other.text!r}, overlap {overlap:.0%})"
    return None


def select(
    question: Question,
    candidates: Iterable[Subquestion],
    budget: Budget,
    n_sources: int,
) -> tuple[list[Subquestion], list[Decision]]:
    """Keep or drop each candidate by the rules (see the module); ids ``sq1``, ``sq2``, ...
    go to the kept ones in order."""
    question_terms = terms(question.text)
    kept: list[Subquestion] = []
    decisions: list[Decision] = []
    for sq in candidates:
        reason = _rule(sq, question_terms, kept)
        if reason is None and len(kept) + 1 > budget.max_subtasks:
            reason = f"over budget: max_subtasks is {budget.max_subtasks}"
        if reason is None and (len(kept) + 1) * max(1, n_sources) > budget.max_searches:
            reason = (
                f"over budget: {len(kept) + 1} subquestions x {n_sources} sources would pass "
                f"max_searches {budget.max_searches}"
            )
        if reason is not None:
            decisions.append(Decision(sq.text, False, reason))
            continue
        named = Subquestion(f"sq{len(kept) + 1}", *_fields(sq))
        kept.append(named)
        decisions.append(Decision(sq.text, True, f"kept as {named.id} ({sq.facet})"))
    return kept, decisions


def _fields(sq: Subquestion) -> tuple[str, str, str, str, str, str]:
    return sq.facet, sq.text, sq.query, sq.also, sq.option, sq.criterion
