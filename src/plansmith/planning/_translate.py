"""The offline natural-language translator: a deterministic matcher over a domain's
declared ``goals:`` (pure: no model, no I/O; the same request gives the same answer).

**Tokens.** The request is lowercased and cut into tokens: first the names of the known
objects (the request's objects and the domain's constants, longest first, as whole
words), then words (``[a-z0-9]`` runs, joined by ``.``, ``_`` or ``-`` inside one token:
``plate_1``, ``q3-draft``). Stop words (articles, pronouns, prepositions, politeness,
generic verbs such as *make*, *do*, *get*) and bare numbers carry no meaning. The other
words are stemmed by a light suffix stripper (*indexed*, *indexing*, *indexes* -> *index*;
*summarise*, *summary* -> *summar*); *re-* before a known word is that word (*reindex*).
A token shaped like an identifier (a digit next to letters, or ``.``/``_``/``-`` inside)
that is not an object is a word only when it is a name the domain declares
(``cycled_plate``); otherwise it is foreign (``plate7``, ``plate_a``).

**Goals.** A goal's vocabulary is the words of its name, its description, the
predicates of its goal literals and its parameters' type names. A request word matches
a vocabulary word when their stems are equal or, for a word known to no goal and not to
the domain, when the word has at least 5 letters and is one edit (insertion, deletion,
substitution or swap of neighbours) from a vocabulary word, or its stem from a vocabulary
stem, of at least 5 letters (*serchable*, *indxe*). A goal's ``score`` counts the
distinct request words it matches; its ``weight`` adds ``2N / k`` for each word of its
name and ``N / k`` for each other word, where ``N`` is the number of goals and ``k`` the
number of goals the word matches: a word of one goal counts more than a word of all.
A goal is named (``by_name``) when every word of its name is matched.

**The answer.** Goals named come first, then by weight, then by name; the first is the
*best*. The answer is ``sure`` (``goal`` is the best goal's ground goal) when all hold
(the reasons, in this order, are joined by ``; ``):

- no other goal ranks equal (same ``by_name``, same weight): else *"'x' ties with
  'summarised' (2 words each): name the goal"*;
- no token is an unknown object reference (below): else *"'gamma' is not an object of
  this domain: pass it in objects"* (with *did you mean 'notes'?* when one is a typo
  away);
- no other goal matches a request word that the best does not, other than a type's
  name (two goals asked at once): else *"the request also asks for 'y' ('index'): one
  goal at a time"*;
- it matches a request word that is neither an object's name nor a type's (*plate p1*
  says no more than which plate): else *"the request names only 'plate': say what to
  do"*;
- the request names an object of the best goal, or its foreign words (known to no goal
  and to none of the domain's types, predicates, actions, tasks, constants or goals) are
  fewer than its matched words: else *"too little of the request matches 'x' (...)"*
  (*run a marathon* is no test run);
- every parameter is filled: else *"which document? name one of: notes, q3"* (or *"this
  domain has no seqset object: pass one in objects"*).

A request that matches no goal at all is never planned: the reason is *"no goal of
DOMAIN matches '...'"*, and the candidates are the goals that could take an object the
request names, without a ground goal, or none (*order a pizza*). Every candidate but a
sure answer's best has a non-empty ``reason``; so has every answer that is not sure.

**Parameters.** Each parameter takes the named objects whose type fits, in the order
named; a goal with several parameters takes one each (two parameters of one type are
filled in the order the request names them). A one-parameter goal takes the first
fitting object named and those listed after it (separated only by *and*, *or*, *plus*,
*the*, commas, words of that goal or other objects), skipping an object whose name is a
word of the goal's name (*full family report for gene*): *make notes and q3 searchable*
is the conjunction over both, *a full report on brca1 against globins* one report. A
parameter no named object fills takes all the objects of a type named after *all*,
*every*, *each* or *both* (one-parameter goals), else the only object of a type the
request names (*the report*), else the only object of its type, else it is missing.

**Unknown object references** (``GoalMatch.unknown``). A foreign token is taken for the
name of an object the domain does not have when it is shaped like an identifier; or,
never right after *a*, *an*, *some*, *any*, *every*, *each* or *another* (*order a
pizza* names no object), when it stands (skipping *the*, *my*, *this*, *called*...)
right after a generic verb (*make gamma searchable*), or, unless a goal word or a type
name follows it (*the PCR plate*, *the thermal cycler*), right after the request's first
content word (*ingest gamma*), after a type name (*the report gamma*), or after *and*,
*or*, *plus* following an object or another such reference (*notes and gamma*).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from plansmith.model import (
    ROOT_TYPE,
    Atom,
    Condition,
    Domain,
    Equality,
    Literal,
    NamedGoal,
    TypedName,
)

__all__ = ["GoalCandidate", "GoalMatch", "match_goal", "ground_goal"]


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_TOKEN = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*")
_SPLIT = re.compile(r"[._-]")
_WORD = re.compile(r"[a-z0-9]+")
_STOP_WORDS = """
    a an the and or of to for in on at by with from into onto as all any some each every
    both either this that these those it its they them their there here his her him he she
    i me my mine we us our you your yours is are was were be been being am do does did done
    doing have has had make makes made making get gets got give let lets please kindly
    thanks thank want wants wanted would could can will shall should may might must need
    needs just now then also too so very really quickly asap soon again once up out over
    what which who whom how when where why not no yes ok okay hi hello hey s t d ll re ve m
    one two three use using via go going like wanna gonna help sure right away first next
    same other another more most than if but while about against versus vs across within
    without per after before under between among around toward towards upon inside behind
    beside below above along during until since except near off past through called named
