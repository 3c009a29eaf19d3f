"""Multiple alignment, trees and tree pictures."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from Bio import SeqIO
from Bio.Seq import Seq
from Bio.SeqRecord import SeqRecord
from hypothesis import given, settings
from hypothesis import strategies as st

from plansmith.domains.bio import DATA_DIR
from plansmith.domains.bio._msa import align_external, centre_star
from plansmith.domains.bio._seqio import read_records, write_fasta
from plansmith.domains.bio._svg import tree_svg
from plansmith.domains.bio._tree import fasttree, leaf_names, nearest_leaf, nj_tree, read_newick
from plansmith.errors import InputError


@st.composite
def families(draw: st.DrawFn) -> list[str]:
    root = draw(st.text(alphabet="ACGT", min_size=5, max_size=60))
    out = [root]
    for _ in range(draw(st.integers(1, 4))):
        s = list(draw(st.sampled_from(out)))
        for _ in range(draw(st.integers(0, 4))):
            i = draw(st.integers(0, len(s)))
            op = draw(st.sampled_from(["sub", "ins", "del"]))
            if op == "ins":
                s.insert(i, draw(st.sampled_from("ACGT")))
            elif s and i < len(s):
                if op == "del" and len(s) > 1:
                    del s[i]
                else:
                    s[i] = draw(st.sampled_from("ACGT"))
        out.append("".join(s))
    return out


@settings(max_examples=60, deadline=None)
@given(families())
def test_centre_star_rows_are_the_inputs_with_gaps_and_equal_length(seqs: list[str]) -> None:
    records = [SeqRecord(Seq(s), id=f"s{i}") for i, s in enumerate(seqs)]
    rows = centre_star(records)
    assert [i for i, _ in rows] == [r.id for r in records]
    assert len({len(r) for _, r in rows}) == 1
    assert [r.replace("-", "") for _, r in rows] == seqs
    columns = zip(*(r for _, r in rows), strict=True)
    assert all(set(col) != {"-"} for col in columns)


def test_centre_star_aligns_the_shipped_family() -> None:
    records = read_records(DATA_DIR / "family.fasta")
    rows = centre_star(records)
    assert len({len(r) for _, r in rows}) == 1
    assert len(rows[0][1]) >= max(len(r) for r in records)


@pytest.mark.parametrize("backend", ["mafft", "clustalo"])
def test_external_aligner_keeps_every_sequence(backend: str, tmp_path: Path) -> None:
    if shutil.which(backend) is None:
        pytest.skip(f"{backend} is not installed (Debian: apt-get install {backend})")
    align_external(backend, DATA_DIR / "family.fasta", tmp_path / "aln.fasta")  # type: ignore[arg-type]
    aligned = read_records(tmp_path / "aln.fasta", "fasta")
    original = {str(r.id): str(r.seq) for r in read_records(DATA_DIR / "family.fasta")}
    assert {str(r.id): str(r.seq).replace("-", "").upper() for r in aligned} == original


def _aligned_family(tmp_path: Path) -> Path:
    records = read_records(DATA_DIR / "query.fasta") + read_records(DATA_DIR / "family.fasta")
    out = tmp_path / "aln.fasta"
    write_fasta([SeqRecord(Seq(s), id=i, description="") for i, s in centre_star(records)], out)
    return out


def test_neighbour_joining_puts_the_query_next_to_b2(tmp_path: Path) -> None:
    tree = read_newick(nj_tree(_aligned_family(tmp_path)))
    assert sorted(leaf_names(tree)) == ["A1", "A2", "A3", "B1", "B2", "B3", "O1", "O2", "QRY1"]
    assert nearest_leaf(tree, "QRY1") == "B2"
    assert nearest_leaf(tree, "O1") == "O2"


def test_fasttree_agrees_on_the_nearest_leaf(tmp_path: Path) -> None:
    if shutil.which("FastTree") is None and shutil.which("fasttree") is None:
        pytest.skip("FastTree is not installed (Debian: apt-get install fasttree)")
    fasttree(_aligned_family(tmp_path), tmp_path / "t.nwk")
    tree = read_newick((tmp_path / "t.nwk").read_text())
    assert nearest_leaf(tree, "QRY1") == "B2"


def test_a_tree_needs_three_sequences(tmp_path: Path) -> None:
    p = tmp_path / "two.fasta"
    SeqIO.write([SeqRecord(Seq("ACGT"), id="a"), SeqRecord(Seq("ACGA"), id="b")], p, "fasta")
    with pytest.raises(InputError, match="at least 3"):
        nj_tree(p)


def test_bad_newick_is_an_input_error() -> None:
    with pytest.raises(InputError):
        read_newick("((a,b);")


def test_svg_is_well_formed_and_names_every_leaf() -> None:
    tree = read_newick("((A:0.1,B:0.2):0.05,(C:0.3,D<&>:0.1):0.02);")
    svg = tree_svg(tree, title="T & U")
    root = ET.fromstring(svg)
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert {"A", "B", "C", "D<&>", "T & U"} <= set(texts)
    lines = list(root.iter("{http://www.w3.org/2000/svg}line"))
    assert len(lines) >= 2 * 4 - 1  # one horizontal per branch at least, plus the scale bar
