"""The structured results of the corpus server's tools (each tool's ``outputSchema``).

Results are summaries with locations, never whole documents: a search hit
carries a snippet and a few key sentences (each an exact substring of the
passage, with its own line range); ``fetch`` pages through one passage.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = [
    "Location",
    "KeyPoint",
    "Hit",
    "SearchResult",
    "FetchResult",
    "OutlineEntry",
    "DocumentMeta",
    "IndexReport",
    "SourceMeta",
    "MetadataResult",
]


class Location(BaseModel):
    """Where a passage is: the document's path (relative to the source's root), the
    passage id, its section path and anchor, and its 1-based inclusive line range."""

    path: str
    passage: str
    section: str = ""
    anchor: str = ""
    line_start: int
    line_end: int
    uri: str = Field(description="file:// URI of the document with #L<start>-L<end>")


class KeyPoint(BaseModel):
    """A sentence of the passage (an exact substring of its text) and its lines."""

    text: str
    line_start: int
    line_end: int


class Hit(BaseModel):
    """One passage that matched: a structured summary, not the document."""

    id: str = Field(description="the passage id; pass it to fetch")
    document: str
    title: str
    source: str
    date: str | None = Field(description="ISO date of the document")
    date_source: str = Field(description="'document' (stated in it) or 'mtime' (file time)")
    version: str | None
    location: Location
    snippet: str = Field(description="matched terms marked **like this**")
    key_points: list[KeyPoint]
    score: float = Field(description="BM25 (lower is better, as SQLite FTS5 gives it)")


class SearchResult(BaseModel):
    source: str
    query: str
    match: str = Field(
        description="the first tier that matched: 'all terms and one of also', 'all terms', "
        "'any term', or 'none'"
    )
    terms: list[str]
    hits: list[Hit]


class FetchResult(BaseModel):
    """A page of one passage's text, with its location and neighbours."""

    id: str
    source: str
    document: str
    title: str
    date: str | None
    version: str | None
    location: Location
    text: str
    offset: int
    next_offset: int | None = Field(description="pass as offset for the next page; null at end")
    total_chars: int
    spans: list[list[int]] = Field(
        description="per block of the whole passage text: [offset, line_start, line_end]"
    )
    previous: str | None = Field(description="the passage before this one in the document")
    next: str | None = Field(description="the passage after this one in the document")


class OutlineEntry(BaseModel):
    passage: str
    section: str
    anchor: str
    line_start: int
    line_end: int


class DocumentMeta(BaseModel):
    id: str
    path: str
    kind: str
    title: str
    date: str | None
    date_source: str
    version: str | None
    size: int
    sha256: str
    passages: int
    indexed_at: str
    outline: list[OutlineEntry] = Field(description="the first passages (at most 100)")


class IndexReport(BaseModel):
    """What one (re-)index did: new, changed, touched (same content), unchanged, removed."""

    documents: int
    passages: int
    added: int
    updated: int
    touched: int
    unchanged: int
    removed: int
    skipped: list[str] = Field(description="path: reason, for each file left out")
    seconds: float


class SourceMeta(BaseModel):
    source: str
    root: str
    documents: int
    passages: int
    kinds: dict[str, int]
    last_index: IndexReport | None


class MetadataResult(BaseModel):
    source: str
    document: DocumentMeta | None = None
    corpus: SourceMeta | None = None