"""
_STOP = _set(_STOP_WORDS)
_TRANSPARENT = _set("the my our your this that these those its their his her called named")
_VERBS = _set("make get do have give let want need please")  # generic verbs before an object
_EVERY = _set("all every each both")
_ARTICLES = _set("a an some any every each another")
_LIST_WORDS = _set("and or plus also too both as well the then")
_SUFFIX_LIST = """
    isations izations isation ization ations ation ising izing ised ized ises izes ise ize
    ments ment ings ing ness able ible etic ures ure ies ied ous ers er ed es en ly is s y
"""
_SUFFIXES = tuple(_SUFFIX_LIST.split())  # tried in this order; the first that fits goes
_KEEP_DOUBLE = "lszaeiou"  # a doubled final letter kept (pass, fill, see)
_FUZZY_MIN = 5
_QUOTE_MAX = 60


@dataclass(frozen=True, slots=True)
class GoalCandidate:
    """A named goal, its score, its filled parameters and its ground goal (if complete).

    ``score`` counts the request's words the goal matches, ``weight`` weighs them by how
    few goals share them, ``by_name`` says every word of the goal's name was given, and
    ``reason`` says why it is not the sure match (empty when it is)."""

    name: str
    description: str
    score: int
    bindings: tuple[tuple[str, tuple[str, ...]], ...] = ()
    missing: tuple[str, ...] = ()
    goal: tuple[str, ...] = ()
    weight: float = 0.0
    by_name: bool = False
    reason: str = ""


@dataclass(frozen=True, slots=True)
class GoalMatch:
    """The matcher's answer: the ground goal when sure, else the ranked candidates.

    ``reason`` says why the answer is not sure (empty when it is); ``unknown`` lists the
    request's tokens taken for objects the domain does not have."""

    sure: bool
    goal: tuple[str, ...] = ()
    chosen: str | None = None
    candidates: tuple[GoalCandidate, ...] = ()
    reason: str = ""
    unknown: tuple[str, ...] = ()


# -- words ----------------------------------------------------------------------------


def _stem(word: str) -> str:
    """A light, deterministic suffix stripper (enough to join a word's inflections)."""
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            if suffix == "s" and word[-2] in "su":
                continue
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in _KEEP_DOUBLE:
        word = word[:-1]
    return word


