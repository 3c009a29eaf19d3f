"""Classify a research question (stdlib only, rules, no model).

A question is first split into its parts (:func:`split_parts`): sentences, and
clauses joined by "and", "," or ";" that open with a question word ("Compare A
and B for C, and when was D released?" is two parts). A question of two or more
parts is ``compound``: each part is classified on its own (``parts``), so each
keeps its own options, criteria and entities. An explain part whose topic is a
list of names ("What are tomllib and zoneinfo?") becomes one part per name.

The kinds of one part, tried in this order:

* ``should``: "should we X", "is it worth/wise to X", "do we need to X"; "should we
  use A or B" keeps A and B as the options;
* ``compare``: "compare A and B [on C1, C2]", "A vs B [for C]", "difference(s)
  between A and B", "which is better, A or B"; the criteria default to features,
  performance and limitations;
* ``fact``: a question after one fact: "when was X released", "which version added
  X", "how many workers does X support", "does X support Y", "is X thread-safe";
* ``explain``: "what is X", "how do I X", "how to X", "explain X", and anything else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "QuestionKind",
    "Question",
    "classify",
    "classify_part",
    "DEFAULT_CRITERIA",
    "split_list",
    "split_parts",
    "MAX_QUESTION_BYTES",
    "as_asked",
]

QuestionKind = Literal["compare", "explain", "should", "fact", "compound"]
#: the longest question accepted (UTF-8 bytes)
MAX_QUESTION_BYTES = 10 * 1024
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
_EXPLAIN_FIRST = re.compile(r"^\s*(?:how (?:do|does|can|should|would) (?:i|we|you|one)\b)", re.I)
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
    parts: tuple[Question, ...] = ()

    @staticmethod
    def from_json(data: dict[str, Any]) -> Question:
        """A question from its ``asdict`` form (parts included)."""
        return Question(
            data["text"],
            data["kind"],
            data["topic"],
            tuple(data.get("options", ())),
            tuple(data.get("criteria", ())),
            tuple(Question.from_json(p) for p in data.get("parts", ())),
        )


def split_list(text: str) -> tuple[str, ...]:
    """``"A, B and C"`` -> ``("A", "B", "C")`` (also "or", "vs", "with")."""
    parts = [p.strip(" .,;:?!\"'") for p in _SPLIT.split(text)]
    return tuple(dict.fromkeys(p for p in parts if p))


def _clean(text: str) -> str:
    return " ".join(text.strip(" .,;:?!\"'").split())


_QWORD = (
    r"(?:when|what|which|who|whom|whose|where|why|how|is|are|was|were|does|do|did|can|could"
    r"|should|shall|must|will|would|has|have|compare|contrast|explain|describe|define|list"
    r"|name|tell me)"
)
#: where a question splits into parts: the end of a sentence, or ", and"/";"/"and"/","
#: before a clause that opens with a question word
_PART_BREAK = re.compile(
    rf"(?<=[?!])\s+|(?<=\.)\s+(?=[A-Z])|\s*;\s*(?:and\s+|also\s+)?"
    rf"|\s*,\s*(?:and\s+|but\s+|also\s+|plus\s+)?(?:also\s+)?(?={_QWORD}\b)"
    rf"|\s+(?:and|plus)\s+(?:also\s+)?(?={_QWORD}\b)",
    re.I,
)
_PRONOUN = re.compile(r"\b(?:it|they|them)\b", re.I)
_FACT = re.compile(
    r"^\s*(?:when|which|who|whom|where|since when|in which|in what|what year|what version"
    r"|how (?:many|much|long|big|large|old|often|fast)"
    r"|what(?:'s| is| was| are| were) the (?:default|maximum|minimum|max|min|latest|current"
    r"|newest|oldest|first|last|release date|version|limit|size|number|count)"
    r"|(?:does|do|did|is|are|was|were|can|has|have)\s+(?!it\b|there\b)(?=\S))",
    re.I,
)
_NAME_LIST = re.compile(
    r"^\s*(?:what(?:'s| is| are)|explain|describe|define|tell me about)\s+", re.I
)


_ASKS = re.compile(rf"^\s*{_QWORD}\b", re.I)


def as_asked(text: str) -> str:
    """A part as a reader sees it: capitalised, with "?" when it opens with a question
    word ("When was X released?"; "Compare A and B" stays as it is)."""
    text = text.strip()
    text = text[:1].upper() + text[1:]
    if _ASKS.match(text) and not text.lower().startswith(
        ("compare", "contrast", "explain", "describe", "define", "list", "name", "tell me")
    ):
        return text if text.endswith("?") else text.rstrip(".!") + "?"
    return text


def split_parts(question: str) -> list[str]:
    """The parts of ``question`` (see the module), in order; a pronoun ("it", "they")
    in a later part is left as written."""
    raw = [p.strip(" ,;") for p in _PART_BREAK.split(question.strip())]
    parts = [p for p in raw if p and len(re.findall(r"[^\W_]+", p)) >= 2]
    return parts or [question.strip()]


def classify(question: str) -> Question:
    """The kind, topic, options and criteria of ``question``, split into its parts when it
    has several (see the module)."""
    texts = split_parts(question)
    parts: list[Question] = []
    for part in texts:
        classified = classify_part(part)
        if parts and classified.kind != "should" and _PRONOUN.search(part):
            # "What is X and how do I use it?": "it" is the topic of the part before
            classified = classify_part(_PRONOUN.sub(parts[-1].topic, part, count=1))
        for q in _list_parts(classified):
            if not any(q.kind == o.kind and q.topic.lower() == o.topic.lower() for o in parts):
                parts.append(q)  # "What is X and how do I use it?": one explain part
    if len(parts) == 1:
        return parts[0]
    topic = "; ".join(p.topic for p in parts)
    return Question(_clean(question), "compound", topic, parts=tuple(parts))


def _list_parts(q: Question) -> list[Question]:
    """An explain question over a list of names, one part per name."""
    if q.kind != "explain" or not _NAME_LIST.match(q.text):
        return [q]
    names = split_list(re.sub(r"^(?:the|a|an)\s+", "", q.topic, flags=re.I))
    if len(names) < 2 or any(len(n.split()) > 3 for n in names):
        return [q]
    verb = "What are" if q.text.lower().startswith("what are") else "What is"
    return [Question(f"{verb.replace('are', 'is')} {n}", "explain", n) for n in names]


def _fact_topic(text: str) -> str:
    words = re.sub(r"^(?:the|a|an)\s+", "", text, flags=re.I)
    return _clean(words)


def classify_part(question: str) -> Question:
    """The kind, topic, options and criteria of one part of a question."""
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
    if _FACT.match(question) and not _EXPLAIN_FIRST.match(question):
        return Question(text, "fact", _fact_topic(text))
    m = _EXPLAIN.match(question)
    topic = _clean(m.group("t")) if m else text
    topic = _TRAILING.sub("", topic)
    topic = re.sub(r"^(?:use|using|work with|get started with)\s+", "", topic, flags=re.I)
    topic = re.sub(r"^(?:a|an|the)\s+", "", topic, flags=re.I)
    return Question(text, "explain", topic)
