"""The bio domain's data set: a deterministic, generated gene family (stdlib only).

An ancestral gene (5' UTR, a 300-codon CDS, 3' UTR; about 56 % GC) evolves along a
fixed tree: three clades split from the ancestor, and each clade gives members
by further substitutions and whole-codon insertions or deletions. Substitutions
never create a stop codon inside the CDS, so every member keeps one intact
reading frame. The query gene is member B2 with 1.5 % more substitutions and no
indels, so its closest relative in the database is B2 by construction.

``python -m plansmith.domains.bio._family DIR`` writes ``family.fasta`` (the
database, 8 members), ``query.fasta`` and ``query.gb`` (a GenBank record with
source, gene and CDS features and the CDS translation). The same seed gives the
same bytes on every machine; a test checks that the shipped files match.
"""

from __future__ import annotations

import random
import sys
import textwrap
from dataclasses import dataclass, replace
from pathlib import Path

__all__ = ["SEED", "Gene", "family", "query_gene", "fasta_text", "genbank_text", "write_data"]

SEED = 20240611
BASES = "ACGT"
BASE_WEIGHTS = (0.22, 0.28, 0.28, 0.22)
STOPS = frozenset({"TAA", "TAG", "TGA"})
CODE = dict(
    zip(
        (a + b + c for a in "TCAG" for b in "TCAG" for c in "TCAG"),
        "FFLLSSSSYY**CC*WLLLLPPPPHHQQRRRRIIIMTTTTNNKKSSRRVVVVAAAADDEEGGGG",
        strict=True,
    )
)


@dataclass(frozen=True, slots=True)
class Gene:
    """A gene: 5' UTR, ATG, inner codons, TAA, 3' UTR."""

    name: str
    utr5: str
    codons: tuple[str, ...]
    utr3: str
    note: str = ""

    @property
    def sequence(self) -> str:
        return self.utr5 + "ATG" + "".join(self.codons) + "TAA" + self.utr3

    @property
    def cds(self) -> tuple[int, int]:
        """The CDS as 0-based start and exclusive end (stop codon included)."""
        start = len(self.utr5)
        return start, start + 3 * (len(self.codons) + 2)

    def protein(self) -> str:
        return "M" + "".join(CODE[c] for c in self.codons)


def _bases(rng: random.Random, n: int) -> str:
    return "".join(rng.choices(BASES, BASE_WEIGHTS, k=n))


def _codon(rng: random.Random) -> str:
    while True:
        codon = _bases(rng, 3)
        if codon not in STOPS:
            return codon


