"""Read FASTA and GenBank with Biopython; write FASTA; list CDS features."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from Bio import BiopythonWarning, SeqIO
from Bio.SeqRecord import SeqRecord

from plansmith.errors import InputError, Location, ParseError

__all__ = ["SeqFormat", "Cds", "sniff_format", "read_records", "write_fasta", "cds_features", "rid"]

SeqFormat = Literal["auto", "fasta", "genbank"]


@dataclass(frozen=True, slots=True)
class Cds:
    """A CDS feature: record, 0-based start, exclusive end, strand, and its protein."""

    record: str
    start: int
    end: int
    strand: int
    gene: str
    product: str
    protein: str
    translation_matches: bool | None


def rid(rec: SeqRecord) -> str:
    """The record's id (Biopython types it as optional; parsed records always have one)."""
    return str(rec.id)


def sniff_format(path: Path) -> Literal["fasta", "genbank"]:
    """``genbank`` if the first non-blank line starts with LOCUS, ``fasta`` if with ``>``."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if line.strip():
                if line.startswith("LOCUS"):
                    return "genbank"
                if line.startswith(">"):
                    return "fasta"
                break
    raise ParseError(
        f"{path.name} is neither FASTA nor GenBank",
        location=Location(str(path), 1),
        hint="a FASTA file starts with '>', a GenBank file with 'LOCUS'",
    )


def read_records(path: Path, fmt: SeqFormat = "auto") -> list[SeqRecord]:
    """Every record of the file; Biopython's parser errors become located ParseErrors."""
    kind = sniff_format(path) if fmt == "auto" else fmt
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BiopythonWarning)
            with path.open(encoding="utf-8") as handle:
                records = list(SeqIO.parse(handle, kind))
    except (ValueError, UnicodeDecodeError) as error:
        raise ParseError(
            f"cannot read {path.name} as {kind}: {error}",
            location=Location(str(path)),
            hint="check the file format, or pass format explicitly",
        ) from None
    if not records:
        raise InputError(
            f"{path.name} holds no {kind} records",
            location=Location(str(path)),
            hint="is it empty, or in another format?",
        )
    return records


def write_fasta(records: list[SeqRecord], path: Path) -> None:
    """Write ``records`` as FASTA (60 columns), ids and descriptions kept."""
    with path.open("w", encoding="utf-8") as handle:
        for rec in records:
            text = str(rec.seq)
            header = rec.description if rec.description.startswith(rid(rec)) else rid(rec)
            handle.write(f">{header}\n")
            for i in range(0, len(text), 60):
                handle.write(text[i : i + 60] + "\n")


def cds_features(records: list[SeqRecord]) -> list[Cds]:
    """The CDS features of GenBank records, with their translations checked."""
    out: list[Cds] = []
    for rec in records:
        for feature in rec.features:
            if feature.type != "CDS":
                continue
            quals = feature.qualifiers
            loc = feature.location
            if loc is None:
                continue
            table = int(quals.get("transl_table", ["1"])[0])
            protein = str(feature.extract(rec.seq).translate(table=table, to_stop=True))
            given = quals.get("translation", [None])[0]
            out.append(
                Cds(
                    record=rid(rec),
                    start=int(loc.start),
                    end=int(loc.end),
                    strand=int(loc.strand or 1),
                    gene=quals.get("gene", [""])[0],
                    product=quals.get("product", [""])[0],
                    protein=protein,
                    translation_matches=None if given is None else given == protein,
                )
            )
    return out
