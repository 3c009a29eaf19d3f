"""Classify a research question (stdlib only, rules, no model).

Three kinds, tried in this order:

* ``should``: "should we X", "is it worth/wise to X", "do we need to X"; "should we
  use A or B" keeps A and B as the options;
* ``compare``: "compare A and B [on C1, C2]", "A vs B [for C]", "difference(s)
  between A and B", "which is better, A or B"; the criteria default to features,
  performance and limitations;
* ``explain``: "what is X", "how do I X", "how to X", "explain X", and anything else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["QuestionKind", "Question", "classify", "DEFAULT_CRITERIA", "split_list"]

QuestionKind = Literal["compare", "explain", "should"]
DEFAULT_CRITERIA = ("features", "performance", "limitations")

_END = r"\s*[?.!]*\s*$"
_CRIT_WORDS = r"on|by|for|in terms of|regarding|with respect to|across|when it comes to"
_CRIT = rf"(?:\s+(?:{_CRIT_WORDS})\s+(?P<crit>.+?))?"
_SHOULD = (
    re.compile(
        rf"^\s*(?:should|shall|must)\s+(?:we|i|you|one|our team|the team|they)\s+(?P<x>.+?){_END}",
        re.I,
    ),
    re.compile(
        rf"^\s*is it (?:worth it|worth|wise|a good idea|better|advisable) to\s+(?P<x>.+?){_END}",
        re.I,
    ),
    re.compile(rf"^\s*do (?:we|i) (?:need|want) to\s+(?P<x>.+?){_END}", re.I),
)
_COMPARE = (
    re.compile(rf"^\s*(?:compare|comparing|contrast)\s+(?P<opts>.+?){_CRIT}{_END}", re.I),
    re.compile(
        rf"^\s*(?:what(?:'s| is| are) the )?differences? between\s+(?P<opts>.+?){_CRIT}{_END}", re.I
    ),
    re.compile(rf"^\s*which is better[,:]?\s+(?P<opts>.+?\s+or\s+.+?){_CRIT}{_END}", re.I),
    re.compile(
        rf"^\s*(?P<opts>.+?\s+(?:vs\.?|versus)\s+.+?)(?:\s*:\s*(?P<crit2>.+?))?{_CRIT}{_END}", re.I
    ),
)
_EXPLAIN = re.compile(
    r"^\s*(?:what(?:'s| is| are| does| do)|explain|describe|define|tell me about"
    r"|how (?:do|does|can|should|would) (?:i|we|you|one)|how (?:does|do|is|are)|how to)\s+"
    rf"(?P<t>.+?){_END}",
    re.I,
)
_TRAILING = re.compile(r"\s+(?:do|does|work|works|mean|means|used for|for)$", re.I)
_LEADING_VERB = re.compile(
    r"^(?:use|using|adopt|switch to|move to|migrate to|choose|pick|rely on|go with|upgrade to"
    r"|start using|stop using|keep using|replace)\s+",
    re.I,
)
_PURPOSE = re.compile(r"\s+(?:for|when|in)\s+(?P<p>.+)$", re.I)
_SPLIT = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|with|vs\.?|versus|or)\s+", re.I)


@dataclass(frozen=True, slots=True)
class Question:
    """A classified question: its kind, its topic, and (compare, should) options and criteria."""

    text: str
    kind: QuestionKind
    topic: str
    options: tuple[str, ...] = ()
    criteria: tuple[str, ...] = ()


def split_list(text: str) -> tuple[str, ...]:
    """``"A, B and C"`` -> ``("A", "B", "C")`` (also "or", "vs", "with")."""
    parts = [p.strip(" .,;:?!\"'") for p in _SPLIT.split(text)]
    return tuple(dict.fromkeys(p for p in parts if p))


def _clean(text: str) -> str:
    return " ".join(text.strip(" .,;:?!\"'").split())


def classify(question: str) -> Question:
    """The kind, topic, options and criteria of ``question`` (see the module)."""
    text = _clean(question)
    for pattern in _SHOULD:
        m = pattern.match(question)
        if m:
            action = _clean(m.group("x"))
            subject = _LEADING_VERB.sub("", action)
            purpose = _PURPOSE.search(subject)
            criteria: tuple[str, ...] = ()
            if purpose:
                criteria = (purpose.group("p"),)
                subject = subject[: purpose.start()]
            options = split_list(subject) if re.search(r"\s+or\s+", subject, re.I) else ()
            return Question(text, "should", subject, options=options, criteria=criteria)
    for pattern in _COMPARE:
        m = pattern.match(question)
        if m:
            options = split_list(m.group("opts"))
            if len(options) < 2:
                continue
            groups = m.groupdict()
            raw = groups.get("crit") or groups.get("crit2") or ""
            criteria = split_list(raw) or DEFAULT_CRITERIA
            return Question(text, "compare", " and ".join(options), options, criteria)
    m = _EXPLAIN.match(question)
    topic = _clean(m.group("t")) if m else text
    topic = _TRAILING.sub("", topic)
    topic = re.sub(r"^(?:use|using|work with|get started with)\s+", "", topic, flags=re.I)
    topic = re.sub(r"^(?:a|an|the)\s+", "", topic, flags=re.I)
    return Question(text, "explain", topic)
