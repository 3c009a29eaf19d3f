"""Subquestions of a classified question, and the rules that keep or drop them.

Each kind of question gives its own subquestions:

* compare: one per option and criterion ("How does json fare on speed?");
* explain: definition, usage, caveats, version history;
* should: the options, the evidence for, the evidence against (per option);
* fact: one subquestion, the question itself: its ``query`` is the words that name
  what it asks about ("Frobnicator 4.2"), its ``also`` the words of the fact asked
  ("released release date");
* compound: the subquestions of each part, each marked with its part (1, 2, ...),
  taken in turn from each part (the first of every part, then the second...), so
  that a small budget still asks something of every part. A part's entities,
  options and criteria stay in its own subquestions: nothing is crossed.

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

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from plansmith.domains.research._questions import Question, as_asked
from plansmith.domains.research._terms import STOPWORDS, similar, stem, terms
from plansmith.domains.research.verify._words import word_set

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
    part: int = 0  # the part of a compound question it belongs to (1, 2, ...); 0: none


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


def _sq(
    facet: str, text: str, query: str, also: str = "", *, option: str = "", criterion: str = ""
) -> Subquestion:
    return Subquestion("", facet, text, query, also, option, criterion)


#: words of a fact question that ask, rather than name what is asked about
_ASKING = word_set(
    """when what which who whom whose where why how many much long big large old often fast
    was were is are does do did can could has have had will would the a an of in on at by to
    for from with it its this that there since year date use used uses using get value
    number count size limit any ever first last"""
)
#: words of the fact asked -> the words a passage stating it holds
_FACT_WORDS = (
    (("released", "release", "came", "shipped", "out"), "released release"),
    (("added", "introduced", "new", "appeared", "available"), "added new version"),
    (("deprecated", "deprecate"), "deprecated version"),
    (("removed", "dropped"), "removed version"),
    (("changed",), "changed version"),
    (("default", "defaults"), "default"),
    (("support", "supports", "supported", "handle", "handles", "allow", "allows"), "supports"),
    (("maximum", "max", "most", "minimum", "min", "least"), "maximum minimum limit"),
    (("latest", "current", "newest", "version", "versions"), "version latest"),
    (("end", "eol", "life", "until"), "end life support"),
)


def _fact(q: Question) -> Subquestion:
    asked = q.text
    if q.context_only and asked.endswith(q.qualifier):
        asked = asked[: -len(q.qualifier)]  # "in Python" is context, not searched for
    words = re.findall(r"[\w.+#/-]+", asked)
    wanted: list[str] = []
    query: list[str] = []
    for word in words:
        lower = word.lower().strip(".")
        hit = [also for keys, also in _FACT_WORDS if lower in keys]
        if hit:
            wanted += [w for w in hit[0].split() if w not in wanted]
        elif lower and lower not in _ASKING and lower not in STOPWORDS:
            query.append(word.strip("."))
    return _sq("fact", _as_question(q), " ".join(query) or q.topic, " ".join(wanted))


def _as_question(q: Question) -> str:
    text = as_asked(q.text)
    return text if text.endswith("?") else text.rstrip(".!") + "?"


def propose(question: Question) -> list[Subquestion]:
    """The subquestions of ``question``'s kind (ids are given by :func:`select`)."""
    q = question
    if q.kind == "compound":
        per_part = [[replace(s, part=n) for s in propose(p)] for n, p in enumerate(q.parts, 1)]
        turns: list[Subquestion] = []
        for i in range(max(len(p) for p in per_part)):
            turns += [p[i] for p in per_part if i < len(p)]
        return turns
    if q.kind == "fact":
        return [_fact(q)]
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
    return _by_part(kept, decisions)


def _by_part(
    kept: list[Subquestion], decisions: list[Decision]
) -> tuple[list[Subquestion], list[Decision]]:
    """The kept subquestions of a compound question numbered part by part (they were
    chosen in turns), the decisions' ids renamed to match."""
    ordered = sorted(kept, key=lambda s: s.part)
    if ordered == kept:
        return kept, decisions
    names = {s.id: f"sq{n}" for n, s in enumerate(ordered, 1)}
    renamed = [replace(s, id=names[s.id]) for s in ordered]

    def rename(text: str) -> str:
        return re.sub(r"\bsq\d+\b", lambda m: names.get(m.group(0), m.group(0)), text)

    return renamed, [replace(d, reason=rename(d.reason)) for d in decisions]


def _fields(sq: Subquestion) -> tuple[str, str, str, str, str, str, int]:
    return sq.facet, sq.text, sq.query, sq.also, sq.option, sq.criterion, sq.part
