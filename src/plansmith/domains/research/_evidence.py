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


def _evidence(
    found: Mapping[str, Any],
    subquestion: str,
    lines: Mapping[str, Any],
    text: Any,
    spans: tuple[Span, ...] = (),
) -> Evidence:
    """The evidence of ``text`` in a search hit or a fetched page (``found``), at the
    lines that ``lines`` (a key point, or the page's location) gives."""
    loc = found["location"]
    return Evidence(
        source=str(found["source"]),
        path=str(loc["path"]),
        passage=str(found["id"]),
        text=str(text),
        line_start=int(lines["line_start"]),
        line_end=int(lines["line_end"]),
        subject=subject_of(loc),
        published=found.get("date"),
        title=str(found.get("title") or ""),
        section=str(loc.get("section") or ""),
        subquestion=subquestion,
        spans=spans,
    )


def evidence_from_hit(hit: Mapping[str, Any], subquestion: str = "") -> list[Evidence]:
    """One :class:`Evidence` per key point of a search hit."""
    return [_evidence(hit, subquestion, kp, kp["text"]) for kp in hit.get("key_points", [])]


def evidence_from_search(result: Mapping[str, Any], subquestion: str = "") -> list[Evidence]:
    """The evidence of every hit of a search result, in rank order."""
    out: list[Evidence] = []
    for hit in result.get("hits", []):
        out.extend(evidence_from_hit(hit, subquestion))
    return out


def evidence_from_fetch(page: Mapping[str, Any], subquestion: str = "") -> Evidence:
    """The evidence of a fetched passage page (its spans shifted to the page's offset)."""
    offset = int(page.get("offset", 0))
    spans: list[Span] = []
    for start, first, last in page.get("spans", []):
        spans.append((int(start) - offset, int(first), int(last)))
    return _evidence(page, subquestion, page["location"], page["text"], tuple(spans))
