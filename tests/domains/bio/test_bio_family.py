"""The shipped data set is the generator's output, and it has the structure it claims."""

from __future__ import annotations

import warnings
from pathlib import Path

from bio_independent import fasta_sequences

from plansmith.domains.bio import DATA_DIR
from plansmith.domains.bio._family import (
    family,
    fasta_text,
    genbank_text,
    query_gene,
    write_data,
)


def test_shipped_files_are_exactly_what_the_generator_writes(tmp_path: Path) -> None:
    write_data(tmp_path)
    for name in ("family.fasta", "query.fasta", "query.gb"):
        assert (tmp_path / name).read_bytes() == (DATA_DIR / name).read_bytes(), name


def test_generator_is_deterministic() -> None:
    assert fasta_text(family()) == fasta_text(family())
    assert genbank_text(query_gene()) == genbank_text(query_gene())


def test_family_has_eight_members_with_intact_reading_frames() -> None:
    members = family()
    assert [g.name for g in members] == ["A1", "A2", "A3", "B1", "B2", "B3", "O1", "O2"]
    for g in members:
        start, end = g.cds
        cds = g.sequence[start:end]
        codons = [cds[i : i + 3] for i in range(0, len(cds), 3)]
        assert codons[0] == "ATG"
        assert codons[-1] == "TAA"
        assert not {"TAA", "TAG", "TGA"} & set(codons[:-1]), g.name


def test_query_is_b2_with_substitutions_only() -> None:
    db = fasta_sequences(DATA_DIR / "family.fasta")
    query = fasta_sequences(DATA_DIR / "query.fasta")["QRY1"]
    assert len(query) == len(db["B2"])
    differences = sum(a != b for a, b in zip(query, db["B2"], strict=True))
    assert differences == round(0.015 * len(query))


def test_genbank_record_parses_with_a_cds_whose_translation_matches() -> None:
    from Bio import SeqIO

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with (DATA_DIR / "query.gb").open() as handle:
            record = SeqIO.read(handle, "genbank")
    assert str(record.seq) == fasta_sequences(DATA_DIR / "query.fasta")["QRY1"]
    (cds,) = [f for f in record.features if f.type == "CDS"]
    protein = str(cds.extract(record.seq).translate(to_stop=True))
    assert protein == cds.qualifiers["translation"][0] == query_gene().protein()
    assert len(protein) == 300
