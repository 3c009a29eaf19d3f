"""Pairwise alignment and database search: Biopython's PairwiseAligner and BLAST+.

Both paths give the same :class:`Hit` rows, with BLAST's conventions: identity
is identical columns over alignment columns (gaps included) in percent,
coordinates are 1-based and inclusive, and on the minus strand the subject's
start is greater than its end. The Biopython path scores like ``blastn -task
blastn`` (match 2, mismatch -3, gap open 5, extend 2) and searches both strands.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from Bio.Align import PairwiseAligner
from Bio.Seq import Seq
from Bio.SeqRecord import SeqRecord

from plansmith.domains.bio._external import run_binary
from plansmith.domains.bio._seqio import rid

__all__ = ["Hit", "make_aligner", "align_pair", "biopython_search", "blast_search", "make_blast_db"]

BLAST_FIELDS = (
    "qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue bitscore score"
)


@dataclass(frozen=True, slots=True)
class Hit:
    """One query-subject alignment, as BLAST's tabular output gives it."""

    query: str
    subject: str
    identity: float
    align_length: int
    mismatches: int
    gap_opens: int
    q_start: int
    q_end: int
    s_start: int
    s_end: int
    score: float | None = None
    evalue: float | None = None
    bitscore: float | None = None


def make_aligner(mode: Literal["local", "global"] = "local") -> PairwiseAligner:
    """An aligner with blastn's scores: +2/-3, gaps 5 + 2 per position."""
    return PairwiseAligner(
        mode=mode, match_score=2, mismatch_score=-3, open_gap_score=-7, extend_gap_score=-2
    )


def _hit(query: str, subject: str, aln: Any, subject_len: int, minus: bool) -> Hit:
    counts = aln.counts()
    gaps = counts.internal_insertions + counts.internal_deletions
    columns = counts.identities + counts.mismatches + gaps
    opens = counts.open_internal_insertions + counts.open_internal_deletions
    coords = aln.coordinates
    q0, q1 = int(coords[0][0]), int(coords[0][-1])
    s0, s1 = int(coords[1][0]), int(coords[1][-1])
    if minus:  # the subject was reverse-complemented: map back to its own strand
        s_start, s_end = subject_len - s0, subject_len - s1 + 1
    else:
        s_start, s_end = s0 + 1, s1
    return Hit(
        query=query,
        subject=subject,
        identity=round(100.0 * counts.identities / columns, 3) if columns else 0.0,
        align_length=columns,
        mismatches=counts.mismatches,
        gap_opens=opens,
        q_start=q0 + 1,
        q_end=q1,
        s_start=s_start,
        s_end=s_end,
        score=float(aln.score),
    )


def align_pair(
    a: SeqRecord, b: SeqRecord, *, mode: Literal["local", "global"] = "local"
) -> tuple[Hit, Any]:
    """The best alignment of ``b`` (either strand) against ``a``, and the alignment."""
    aligner = make_aligner(mode)
    qa, sb = str(a.seq).upper(), str(b.seq).upper()
    plus = aligner.align(qa, sb)[0]
    minus_seq = str(Seq(sb).reverse_complement())
    minus = aligner.align(qa, minus_seq)[0]
    if minus.score > plus.score:
        return _hit(rid(a), rid(b), minus, len(sb), True), minus
    return _hit(rid(a), rid(b), plus, len(sb), False), plus


def _rank(hit: Hit) -> tuple[float, float, str]:
    return (
        -(hit.bitscore if hit.bitscore is not None else hit.score or 0.0),
        -hit.identity,
        hit.subject,
    )


def biopython_search(
    queries: list[SeqRecord], database: list[SeqRecord], *, top: int, min_identity: float = 0.0
) -> list[Hit]:
    """Each query against each database record; the best ``top`` hits per query."""
    out: list[Hit] = []
    for q in queries:
        hits = [align_pair(q, s)[0] for s in database]
        hits = [h for h in hits if h.align_length and h.identity >= min_identity]
        out.extend(sorted(hits, key=_rank)[:top])
    return out


def make_blast_db(fasta: Path, prefix: Path) -> None:
    """``makeblastdb`` of a nucleotide FASTA (sequence ids parsed, so hits name them)."""
    run_binary(
        "makeblastdb",
        ["-in", str(fasta), "-dbtype", "nucl", "-parse_seqids", "-out", str(prefix)],
    )


def blast_search(
    query: Path, db_prefix: Path, *, top: int, min_identity: float = 0.0, evalue: float = 10.0
) -> list[Hit]:
    """``blastn -task blastn`` with one HSP per subject; rows ranked by bit score."""
    text = run_binary(
        "blastn",
        [
            "-task", "blastn",
            "-query", str(query),
            "-db", str(db_prefix),
            "-outfmt", f"6 {BLAST_FIELDS}",
            "-max_target_seqs", str(max(top, 1)),
            "-max_hsps", "1",
            "-evalue", str(evalue),
            "-num_threads", "1",
        ],
    )  # fmt: skip
    out: list[Hit] = []
    for line in text.splitlines():
        f = line.split("\t")
        if len(f) != 13:
            continue
        hit = Hit(
            query=f[0],
            subject=f[1],
            identity=float(f[2]),
            align_length=int(f[3]),
            mismatches=int(f[4]),
            gap_opens=int(f[5]),
            q_start=int(f[6]),
            q_end=int(f[7]),
            s_start=int(f[8]),
            s_end=int(f[9]),
            evalue=float(f[10]),
            bitscore=float(f[11]),
            score=float(f[12]),
        )
        if hit.identity >= min_identity:
            out.append(hit)
    by_query: dict[str, list[Hit]] = {}
    for hit in out:
        by_query.setdefault(hit.query, []).append(hit)
    return [h for hits in by_query.values() for h in sorted(hits, key=_rank)[:top]]