def _substitute(gene: Gene, rate: float, rng: random.Random) -> Gene:
    utr5, utr3 = list(gene.utr5), list(gene.utr3)
    codons = [list(c) for c in gene.codons]
    n5, nc = len(utr5), 3 * len(codons)
    total = n5 + nc + len(utr3)
    for pos in rng.sample(range(total), round(rate * total)):
        if pos < n5 or pos >= n5 + nc:
            seq, i = (utr5, pos) if pos < n5 else (utr3, pos - n5 - nc)
            seq[i] = rng.choice([b for b in BASES if b != seq[i]])
            continue
        codon = codons[(pos - n5) // 3]
        k = (pos - n5) % 3
        options = [b for b in BASES if b != codon[k]]
        rng.shuffle(options)
        for base in options:
            if "".join([*codon[:k], base, *codon[k + 1 :]]) not in STOPS:
                codon[k] = base
                break
    return replace(
        gene, utr5="".join(utr5), codons=tuple("".join(c) for c in codons), utr3="".join(utr3)
    )


def _indel(gene: Gene, kind: str, rng: random.Random) -> Gene:
    codons = list(gene.codons)
    at = rng.randrange(10, len(codons) - 10)
    if kind == "del":
        del codons[at]
    else:
        codons.insert(at, _codon(rng))
    return replace(gene, codons=tuple(codons))


def _descend(parent: Gene, name: str, rate: float, rng: random.Random, *indels: str) -> Gene:
    child = _substitute(parent, rate, rng)
    for kind in indels:
        child = _indel(child, kind, rng)
    return replace(child, name=name, note=parent.note)


def _lineage() -> tuple[Gene, ...]:
    """Ancestor, clades and members, all from one random stream in a fixed order."""
    rng = random.Random(SEED)
    ancestor = Gene("ANC", _bases(rng, 45), tuple(_codon(rng) for _ in range(298)), _bases(rng, 60))
    clade_a = replace(_descend(ancestor, "cladeA", 0.05, rng, "del"), note="clade A")
    clade_b = replace(_descend(ancestor, "cladeB", 0.05, rng, "ins"), note="clade B")
    clade_o = replace(_descend(ancestor, "cladeO", 0.15, rng), note="outgroup clade O")
    members = (
        _descend(clade_a, "A1", 0.02, rng),
        _descend(clade_a, "A2", 0.02, rng),
        _descend(clade_a, "A3", 0.02, rng, "ins"),
        _descend(clade_b, "B1", 0.02, rng),
        _descend(clade_b, "B2", 0.02, rng),
        _descend(clade_b, "B3", 0.02, rng, "del"),
        _descend(clade_o, "O1", 0.03, rng),
        _descend(clade_o, "O2", 0.03, rng),
    )
    query = replace(_substitute(members[4], 0.015, rng), name="QRY1", note="query, from B2")
    return (*members, query)


def family() -> tuple[Gene, ...]:
    """The eight database members: A1-A3, B1-B3, O1-O2."""
    return _lineage()[:-1]


def query_gene() -> Gene:
    """The query gene: B2 plus 1.5 % substitutions, no indels."""
    return _lineage()[-1]


def fasta_text(genes: tuple[Gene, ...]) -> str:
    """FASTA, 60 bases a line; the description names the member's clade and the seed."""
    out: list[str] = []
    for g in genes:
        out.append(f">{g.name} synthetic gene family member ({g.note}; seed {SEED})")
        out.extend(textwrap.wrap(g.sequence, 60))
    return "\n".join(out) + "\n"


def genbank_text(gene: Gene, *, locus: str = "PSQ0001") -> str:
    """A GenBank flat file with source, gene and CDS features (and the translation)."""
    seq = gene.sequence
    start, end = gene.cds
    pad = " " * 21
    lines = [
        f"LOCUS       {locus:<16} {len(seq):>11} bp    DNA     linear   SYN 11-JUN-2024",
        "DEFINITION  Synthetic gene psq1 of the plansmith test family, complete cds.",
        f"ACCESSION   {locus}",
        f"VERSION     {locus}.1",
        "KEYWORDS    .",
        "SOURCE      synthetic DNA construct",
        "  ORGANISM  synthetic DNA construct",
        "            other sequences; artificial sequences.",
        "FEATURES             Location/Qualifiers",
        f"     source          1..{len(seq)}",
        f'{pad}/organism="synthetic DNA construct"',
        f'{pad}/mol_type="other DNA"',
        f'{pad}/note="generated by plansmith.domains.bio._family, seed {SEED}"',
        f"     gene            {start + 1}..{end}",
        f'{pad}/gene="psq1"',
        f"     CDS             {start + 1}..{end}",
        f'{pad}/gene="psq1"',
        f"{pad}/codon_start=1",
        f"{pad}/transl_table=1",
        f'{pad}/product="synthetic family protein PSQ1"',
    ]
    wrapped = textwrap.wrap(f'/translation="{gene.protein()}"', 58, break_on_hyphens=False)
    lines.extend(pad + w for w in wrapped)
    lines.append("ORIGIN")
    for i in range(0, len(seq), 60):
        chunk = seq[i : i + 60].lower()
        lines.append(f"{i + 1:>9} " + " ".join(chunk[j : j + 10] for j in range(0, len(chunk), 10)))
    lines.append("//")
    return "\n".join(lines) + "\n"


def write_data(folder: Path) -> list[Path]:
    """Write family.fasta, query.fasta and query.gb into ``folder``; return their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "family.fasta": fasta_text(family()),
        "query.fasta": fasta_text((query_gene(),)),
        "query.gb": genbank_text(query_gene()),
    }
    written = []
    for name, text in files.items():
        path = folder / name
        path.write_text(text, encoding="ascii")
        written.append(path)
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "data"
    for p in write_data(target):
        sys.stdout.write(f"{p}\n")
