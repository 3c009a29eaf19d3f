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

A trailing qualifier naming the language, platform or tool the question is asked in
("... in Python", "... with Python 3.11", "... using the standard library", "... with
pandas", "... using the csv module") never changes the kind: it is split off
(:func:`split_qualifier`) before the part is classified, and kept in ``qualifier``. A
language or platform ("in Python", "on Linux") is context: it is left out of the topic,
options and search words ("How do I read a CSV file in Python?" asks what "How do I
read a CSV file?" asks). A tool ("with tempfile", "using the csv module") names what to
use: an explain topic keeps it ("create a temporary file with tempfile"), and after a
comparison's criteria or a decision's purpose it stays part of them, as written; it
never becomes an option or a part of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
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
    "split_qualifier",
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
    #: a trailing "in/with/using <language or tool>" split off before classifying ("")
    qualifier: str = ""

    @property
    def context_only(self) -> bool:
        """Whether the qualifier names a language or platform (context, not searched)."""
        return bool(self.qualifier) and bool(_LANGUAGE_QUALIFIER.search(self.qualifier))

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
            data.get("qualifier", ""),
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

#: languages and platforms a question may be asked "in" (lower case)
_LANGUAGES = (
    r"python|cpython|pypy|jython|micropython|python\s*[23](?:\.\d+|\.x)?"
    r"|java|javascript|typescript|node(?:\.js)?|c|c\+\+|c#|rust|go|golang|ruby|perl|php"
    r"|bash|shell|zsh|powershell|kotlin|swift|scala|haskell|julia|lua|sql|r"
    r"|linux|windows|macos|mac\s*os|unix|posix|debian|ubuntu"
)
_VERSION = r"(?:\s+v?\d+(?:\.\d+)*(?:\.x)?\+?)?"
_LANGUAGE = (
    rf"(?:(?:the\s+)?(?:{_LANGUAGES}){_VERSION}(?:\s+(?:code|scripts?|programs?|language))?"
    r"|(?:the\s+|python'?s\s+)?(?:standard\s+library|stdlib|built-?ins?)"
    r"|(?:pure|plain)\s+python)"
)
#: a tool: one name (``pandas``, ``re``, ``os.path``, ``sqlite3``), "the" before it and
#: "module"/"library"/"package" after it optional
_TOOL = (
    r"(?:the\s+)?(?!(?:a|an|the|it|them|this|that|these|those|my|our|your|their|its)\b)"
    r"[A-Za-z_][\w.+-]*(?:\s+(?:module|library|package|tool|class|function|api))?"
)
_LANGUAGE_QUALIFIER = re.compile(rf"^(?:in|with|using|via|on|under)\s+{_LANGUAGE}$", re.I)
_QUALIFIER = re.compile(
    rf"\s+(?P<q>(?:in|on|under)\s+{_LANGUAGE}|(?:with|using|via)\s+(?:{_LANGUAGE}|{_TOOL}))"
    rf"(?P<end>\s*[?.!]*\s*)$",
    re.I,
)


def split_qualifier(text: str) -> tuple[str, str]:
    """``text`` without a trailing "in/with/using <language or tool>" qualifier, and the
    qualifier (``""`` when there is none): ``"How do I read a CSV file in Python?"`` ->
    ``("How do I read a CSV file?", "in Python")``. What is left must keep two words."""
    m = _QUALIFIER.search(text)
    if not m:
        return text, ""
    core = text[: m.start()].rstrip(" ,")
    if len(re.findall(r"[^\W_]+", core)) < 2:
        return text, ""
    return core + m.group("end").strip(), " ".join(m.group("q").split())


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
    """An explain question over a list of names, one part per name (each keeps the
    question's qualifier)."""
    if q.kind != "explain" or not _NAME_LIST.match(q.text):
        return [q]
    topic = q.topic
    if q.qualifier and not q.context_only and topic.endswith(f" {q.qualifier}"):
        topic = topic[: -len(q.qualifier) - 1]
    names = split_list(re.sub(r"^(?:the|a|an)\s+", "", topic, flags=re.I))
    if len(names) < 2 or any(len(n.split()) > 3 for n in names):
        return [q]
    verb = "What is"
    tail = f" {q.qualifier}" if q.qualifier else ""
    own = "" if q.context_only else tail
    return [
        Question(f"{verb} {n}{tail}", "explain", f"{n}{own}", qualifier=q.qualifier) for n in names
    ]


def _fact_topic(text: str) -> str:
    words = re.sub(r"^(?:the|a|an)\s+", "", text, flags=re.I)
    return _clean(words)


def classify_part(question: str) -> Question:
    """The kind, topic, options and criteria of one part of a question; a trailing
    qualifier ("in Python", "with pandas") is split off first (see the module)."""
    core, qualifier = split_qualifier(question)
    if not qualifier:
        return _classify_one(question)
    q = _classify_one(core)
    if q.kind != "compare" and _classify_one(question).kind == "compare":
        return _classify_one(question)  # "Compare json with pickle": "with" joins options
    context = bool(_LANGUAGE_QUALIFIER.search(qualifier))
    topic, criteria = q.topic, q.criteria
    if q.kind in ("compare", "should") and criteria and criteria != DEFAULT_CRITERIA:
        # "Compare A and B for C in Python": the qualifier is part of the criterion
        criteria = (*criteria[:-1], f"{criteria[-1]} {qualifier}")
    elif q.kind == "explain" and not context:
        topic = f"{topic} {qualifier}"
    elif q.kind == "fact" and not context:
        topic = _fact_topic(question)
    return replace(q, text=_clean(question), topic=topic, criteria=criteria, qualifier=qualifier)


def _classify_one(question: str) -> Question:
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
