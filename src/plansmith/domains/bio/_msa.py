"""Multiple sequence alignment: MAFFT, Clustal Omega, or a Biopython centre-star alignment.

The Biopython path is for when neither program is installed. It aligns every
pair globally with :class:`Bio.Align.PairwiseAligner`, takes as centre the
sequence with the highest sum of scores, aligns every other sequence to the
centre, and merges those pairwise alignments ("once a gap, always a gap").
It is exact for two sequences and a good approximation for a close family.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from Bio.SeqRecord import SeqRecord

from plansmith.domains.bio._external import run_binary
from plansmith.domains.bio._search import make_aligner
from plansmith.domains.bio._seqio import rid

__all__ = ["MsaBackend", "centre_star", "align_external"]

MsaBackend = Literal["mafft", "clustalo", "biopython"]


def centre_star(records: list[SeqRecord]) -> list[tuple[str, str]]:
    """``(id, gapped sequence)`` rows of a centre-star alignment, in input order."""
    seqs = [str(r.seq).upper() for r in records]
    if len(seqs) == 1:
        return [(rid(records[0]), seqs[0])]
    aligner = make_aligner("global")
    n = len(seqs)
    total = [0.0] * n
    for i in range(n):
        for j in range(i + 1, n):
            score = float(aligner.score(seqs[i], seqs[j]))
            total[i] += score
            total[j] += score
    centre = max(range(n), key=lambda i: (total[i], -i))
    master = seqs[centre]
    rows: dict[int, list[str]] = {centre: list(master)}
    for k in range(n):
        if k == centre:
            continue
        aln = aligner.align(seqs[centre], seqs[k])[0]
        rows[k] = _merge(rows, centre, str(aln[0]), str(aln[1]))
    return [(rid(records[i]), "".join(rows[i])) for i in range(n)]


def _merge(rows: dict[int, list[str]], centre: int, pc: str, ps: str) -> list[str]:
    """Add the pair (centre ``pc``, new ``ps``) to ``rows``; return the new row."""
    master = rows[centre]
    new: list[str] = []
    i = j = 0
    while i < len(master) or j < len(pc):
        if i < len(master) and (master[i] == "-" or j >= len(pc)):
            new.append("-")  # a gap column the new pair does not have
            i += 1
        elif j < len(pc) and pc[j] == "-":
            for row in rows.values():  # a gap the pair opens in the centre: a new column
                row.insert(i, "-")
            new.append(ps[j])
            i += 1
            j += 1
        else:
            new.append(ps[j])
            i += 1
            j += 1
    return new


def align_external(backend: Literal["mafft", "clustalo"], fasta: Path, out: Path) -> None:
    """Run MAFFT (``--auto``) or Clustal Omega on ``fasta``; aligned FASTA to ``out``."""
    if backend == "mafft":
        run_binary("mafft", ["--quiet", "--auto", "--thread", "1", str(fasta)], stdout_to=out)
    else:
        run_binary(
            "clustalo",
            ["-i", str(fasta), "-o", str(out), "--outfmt=fasta", "--force", "--threads=1"],
        )
