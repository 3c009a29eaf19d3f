"""The Markdown report: every section, the numbers from its sources, and their provenance."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from plansmith.domains.bio import DATA_DIR
from plansmith.domains.bio._paths import Sandbox
from plansmith.domains.bio._report import report_tool
from plansmith.domains.bio._tools_family import biopython_search_tool, msa_tool, tree_tool
from plansmith.domains.bio._tools_seq import load_sequences, orfs_tool, stats_tool


def _pipeline(tmp_path: Path) -> tuple[Sandbox, Path]:
    box = Sandbox.of(
        [tmp_path], {"gene": DATA_DIR / "query.gb", "family": DATA_DIR / "family.fasta"}
    )
    r = tmp_path / "run"
    load_sequences(box, "gene", str(r / "gene.fasta"))
    load_sequences(box, "family", str(r / "family.fasta"))
    stats_tool(box, str(r / "gene.fasta"), str(r / "gene.stats.json"))
    orfs_tool(box, str(r / "gene.fasta"), str(r / "gene.orfs.json"), 150, 1)
    biopython_search_tool(
        box,
        query=str(r / "gene.fasta"),
        database=str(r / "family.fasta"),
        out=str(r / "hits.json"),
        homologues=str(r / "hom.fasta"),
        top=5,
        min_identity=0.0,
    )
    msa_tool(box, str(r / "hom.fasta"), str(r / "hom.aln.fasta"), "biopython")
    tree_tool(box, str(r / "hom.aln.fasta"), str(r / "hom.nwk"), "biopython")
    return box, r


def test_full_report_has_every_section_with_the_source_numbers(tmp_path: Path) -> None:
    box, r = _pipeline(tmp_path)
    result = report_tool(
        box,
        out=str(r / "report.md"),
        title="Family report",
        query=str(r / "gene.fasta"),
        stats=str(r / "gene.stats.json"),
        orfs=str(r / "gene.orfs.json"),
        hits=str(r / "hits.json"),
        alignment=str(r / "hom.aln.fasta"),
        tree=str(r / "hom.nwk"),
        picture=None,
        notes=["search ran on the biopython backend"],
    )
    text = (r / "report.md").read_text()
    assert result.sections == ["gc", "orfs", "hits", "alignment", "tree"]
    for heading in (
        "Length and GC content",
        "Open reading frames",
        "Top hits",
        "Tree",
        "Provenance",
    ):
        assert f"## {heading}" in text
    stats = json.loads((r / "gene.stats.json").read_text())
    assert f"| PSQ0001.1 | 1008 | {stats['records'][0]['gc_percent']:.2f} |" in text
    assert re.search(r"\| 1 \| PSQ0001\.1 \| B2 \| 98\.512 \| 1008 \| 15 \| 0 \|", text)
    assert (r / "hom.nwk").read_text().strip() in text
    assert "Nearest leaf to PSQ0001.1 along the tree: B2." in text
    assert result.picture is not None
    assert Path(result.picture.path).is_file()
    assert f"![tree]({Path(result.picture.path).name})" in text
    assert "- search ran on the biopython backend" in text


def test_provenance_table_cites_every_source_with_its_tool_and_backend(tmp_path: Path) -> None:
    box, r = _pipeline(tmp_path)
    report_tool(
        box,
        out=str(r / "report.md"),
        title="t",
        query=str(r / "gene.fasta"),
        stats=str(r / "gene.stats.json"),
        orfs=str(r / "gene.orfs.json"),
        hits=str(r / "hits.json"),
        alignment=None,
        tree=None,
        picture=None,
        notes=[],
    )
    rows = [ln for ln in (r / "report.md").read_text().splitlines() if ln.startswith("| S")]
    assert [ln.split("|")[5].strip() for ln in rows] == [
        "load_sequences",
        "sequence_stats",
        "find_orfs",
        "biopython_search",
    ]
    assert all("✓" in ln for ln in rows)
    assert "`query.gb`" in rows[0]


def test_a_source_changed_after_it_was_made_is_flagged(tmp_path: Path) -> None:
    box, r = _pipeline(tmp_path)
    stats = r / "gene.stats.json"
    stats.write_text(stats.read_text().replace("58.8294", "12.0"))
    report_tool(
        box,
        out=str(r / "report.md"),
        title="t",
        query=None,
        stats=str(stats),
        orfs=None,
        hits=None,
        alignment=None,
        tree=None,
        picture=None,
        notes=[],
    )
    assert "changed since made" in (r / "report.md").read_text()


def test_report_refuses_a_source_outside_the_sandbox(tmp_path: Path) -> None:
    from plansmith.errors import InputError

    box, r = _pipeline(tmp_path / "inner")
    outside = tmp_path / "evil.json"
    outside.write_text("{}")
    with pytest.raises(InputError, match="path refused"):
        report_tool(
            box,
            out=str(r / "report.md"),
            title="t",
            query=None,
            stats=str(outside),
            orfs=None,
            hits=None,
            alignment=None,
            tree=None,
            picture=None,
            notes=[],
        )
