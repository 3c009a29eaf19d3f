"""GC content and ORFs agree with plain Python counting and a brute-force ORF scan."""

from __future__ import annotations

from Bio.Seq import Seq
from Bio.SeqRecord import SeqRecord
from bio_independent import brute_force_orfs
from hypothesis import given, settings
from hypothesis import strategies as st

from plansmith.domains.bio._analysis import find_orfs, sequence_stats

dna = st.text(alphabet="ACGT", max_size=400)


@settings(max_examples=200, deadline=None)
@given(dna, st.integers(min_value=3, max_value=60))
def test_orfs_match_a_brute_force_scan(seq: str, min_length: int) -> None:
    orfs = find_orfs(SeqRecord(Seq(seq), id="x"), min_length=min_length)
    assert {(o.strand, o.start, o.end) for o in orfs} == brute_force_orfs(seq, min_length)


@settings(max_examples=100, deadline=None)
@given(dna)
def test_orf_proteins_start_with_m_and_have_no_inner_stop(seq: str) -> None:
    for o in find_orfs(SeqRecord(Seq(seq), id="x"), min_length=3):
        assert o.protein.startswith("M")
        assert "*" not in o.protein
        assert o.length_nt == 3 * (len(o.protein) + 1) == o.end - o.start


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ACGTN", min_size=1, max_size=300))
def test_gc_content_matches_plain_counting(seq: str) -> None:
    stats = sequence_stats(SeqRecord(Seq(seq), id="x"))
    informative = len(seq) - seq.count("N")
    expected = (seq.count("G") + seq.count("C")) / informative if informative else 0.0
    assert stats.length == len(seq)
    assert stats.ambiguous == seq.count("N")
    assert abs(stats.gc_fraction - expected) < 1e-12
    assert abs(stats.gc_percent - 100 * expected) < 1e-4


def test_an_orf_on_the_minus_strand_is_reported_in_forward_coordinates() -> None:
    # forward: CCC TTA AAA CAT GG -> reverse complement: CC ATG TTT TAA GGG
    orfs = find_orfs(SeqRecord(Seq("CCCTTAAAACATGG"), id="m"), min_length=9)
    assert [(o.strand, o.start, o.end, o.protein) for o in orfs] == [(-1, 3, 12, "MF")]
