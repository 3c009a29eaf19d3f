"""Align claims across sources, count agreement, flag conflicts, and label each claim.

Claims about the same entity and attribute form a group (for a multi-valued
attribute such as ``changed_in``, each value is its own group). A group is:

* **disputed** when two claims disagree (different versions, dates, amounts or
  counts) and they come from different sources, or from the same source (an
  internal contradiction: both claims name the entity in their sentence, or both
  are in one passage); also when every claim rests on stale evidence;
* **consistent** when no claims disagree and at least two sources that are not
  stale back it;
* **single-source** when no claims disagree and only one fresh source backs it.

Evidence is stale when its document's date is more than ``max_age_days`` before
``as_of``; stale evidence still takes part in the disagreement check, but not
in the agreement count, and each group that has some gets a ``stale`` conflict
record. Evidence without a date is never stale. The labels come from this code
only: a model may explain a flagged conflict, never set the flag.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

from plansmith.domains.research.verify._claims import (
    MULTI_VALUED,
    Claim,
    ClaimKind,
    Evidence,
    claims_of,
)
from plansmith.domains.research.verify._values import parse_date

__all__ = ["Label", "Conflict", "ClaimGroup", "Verdict", "verify", "align", "is_stale", "where"]

Label = Literal["consistent", "disputed", "single-source"]


@dataclass(frozen=True, slots=True)
class Conflict:
    """Why a group is flagged: ``value`` (claims disagree) or ``stale`` (old evidence)."""

    kind: Literal["value", "stale"]
    detail: str
    claims: tuple[Claim, ...]


@dataclass(frozen=True, slots=True)
class ClaimGroup:
    """The claims about one entity's attribute, with their label.

    ``values`` maps each distinct value (as text) to the sources that state it;
    ``agreeing`` counts the fresh sources behind the best-supported value.
    """

    entity: str
    attribute: str
    kind: ClaimKind
    label: Label
    agreeing: int
    sources: tuple[str, ...]
    values: tuple[tuple[str, tuple[str, ...]], ...]
    conflicts: tuple[Conflict, ...]
    claims: tuple[Claim, ...]


@dataclass(frozen=True, slots=True)
class Verdict:
    """Every group of claims found in the evidence."""

    groups: tuple[ClaimGroup, ...] = ()

    def with_label(self, label: Label) -> tuple[ClaimGroup, ...]:
        return tuple(g for g in self.groups if g.label == label)

    def find(self, entity: str, attribute: str) -> ClaimGroup | None:
        """The group of ``entity`` (a key) and ``attribute`` (or an ``attribute:...`` variant)."""
        for g in self.groups:
            if g.entity == entity and (
                g.attribute == attribute or g.attribute.startswith(attribute + ":")
            ):
                return g
        return None


def is_stale(evidence: Evidence, as_of: dt.date | None, max_age_days: int | None) -> bool:
    """The evidence's document is older than ``max_age_days`` at ``as_of``."""
    if as_of is None or max_age_days is None:
        return False
    published = parse_date(evidence.published)
    if published is None:
        return False
    return (as_of - published.first_day()).days > max_age_days


def where(claim: Claim) -> str:
    """Where a claim is stated: ``source [type] (path:first-last)``."""
    e = claim.evidence
    first, last = e.lines_of(claim.sentence)
    kind = f" [{e.source_type}]" if e.source_type else ""
    return f"{e.source}{kind} ({e.path}:{first}-{last})"


def _key(claim: Claim) -> tuple[str, str, str]:
    multi = claim.attribute.split(":", 1)[0] in MULTI_VALUED
    return claim.entity, claim.attribute, claim.value_text if multi else ""


def _clash(a: Claim, b: Claim) -> bool:
    """Two claims disagree: from two sources; or from one, when both name the entity or
    both are in one passage (two pages of one source that only fall back on their
    subject, "New in version 3.2" here and "3.5" there, are about different things);
    never two values of one sentence ("changed from 2.3 to 3.1")."""
    if a.compatible(b):
        return False
    e, f = a.evidence, b.evidence
    if e.passage == f.passage and a.sentence == b.sentence:
        return False  # "from 2.3 to 3.1", "32-bit and 64-bit builds": two things, one sentence
    return e.source != f.source or (a.named and b.named) or e.passage == f.passage


def _label_group(
    claims: list[Claim], as_of: dt.date | None, max_age_days: int | None
) -> ClaimGroup:
    stale = [c for c in claims if is_stale(c.evidence, as_of, max_age_days)]
    fresh = [c for c in claims if c not in stale]
    conflicts: list[Conflict] = []
    clashes = [(a, b) for a, b in combinations(claims, 2) if _clash(a, b)]
    if clashes:
        pairs = "; ".join(
            f"{where(a)} says {a.value_text}, {where(b)} says {b.value_text}"
            for a, b in clashes[:4]
        )
        if len(clashes) > 4:
            pairs += f"; and {len(clashes) - 4} more pairs"
        involved = tuple(dict.fromkeys(c for pair in clashes for c in pair))
        conflicts.append(Conflict("value", pairs, involved))
    if stale:
        detail = f"{len(stale)} of {len(claims)} claims rest on documents older than "
        detail += f"{max_age_days} days at {as_of.isoformat() if as_of else '?'}"
        conflicts.append(Conflict("stale", detail, tuple(stale)))
    best = 0
    for c in fresh:
        best = max(best, len({o.evidence.source for o in fresh if c.compatible(o)}))
    fresh_sources = {c.evidence.source for c in fresh}
    label: Label
    if clashes or not fresh:
        label = "disputed"
    elif len(fresh_sources) >= 2:
        label = "consistent"
    else:
        label = "single-source"
    values: dict[str, list[str]] = {}
    for c in claims:
        holders = values.setdefault(c.value_text, [])
        if c.evidence.source not in holders:
            holders.append(c.evidence.source)
    first = claims[0]
    return ClaimGroup(
        entity=first.entity,
        attribute=first.attribute,
        kind=first.kind,
        label=label,
        agreeing=best,
        sources=tuple(dict.fromkeys(c.evidence.source for c in claims)),
        values=tuple((v, tuple(s)) for v, s in values.items()),
        conflicts=tuple(conflicts),
        claims=tuple(claims),
    )


def align(
    claims: Iterable[Claim], *, as_of: dt.date | None = None, max_age_days: int | None = None
) -> Verdict:
    """Group ``claims`` by entity and attribute and label each group (see the module)."""
    groups: dict[tuple[str, str, str], list[Claim]] = {}
    seen: set[tuple[str, str, str, str, str]] = set()
    for c in claims:
        ident = (c.evidence.source, c.evidence.passage, c.sentence, c.attribute, c.value_text)
        if ident in seen:  # the same passage found twice (by two subquestions)
            continue
        seen.add(ident)
        groups.setdefault(_key(c), []).append(c)
    labelled = [_label_group(g, as_of, max_age_days) for g in groups.values()]
    labelled.sort(key=lambda g: (g.entity, g.attribute, g.values[0][0]))
    return Verdict(tuple(labelled))


def verify(
    evidence: Iterable[Evidence],
    *,
    as_of: dt.date | None = None,
    max_age_days: int | None = None,
) -> Verdict:
    """Extract the claims of every piece of evidence, align them and label them."""
    claims: list[Claim] = []
    for item in evidence:
        claims.extend(claims_of(item))
    return align(claims, as_of=as_of, max_age_days=max_age_days)
