"""The structured results of the server's tools (each tool's ``outputSchema``)."""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = [
    "FileRef",
    "RecordInfo",
    "CdsInfo",
    "LoadResult",
    "StatsRow",
    "StatsResult",
    "OrfRow",
    "OrfResult",
    "SequencesResult",
    "HitRow",
    "PairwiseResult",
    "BlastDbResult",
    "SearchResult",
    "MsaResult",
    "TreeResult",
    "RenderResult",
    "ReportResult",
    "BackendsResult",
]

INLINE = 50  # at most this many rows inline; the file holds them all


class FileRef(BaseModel):
    """A file in the run directory: its path, file URI, content hash and size."""

    path: str
    uri: str
    sha256: str
    bytes: int


class _Backend(BaseModel):
    backend: str = Field(description="biopython, blast+, mafft, clustalo or fasttree")
    backend_version: str


class RecordInfo(BaseModel):
    id: str
    length: int
    description: str


class CdsInfo(BaseModel):
    record: str
    start: int = Field(description="0-based")
    end: int = Field(description="exclusive, stop codon included")
    strand: int
    gene: str
    product: str
    protein_length: int
    translation_matches: bool | None = Field(description="the /translation agrees with the CDS")


class LoadResult(_Backend):
    format: str
    count: int
    records: list[RecordInfo] = Field(description=f"the first {INLINE} records")
    truncated: bool
    cds: list[CdsInfo]
    file: FileRef


class StatsRow(BaseModel):
    id: str
    length: int
    gc_percent: float
    gc_fraction: float
    ambiguous: int


class StatsResult(_Backend):
    count: int
    total_length: int
    gc_percent: float = Field(description="GC of all records together")
    records: list[StatsRow]
    truncated: bool
    file: FileRef


class OrfRow(BaseModel):
    record: str
    strand: int
    frame: int
    start: int = Field(description="0-based, forward strand")
    end: int = Field(description="exclusive, forward strand")
    length_nt: int
    protein_length: int


class OrfResult(_Backend):
    min_length: int
    table: int
    count: int
    longest: list[OrfRow] = Field(description="the 10 longest ORFs")
    file: FileRef


class SequencesResult(_Backend):
    operation: str
    count: int
    file: FileRef


class HitRow(BaseModel):
    query: str
    subject: str
    identity: float = Field(description="percent identical columns, gaps included (as BLAST)")
    align_length: int
    mismatches: int
    gap_opens: int
    q_start: int
    q_end: int
    s_start: int
    s_end: int
    score: float | None
    evalue: float | None
    bitscore: float | None


class PairwiseResult(_Backend):
    mode: str
    hit: HitRow
    file: FileRef


class BlastDbResult(_Backend):
    database: str = Field(description="the database prefix to pass to blast_search")
    sequences: int
    files: list[FileRef]


class SearchResult(_Backend):
    queries: int
    hit_count: int = Field(description="how many hits (the rows of hits)")
    hits: list[HitRow]
    top_hit: HitRow | None
    file: FileRef
    homologues: FileRef | None = Field(description="FASTA: the queries, then each hit subject")


class MsaResult(_Backend):
    sequences: int
    columns: int
    file: FileRef


class TreeResult(_Backend):
    leaves: list[str]
    newick: str | None = Field(description="inline when shorter than 4 KiB")
    file: FileRef


class RenderResult(_Backend):
    leaves: int
    file: FileRef


class ReportResult(_Backend):
    sections: list[str]
    file: FileRef
    picture: FileRef | None


class BackendsResult(BaseModel):
    available: dict[str, str | None] = Field(description="backend -> version, or null if missing")
    run_roots: list[str]
    inputs: list[str]
