"""Sequence statistics and ORF finding in six frames (Biopython)."""

from __future__ import annotations

from dataclasses import dataclass

from Bio.Seq import Seq
from Bio.SeqRecord import SeqRecord
from Bio.SeqUtils import gc_fraction

from plansmith.domains.bio._seqio import rid

__all__ = ["SeqStats", "Orf", "sequence_stats", "find_orfs"]


@dataclass(frozen=True, slots=True)
class SeqStats:
    """Length and GC content of one record (GC over unambiguous bases, Biopython's rule)."""

    id: str
    length: int
    gc_fraction: float
    gc_percent: float
    ambiguous: int


@dataclass(frozen=True, slots=True)
class Orf:
    """An ORF: ATG to the first in-frame stop, stop included; forward-strand coordinates
    (0-based start, exclusive end) whatever the strand."""

    record: str
    strand: int
    frame: int
    start: int
    end: int
    length_nt: int
    protein: str


def sequence_stats(rec: SeqRecord) -> SeqStats:
    """Length and GC of ``rec``."""
    text = str(rec.seq).upper()
    gc = float(gc_fraction(rec.seq, ambiguous="remove"))
    ambiguous = sum(1 for b in text if b not in "ACGTUSW")
    return SeqStats(rid(rec), len(text), gc, round(100.0 * gc, 4), ambiguous)


def find_orfs(rec: SeqRecord, *, min_length: int = 75, table: int = 1) -> list[Orf]:
    """Complete ORFs of at least ``min_length`` nt (stop included) in the six frames.

    In each frame, an ORF starts at the first ATG after the previous in-frame stop
    (nested ATGs are not reported again) and ends with the next in-frame stop.
    """
    seq = Seq(str(rec.seq).upper())
    size = len(seq)
    out: list[Orf] = []
    for strand, strand_seq in ((1, seq), (-1, seq.reverse_complement())):
        for frame in range(3):
            usable = (size - frame) // 3 * 3
            protein = str(strand_seq[frame : frame + usable].translate(table=table))
            begin = 0
            for stop in _stops(protein):
                first_m = protein.find("M", begin, stop)
                if first_m >= 0 and (stop - first_m + 1) * 3 >= min_length:
                    lo, hi = frame + 3 * first_m, frame + 3 * (stop + 1)
                    start, end = (lo, hi) if strand == 1 else (size - hi, size - lo)
                    out.append(
                        Orf(rid(rec), strand, frame + 1, start, end, hi - lo, protein[first_m:stop])
                    )
                begin = stop + 1
    out.sort(key=lambda o: (-o.length_nt, o.start, o.strand))
    return out


def _stops(protein: str) -> list[int]:
    return [i for i, aa in enumerate(protein) if aa == "*"]
