"""Trees from a multiple alignment: Biopython neighbour joining, or FastTree."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Literal

from Bio import AlignIO
from Bio.Phylo import NewickIO
from Bio.Phylo.TreeConstruction import DistanceCalculator, DistanceTreeConstructor

from plansmith.domains.bio._external import run_binary
from plansmith.errors import InputError, Location

__all__ = ["TreeBackend", "nj_tree", "fasttree", "read_newick", "leaf_names", "nearest_leaf"]

TreeBackend = Literal["fasttree", "biopython"]


def _read_alignment(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as handle:
            return AlignIO.read(handle, "fasta")
    except ValueError as error:
        raise InputError(
            f"{path.name} is not an aligned FASTA: {error}",
            location=Location(str(path)),
            hint="give the output of the multiple_alignment tool",
        ) from None


def nj_tree(alignment: Path) -> str:
    """Newick of the neighbour-joining tree of identity distances (inner nodes unnamed)."""
    aln = _read_alignment(alignment)
    if len(aln) < 3:
        raise InputError(
            f"a tree needs at least 3 sequences, {alignment.name} has {len(aln)}",
            location=Location(str(alignment)),
        )
    matrix = DistanceCalculator("identity").get_distance(aln)
    tree = DistanceTreeConstructor().nj(matrix)
    for clade in tree.get_nonterminals():
        clade.name = None
    handle = io.StringIO()
    NewickIO.write([tree], handle)
    return handle.getvalue().strip() + "\n"


def fasttree(alignment: Path, out: Path) -> None:
    """FastTree (nucleotide, GTR) on ``alignment``; Newick to ``out``."""
    _read_alignment(alignment)
    run_binary("fasttree", ["-nt", "-gtr", "-quiet", "-nopr", str(alignment)], stdout_to=out)


def read_newick(text: str) -> Any:
    """A Bio.Phylo tree from Newick text (errors become InputError)."""
    try:
        trees = list(NewickIO.parse(io.StringIO(text)))
    except (ValueError, NewickIO.NewickError) as error:
        raise InputError(f"not a Newick tree: {error}", hint="give a .nwk file") from None
    if len(trees) != 1:
        raise InputError(f"expected one Newick tree, found {len(trees)}", hint="give a .nwk file")
    return trees[0]


def leaf_names(tree: Any) -> list[str]:
    return [str(c.name) for c in tree.get_terminals()]


def nearest_leaf(tree: Any, name: str) -> str:
    """The leaf closest to ``name`` along the branches (patristic distance)."""
    others = [c for c in tree.get_terminals() if c.name != name]
    return str(min(others, key=lambda c: (tree.distance(name, c.name), str(c.name))).name)
