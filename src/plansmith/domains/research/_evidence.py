"""Evidence from the corpus server's answers (the structured results, as dicts).

A search hit gives one piece of evidence per key point (a sentence with its own
lines); a fetched passage gives one piece holding the whole page, with the
block spans so that any sentence in it can be cited to its lines. The subject
of the evidence (what the verifier falls back to as the entity) is the
passage's anchor, or else the last part of its section path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plansmith.domains.research.verify import Evidence, Span

__all__ = ["evidence_from_hit", "evidence_from_search", "evidence_from_fetch", "subject_of"]


def subject_of(location: Mapping[str, Any]) -> str:
    """What a passage is about: its anchor, else the last heading of its section path."""
    anchor = str(location.get("anchor") or "")
    if anchor:
        return anchor
    section = str(location.get("section") or "")
    return section.rsplit(" > ", 1)[-1]


def evidence_from_hit(hit: Mapping[str, Any], subquestion: str = "") -> list[Evidence]:
    """One :class:`Evidence` per key point of a search hit."""
    loc = hit["location"]
    return [
        Evidence(
            source=str(hit["source"]),
            path=str(loc["path"]),
            passage=str(hit["id"]),
            text=str(kp["text"]),
            line_start=int(kp["line_start"]),
            line_end=int(kp["line_end"]),
            subject=subject_of(loc),
            published=hit.get("date"),
            title=str(hit.get("title") or ""),
            section=str(loc.get("section") or ""),
            subquestion=subquestion,
        )
        for kp in hit.get("key_points", [])
    ]


def evidence_from_search(result: Mapping[str, Any], subquestion: str = "") -> list[Evidence]:
    """The evidence of every hit of a search result, in rank order."""
    out: list[Evidence] = []
    for hit in result.get("hits", []):
        out.extend(evidence_from_hit(hit, subquestion))
    return out


def evidence_from_fetch(page: Mapping[str, Any], subquestion: str = "") -> Evidence:
    """The evidence of a fetched passage page (its spans shifted to the page's offset)."""
    loc = page["location"]
    offset = int(page.get("offset", 0))
    spans: list[Span] = []
    for start, first, last in page.get("spans", []):
        spans.append((int(start) - offset, int(first), int(last)))
    return Evidence(
        source=str(page["source"]),
        path=str(loc["path"]),
        passage=str(page["id"]),
        text=str(page["text"]),
        line_start=int(loc["line_start"]),
        line_end=int(loc["line_end"]),
        subject=subject_of(loc),
        published=page.get("date"),
        title=str(page.get("title") or ""),
        section=str(loc.get("section") or ""),
        subquestion=subquestion,
        spans=tuple(spans),
    )