def _one_edit(a: str, b: str) -> bool:
    """At most one insertion, deletion, substitution or swap of neighbours apart."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        if len(diff) == 1:
            return True
        i = diff[0]
        return len(diff) == 2 and diff[1] == i + 1 and a[i] == b[i + 1] and a[i + 1] == b[i]
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long[i]:
        i += 1
    return short[i:] == long[i + 1 :]


def _content(text: str) -> list[str]:
    """The meaningful words of a name or token (no stop words, no bare numbers)."""
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP and not w.isdigit()]


@dataclass(frozen=True, slots=True)
class _Vocabulary:
    stems: frozenset[str]
    words: frozenset[str]  # the words themselves, for typos on words of 5 letters or more

    @staticmethod
    def of(texts: Sequence[str]) -> _Vocabulary:
        words = {w for text in texts for w in _content(text)}
        return _Vocabulary(frozenset(_stem(w) for w in words), frozenset(words))

    def exact(self, word: str) -> bool:
        return _stem(word) in self.stems

    def hits(self, word: str) -> frozenset[str]:
        """The vocabulary stems ``word`` matches: its own stem, or one typo away."""
        stem = _stem(word)
        if stem in self.stems:
            return frozenset([stem])
        again = _stem(word[2:])  # "reindex" is "index" again
        if word.startswith("re") and len(word) >= 6 and again in self.stems:
            return frozenset([again])
        if len(word) < _FUZZY_MIN:
            return frozenset()
        near = {_stem(w) for w in self.words if len(w) >= _FUZZY_MIN and _one_edit(word, w)}
        near |= {s for s in self.stems if len(s) >= _FUZZY_MIN and _one_edit(stem, s)}
        return frozenset(near)


@dataclass(frozen=True, slots=True)
class _Token:
    text: str  # lowercased, as written
    start: int
    obj: TypedName | None = None
    words: tuple[str, ...] = ()  # content words
    goals: frozenset[int] = frozenset()  # the goals (by index) one of its words matches
    domain: bool = False  # a word of it is a word of the domain (types, actions, ...)
    type_word: bool = False  # a word of it names a type

    @property
    def foreign(self) -> bool:
        return self.obj is None and bool(self.words) and not self.goals and not self.domain

    @property
    def identifier(self) -> bool:
        has_digit = any(c.isdigit() for c in self.text)
        return bool(_SPLIT.search(self.text)) or (has_digit and not self.text.isdigit())


def _known(domain: Domain, objects: Sequence[TypedName]) -> dict[str, TypedName]:
    known: dict[str, TypedName] = {}
    for obj in (*objects, *domain.constants):
        known.setdefault(obj.name.lower(), obj)
    return known


def _tokens(request: str, known: Mapping[str, TypedName]) -> list[_Token]:
    """Object names (longest first, whole words) and the other words, in request order.

    A name shaped like a token is found by looking the tokens up; another name (with a
    ``/``, a space...) by searching for it first, as a whole word."""
    lowered = request.lower()
    taken = [False] * len(lowered)
    found: list[_Token] = []
    odd = sorted((n for n in known if n and not _TOKEN.fullmatch(n)), key=lambda n: (-len(n), n))
    for name in odd:
        pattern = r"(?<![a-z0-9_.-])" + re.escape(name) + r"(?![a-z0-9_-]|\.[a-z0-9])"
        for m in re.finditer(pattern, lowered):
            if not any(taken[m.start() : m.end()]):
                taken[m.start() : m.end()] = [True] * (m.end() - m.start())
                found.append(_Token(name, m.start(), known[name]))
    found.extend(
        _Token(m.group(), m.start(), known.get(m.group()))
        for m in _TOKEN.finditer(lowered)
        if not any(taken[m.start() : m.end()])
    )
    return sorted(found, key=lambda t: t.start)


# -- parameters -----------------------------------------------------------------------


def _ground(condition: Condition, sub: dict[str, str]) -> str:
    if isinstance(condition, Equality):
        left, right = (
            sub.get(condition.left, condition.left),
            sub.get(condition.right, condition.right),
        )
        return str(Equality(left, right, condition.positive))
    atom = Atom(condition.atom.predicate, tuple(sub.get(a, a) for a in condition.atom.args))
    return str(Literal(atom, condition.positive))


def ground_goal(goal: NamedGoal, args: Mapping[str, str]) -> tuple[str, ...]:
    """``goal`` with each parameter given its object in ``args`` (a form's choice)."""
    return _expand(goal, tuple((name, (obj,)) for name, obj in args.items()))


def _expand(goal: NamedGoal, bindings: tuple[tuple[str, tuple[str, ...]], ...]) -> tuple[str, ...]:
    """The ground goal: one copy of the conditions per object of a many-valued parameter."""
    subs: list[dict[str, str]] = [{}]
    for name, values in bindings:
        subs = [{**s, name: v} for s in subs for v in values]
    out: list[str] = []
    for sub in subs:
        out.extend(t for t in (_ground(c, sub) for c in goal.goal) if t not in out)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class _Filled:
    bindings: tuple[tuple[str, tuple[str, ...]], ...]
    missing: tuple[str, ...]
    named: bool  # a parameter took an object the request names
    questions: tuple[str, ...]  # "which document? ..." per missing parameter


@dataclass(frozen=True, slots=True)
class _Request:
    """The request read against a domain: its tokens, and each goal's matched words."""

    domain: Domain
    tokens: tuple[_Token, ...]
    hits: tuple[Mapping[str, frozenset[str]], ...]  # per goal: request stem -> vocabulary stems
    names: tuple[frozenset[str], ...]  # per goal: the stems of its name
    objects: tuple[TypedName, ...]
    type_words: tuple[str, ...]  # the types the request names, in order
    every: tuple[str, ...]  # the types it names after all, every, each or both
    said: Mapping[str, str]  # stem -> the word as the request has it (not objects' names)
    types: Mapping[str, str]  # a type's name, lowercased -> the type


def _joined(index: int, gap: Sequence[_Token]) -> bool:
    """Whether the tokens between two named objects only list them (for goal ``index``)."""
    return all(t.obj is not None or index in t.goals or t.text in _LIST_WORDS for t in gap)


def _question(type_name: str, fits: Sequence[str]) -> str:
    if not fits:
        return f"which {type_name}? this domain has no {type_name} object: pass one in objects"
    shown = ", ".join(fits[:12]) + (", ..." if len(fits) > 12 else "")
    return f"which {type_name}? name one of: {shown}"


def _named_for(request: _Request, index: int, param: TypedName, used: set[str]) -> list[str]:
    """The named objects a parameter takes: the first that fits and those listed with it."""
    goal = request.domain.goals[index]
    types = request.domain.types
    fits = [
        i
        for i, t in enumerate(request.tokens)
        if t.obj is not None and t.obj.name not in used and types.is_subtype(t.obj.type, param.type)
    ]
    if len(goal.parameters) == 1:  # "full family report for gene": 'family' is the goal's name
        plain = [
            i
            for i in fits
            if not {_stem(w) for w in request.tokens[i].words} <= request.names[index]
        ]
        fits = plain or fits
    chosen: list[int] = []
    for i in fits:
        if chosen and (
            len(goal.parameters) > 1 or not _joined(index, request.tokens[chosen[-1] + 1 : i])
        ):
            break
        chosen.append(i)
    return list(dict.fromkeys(o.name for i in chosen if (o := request.tokens[i].obj) is not None))


def _fill(request: _Request, index: int) -> _Filled:
    """Each parameter's objects (named ones first, else the only one of a type)."""
    goal = request.domain.goals[index]
    types = request.domain.types
    bindings: list[tuple[str, tuple[str, ...]]] = []
    missing: list[str] = []
    questions: list[str] = []
    used: set[str] = set()
    named = False
    for param in goal.parameters:
        chosen = _named_for(request, index, param, used)
        named = named or bool(chosen)
        if not chosen and len(goal.parameters) == 1:  # "all the plates"
            for type_name in request.every:
                if types.is_subtype(type_name, param.type):
                    chosen = [
                        o.name for o in request.objects if types.is_subtype(o.type, type_name)
                    ]
                    break
        for type_name in () if chosen else request.type_words:  # "the report": the only one
            of_type = [o.name for o in request.objects if types.is_subtype(o.type, type_name)]
            if types.is_subtype(type_name, param.type) and len(of_type) == 1:
                chosen = [n for n in of_type if n not in used]
                break
        if not chosen:
            every = [o.name for o in request.objects if types.is_subtype(o.type, param.type)]
            free = [n for n in every if n not in used]
            if len(every) != 1 or not free:
                missing.append(param.name)
                questions.append(_question(param.type, free))
                continue
            chosen = free
        used.update(chosen)
        bindings.append((param.name, tuple(chosen)))
    return _Filled(tuple(bindings), tuple(missing), named, tuple(dict.fromkeys(questions)))


# -- the match ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Scored:
    goal: NamedGoal
    score: int
    weight: Fraction
    by_name: bool
    filled: _Filled
    words: frozenset[str] = frozenset()  # the request's words it matches (not objects' names)
    reasons: list[str] = field(default_factory=list)

    @property
    def rank(self) -> tuple[bool, Fraction]:
        return (self.by_name, self.weight)

    def candidate(self, *, plannable: bool = True) -> GoalCandidate:
        complete = plannable and not self.filled.missing
        return GoalCandidate(
            self.goal.name,
            self.goal.description,
            self.score,
            self.filled.bindings,
            self.filled.missing,
            _expand(self.goal, self.filled.bindings) if complete else (),
            float(self.weight),
            self.by_name,
            "; ".join(self.reasons),
        )


def _quote(request: str) -> str:
    text = " ".join(request.split())
    return "'" + (text if len(text) <= _QUOTE_MAX else text[: _QUOTE_MAX - 3] + "...") + "'"


def _names(domain: Domain) -> list[str]:
    """The names the domain declares: types, predicates, actions, tasks, constants, goals."""
    names = sorted(domain.types.names)
    names += [p.name for p in (*domain.predicates, *domain.functions)]
    names += [a.name for a in domain.actions] + [t.name for t in domain.tasks]
    return names + [c.name for c in domain.constants] + [g.name for g in domain.goals]


def _goal_vocabulary(goal: NamedGoal) -> _Vocabulary:
    texts = [goal.name, goal.description, *(p.type for p in goal.parameters)]
    texts += [c.atom.predicate for c in goal.goal if isinstance(c, Literal)]
    return _Vocabulary.of(texts)


def _read(domain: Domain, request: str, known: Mapping[str, TypedName]) -> _Request:
    """Tokens with the goals their words match (exactly; by a typo if known nowhere)."""
    vocabularies = [_goal_vocabulary(g) for g in domain.goals]
    of_domain = _Vocabulary.of(_names(domain))
    types = {t.lower(): t for t in sorted(domain.types.names) if t != ROOT_TYPE}
    tokens: list[_Token] = []
    hits: list[dict[str, frozenset[str]]] = [{} for _ in domain.goals]
    names = {re.sub(r"[.-]", "_", n.lower()) for n in _names(domain)}
    for t in _tokens(request, known):
        words = tuple(_content(t.text))
        if t.obj is None and t.identifier and re.sub(r"[.-]", "_", t.text) not in names:
            tokens.append(_Token(t.text, t.start, None, words))  # plate7, plate_a: foreign
            continue
        matched: set[int] = set()
        for w in words:
            stem = _stem(w)
            exact = t.obj is not None or of_domain.exact(w) or any(v.exact(w) for v in vocabularies)
            for g, vocabulary in enumerate(vocabularies):
                found = vocabulary.hits(w) & {stem} if exact else vocabulary.hits(w)
                if found:
                    matched.add(g)
                    hits[g][stem] = hits[g].get(stem, frozenset()) | found
        domain_word = any(of_domain.exact(w) for w in words)
        type_word = t.obj is None and any(_type_of(w, types) for w in words)
        tokens.append(
            _Token(t.text, t.start, t.obj, words, frozenset(matched), domain_word, type_word)
        )
    return _Request(
        domain,
        tuple(tokens),
        tuple(hits),
        tuple(frozenset(_stem(w) for w in _content(g.name)) for g in domain.goals),
        tuple(known.values()),
        tuple(n for t in tokens if t.type_word for w in t.words if (n := _type_of(w, types))),
        tuple(_every(tokens, types)),
        {_stem(w): w for t in reversed(tokens) if t.obj is None for w in t.words},
        types,
    )


def _type_of(word: str, types: Mapping[str, str]) -> str | None:
    """The type a word names: its name, or its name's plural (*plates*, *boxes*)."""
    for form in (word, word[:-1], word[:-2]) if word.endswith("s") else (word,):
        if form in types:
            return types[form]
    return None


def _every(tokens: Sequence[_Token], types: Mapping[str, str]) -> list[str]:
    """The types named right after *all*, *every*, *each* or *both* (*the*, *of* between)."""
    found: list[str] = []
    for i, t in enumerate(tokens):
        if t.text not in _EVERY:
            continue
        j = i + 1
        while j < len(tokens) and tokens[j].text in _TRANSPARENT | {"of"}:
            j += 1
        if j < len(tokens) and tokens[j].type_word:
            found.extend(n for w in tokens[j].words if (n := _type_of(w, types)))
    return found


def _typed(request: _Request, stem: str) -> bool:
    """Whether the request's word of this stem names a type (no name bonus: *plate*)."""
    word = request.said.get(stem)
    return word is not None and _type_of(word, request.types) is not None


def _score(request: _Request) -> list[_Scored]:
    shared: dict[str, int] = {}
    for table in request.hits:
        for stem in table:
            shared[stem] = shared.get(stem, 0) + 1
    total = len(request.domain.goals)
    scored = []
    for g, goal in enumerate(request.domain.goals):
        table = request.hits[g]
        given = frozenset().union(*table.values())
        scored.append(
            _Scored(
                goal,
                len(table),
                sum(
                    (
                        Fraction(total * (2 if named else 1), shared[s])
                        for s, found in table.items()
                        for named in [bool(found & request.names[g]) and not _typed(request, s)]
                    ),
                    Fraction(0),
                ),
                bool(request.names[g]) and request.names[g] <= given,
                _fill(request, g),
                frozenset(request.said[s] for s in table if s in request.said),
            )
        )
    return scored


def _unknown(tokens: Sequence[_Token]) -> list[int]:
    """The foreign tokens that stand where an object would (see the module doc)."""
    verb = next((i for i, t in enumerate(tokens) if t.words and t.obj is None), -1)
    refs: list[int] = []
    for i, t in enumerate(tokens):
        if not t.foreign:
            continue
        j = i - 1
        while j >= 0 and tokens[j].text in _TRANSPARENT:
            j -= 1
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        if t.identifier:
            refs.append(i)
        elif j < 0 or tokens[i - 1].text in _ARTICLES or tokens[j].text in _ARTICLES:
            continue  # "order a pizza": a thing, not a name
        elif tokens[j].text in _VERBS:
            refs.append(i)  # "make gamma searchable"
        elif after is not None and (after.goals or after.type_word):
            continue  # "the PCR plate", "the thermal cycler": it says which, it names none
        elif (
            j == verb
            or tokens[j].type_word
            or (
                tokens[j].text in ("and", "or", "plus")
                and j > 0
                and (tokens[j - 1].obj is not None or j - 1 in refs)
            )
        ):
            refs.append(i)
    return refs


def _not_objects(names: Sequence[str], known: Mapping[str, TypedName]) -> str:
    parts = []
    for name in names:
        near = sorted(
            o.name for k, o in known.items() if min(len(name), len(k)) >= 4 and _one_edit(name, k)
        )
        parts.append(f"'{name}'" + (f" (did you mean '{near[0]}'?)" if near else ""))
    if len(parts) == 1:
        return f"{parts[0]} is not an object of this domain: pass it in objects"
    return f"{', '.join(parts)} are not objects of this domain: pass them in objects"


def _words(n: int) -> str:
    return f"{n} word" + ("" if n == 1 else "s")


def _nothing(
    domain: Domain, request: str, read: _Request, scored: list[_Scored], note: str
) -> GoalMatch:
    """No goal matches a word: the goals that could take a named object, none plannable."""
    reason = f"no goal of {domain.name} matches {_quote(request)}"
    offered = [s for s in scored if s.filled.named]
    for s in offered:
        s.reasons.append("no word of the request names this goal")
    if offered:
        named = ", ".join(sorted({t.obj.name for t in read.tokens if t.obj is not None}))
        goals = ", ".join(s.goal.name for s in offered)
        reason += f"; it names {named} but no goal: name one of: {goals}"
    reason += f"; {note}" if note else ""
    candidates = tuple(s.candidate(plannable=False) for s in offered)
    return GoalMatch(False, candidates=candidates, reason=reason)


def _problems(
    request: _Request, ranked: Sequence[_Scored], note: str, foreign: Sequence[str]
) -> list[str]:
    """Why the best goal is not sure (empty when it is); each also goes to its reasons."""
    problems: list[str] = []
    best = ranked[0]
    ties = [s for s in ranked[1:] if s.rank == best.rank]
    if ties:
        group = (best, *ties)
        for s in group:
            others = [o for o in group if o is not s]
            same = all(o.score == s.score for o in others)
            each = f"{_words(s.score)} each" if same else "as distinctive"
            s.reasons.append(f"ties with {', '.join(repr(o.goal.name) for o in others)} ({each})")
        problems.append(f"'{best.goal.name}' {best.reasons[-1]}: name the goal")
    if note:
        problems.append(note)
    for s in ranked[1:]:
        extra = sorted(w for w in s.words - best.words if _type_of(w, request.types) is None)
        if s not in ties and extra:
            own = ", ".join(repr(w) for w in extra)
            s.reasons.append(f"the request also asks for it ({own})")
            problems.append(
                f"the request also asks for '{s.goal.name}' ({own}): one goal at a time"
            )
    if not any(_type_of(w, request.types) is None for w in best.words):
        shown = ", ".join(repr(w) for w in sorted(best.words)) or "objects"
        problems.append(f"the request names only {shown}: say what to do")
    elif not best.filled.named and len(foreign) >= best.score:
        shown = ", ".join(repr(w) for w in foreign)
        verb = "is not a word" if len(foreign) == 1 else "are not words"
        problems.append(
            f"too little of the request matches '{best.goal.name}' "
            f"({_words(best.score)}; {shown} {verb} of this domain)"
        )
    problems.extend(best.filled.questions)
    best.reasons.extend(problems[1:] if ties else problems)
    return problems


def match_goal(domain: Domain, request: str, objects: Sequence[TypedName]) -> GoalMatch:
    """Match ``request`` to one of ``domain.goals`` over ``objects`` (see the module doc)."""
    if not domain.goals:
        return GoalMatch(False, reason=f"the domain {domain.name} declares no goals: pass a goal")
    known = _known(domain, objects)
    read = _read(domain, request, known)
    scored = _score(read)
    unknown = tuple(dict.fromkeys(read.tokens[i].text for i in _unknown(read.tokens)))
    note = _not_objects(unknown, known) if unknown else ""
    ranked = sorted(
        (s for s in scored if s.score > 0), key=lambda s: (not s.by_name, -s.weight, s.goal.name)
    )
    if not ranked:
        answer = _nothing(domain, request, read, scored, note)
        return GoalMatch(False, (), None, answer.candidates, answer.reason, unknown)
    best = ranked[0]
    ties = [s for s in ranked[1:] if s.rank == best.rank]
    foreign = sorted({t.text for t in read.tokens if t.foreign} - set(unknown))
    problems = _problems(read, ranked, note, foreign)
    for s in ranked[1:]:
        if s not in ties:
            if best.by_name and not s.by_name:
                why = "the request names it"
            elif best.score > s.score:
                why = f"{_words(best.score)} against {s.score}"
            else:
                why = "more distinctive words"
            s.reasons.append(f"'{best.goal.name}' matches the request better ({why})")
    candidates = tuple(s.candidate() for s in ranked)
    if problems:
        return GoalMatch(False, (), None, candidates, "; ".join(problems), unknown)
    return GoalMatch(True, candidates[0].goal, best.goal.name, candidates, "", unknown)
