"""Database search: Biopython and BLAST+ agree, and the top hit is the independent best match."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from Bio.Seq import Seq
from Bio.SeqRecord import SeqRecord
from bio_independent import best_ungapped_identity

from plansmith.domains.bio import DATA_DIR
from plansmith.domains.bio._search import align_pair, biopython_search, blast_search, make_blast_db
from plansmith.domains.bio._seqio import read_records

needs_blast = pytest.mark.skipif(
    shutil.which("blastn") is None or shutil.which("makeblastdb") is None,
    reason="BLAST+ is not installed (Debian: apt-get install ncbi-blast+)",
)


def _data() -> tuple[list[SeqRecord], list[SeqRecord]]:
    return read_records(DATA_DIR / "query.fasta"), read_records(DATA_DIR / "family.fasta")


def test_biopython_top_hit_is_the_best_ungapped_match() -> None:
    queries, db = _data()
    hits = biopython_search(queries, db, top=3)
    q = str(queries[0].seq)
    scored = {str(r.id): best_ungapped_identity(q, str(r.seq)) for r in db if r.id in ("B1", "B2")}
    assert hits[0].subject == "B2"
    assert (hits[0].identity, hits[0].align_length) == scored["B2"]
    assert hits[0].mismatches == sum(a != b for a, b in zip(q, str(db[4].seq), strict=True))
    assert [h.subject for h in hits] == ["B2", "B1", "B3"]


@needs_blast
def test_blast_and_biopython_give_the_same_hits(tmp_path: Path) -> None:
    queries, db = _data()
    make_blast_db(DATA_DIR / "family.fasta", tmp_path / "fam")
    blast = blast_search(DATA_DIR / "query.fasta", tmp_path / "fam", top=8)
    bio = biopython_search(queries, db, top=8)
    assert [h.subject for h in blast] == [h.subject for h in bio]
    for a, b in zip(blast, bio, strict=True):
        assert (a.identity, a.align_length, a.mismatches, a.gap_opens) == (
            b.identity,
            b.align_length,
            b.mismatches,
            b.gap_opens,
        )
        assert a.score == b.score  # the same scoring scheme gives the same raw score


def test_minus_strand_subject_is_found_with_reversed_coordinates() -> None:
    forward = "ATGGCGTACGATCGATCGGCTAGCTAGGATCCAGT"
    pair = {"A": "T", "C": "G", "G": "C", "T": "A"}
    a = SeqRecord(Seq(forward), id="a")
    b = SeqRecord(Seq("".join(pair[c] for c in reversed(forward))), id="b")
    hit, _ = align_pair(a, b)
    assert hit.identity == 100.0
    assert (hit.s_start, hit.s_end) == (len(a), 1)


def test_min_identity_drops_distant_hits() -> None:
    queries, db = _data()
    hits = biopython_search(queries, db, top=10, min_identity=90.0)
    assert [h.subject for h in hits] == ["B2", "B1", "B3"]
