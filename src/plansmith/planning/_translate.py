"""The offline natural-language translator: a deterministic matcher over a domain's
declared ``goals:`` (pure; no model).

Each named goal is scored by the words of the request it shares with the goal's name
and description; its parameters are filled with the objects the request names (by
object name, of a fitting type), or with the only object of that type. A goal with
one parameter and several named objects becomes the conjunction over all of them.
The match is *sure* only when one goal scores best, strictly, and every parameter is
filled; otherwise the caller gets the ranked candidates to choose from.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from plansmith.model import Atom, Condition, Domain, Equality, Literal, NamedGoal, TypedName

__all__ = ["GoalCandidate", "GoalMatch", "match_goal"]

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "for",
        "in",
        "on",
        "by",
        "with",
        "from",
        "all",
        "make",
        "please",
        "i",
        "we",
        "want",
        "need",
        "my",
        "our",
        "it",
        "is",
        "be",
        "then",
    ]
)


@dataclass(frozen=True, slots=True)
class GoalCandidate:
    """A named goal, its score, its filled parameters and its ground goal (if complete)."""

    name: str
    description: str
    score: int
    bindings: tuple[tuple[str, tuple[str, ...]], ...] = ()
    missing: tuple[str, ...] = ()
    goal: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GoalMatch:
    """The matcher's answer: the ground goal when sure, else the ranked candidates."""

    sure: bool
    goal: tuple[str, ...] = ()
    chosen: str | None = None
    candidates: tuple[GoalCandidate, ...] = ()


def _words(text: str) -> list[str]:
    return list(_WORD.findall(text.lower().replace("_", " ").replace("-", " ")))


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s", "able", "ise", "ize"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _mentions(request: str, objects: Sequence[TypedName]) -> list[TypedName]:
    """The objects the request names, in the order it names them."""
    lowered = request.lower()
    found: list[tuple[int, TypedName]] = []
    for obj in objects:
        m = re.search(r"(?<![a-z0-9_-])" + re.escape(obj.name.lower()) + r"(?![a-z0-9_-])", lowered)
        if m:
            found.append((m.start(), obj))
    return [obj for _, obj in sorted(found, key=lambda pair: (pair[0], pair[1].name))]


def _ground(condition: Condition, sub: dict[str, str]) -> str:
    if isinstance(condition, Equality):
        left, right = (
            sub.get(condition.left, condition.left),
            sub.get(condition.right, condition.right),
        )
        return str(Equality(left, right, condition.positive))
    atom = Atom(condition.atom.predicate, tuple(sub.get(a, a) for a in condition.atom.args))
    return str(Literal(atom, condition.positive))


def _fill(
    goal: NamedGoal, domain: Domain, named: list[TypedName], objects: Sequence[TypedName]
) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], tuple[str, ...]]:
    """Each parameter's objects (named ones first, else the only one of its type)."""
    types = domain.types
    bindings: list[tuple[str, tuple[str, ...]]] = []
    missing: list[str] = []
    used: set[str] = set()
    for param in goal.parameters:
        fits = [o for o in named if types.is_subtype(o.type, param.type) and o.name not in used]
        if fits and len(goal.parameters) > 1:
            fits = fits[:1]
        if not fits:
            every = [o for o in objects if types.is_subtype(o.type, param.type)]
            fits = every if len(every) == 1 else []
        if not fits:
            missing.append(param.name)
            continue
        used.update(o.name for o in fits)
        bindings.append((param.name, tuple(o.name for o in fits)))
    return tuple(bindings), tuple(missing)


def _expand(goal: NamedGoal, bindings: tuple[tuple[str, tuple[str, ...]], ...]) -> tuple[str, ...]:
    """The ground goal: one copy of the conditions per object of a many-valued parameter."""
    subs: list[dict[str, str]] = [{}]
    for name, values in bindings:
        subs = [{**s, name: v} for s in subs for v in values]
    out: list[str] = []
    for sub in subs:
        out.extend(t for t in (_ground(c, sub) for c in goal.goal) if t not in out)
    return tuple(out)


def match_goal(domain: Domain, request: str, objects: Sequence[TypedName]) -> GoalMatch:
    """Match ``request`` to one of ``domain.goals`` over ``objects`` (see the module doc)."""
    asked = {_stem(w) for w in _words(request) if w not in _STOP}
    named = _mentions(request, (*domain.constants, *objects))
    all_objects = (*domain.constants, *objects)
    candidates: list[GoalCandidate] = []
    for goal in domain.goals:
        vocabulary = {_stem(w) for w in _words(f"{goal.name} {goal.description}")} - _STOP
        for condition in goal.goal:
            if isinstance(condition, Literal):
                vocabulary |= {_stem(w) for w in _words(condition.atom.predicate)}
        score = len(asked & vocabulary)
        bindings, missing = _fill(goal, domain, named, all_objects)
        ground = _expand(goal, bindings) if not missing else ()
        candidates.append(
            GoalCandidate(goal.name, goal.description, score, bindings, missing, ground)
        )
    ranked = tuple(sorted(candidates, key=lambda c: (-c.score, c.name)))
    if not ranked or ranked[0].score == 0:
        return GoalMatch(False, candidates=ranked)
    best = ranked[0]
    clear = len(ranked) == 1 or ranked[1].score < best.score
    if clear and not best.missing:
        return GoalMatch(True, best.goal, best.name, ranked)
    return GoalMatch(False, candidates=ranked)
