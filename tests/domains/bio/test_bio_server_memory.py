"""The server object in process (MCP client over memory): every tool, errors, idempotency."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from plansmith.domains.bio import DATA_DIR
from plansmith.domains.bio._paths import Sandbox
from plansmith.domains.bio.server import create_server, main

KEY = "io.plansmith/idempotency-key"
INPUTS = {"gene": DATA_DIR / "query.gb", "family": DATA_DIR / "family.fasta"}


def _calls(root: Path, calls: list[tuple[str, dict[str, Any], str | None]]) -> list[Any]:
    server = create_server(Sandbox.of([root], INPUTS), state_dir=root / ".state")

    async def go() -> list[Any]:
        async with Client(server) as client:
            await client.list_tools()
            metas: list[Any] = [{KEY: k} if k else None for _, _, k in calls]
            return [
                await client.call_tool(t, a, meta=m)
                for (t, a, _), m in zip(calls, metas, strict=True)
            ]

    return anyio.run(go)


def test_sequence_tools_translate_reverse_and_align(tmp_path: Path) -> None:
    r = tmp_path / "r"
    load, prot, rc, pair, bad = _calls(
        tmp_path,
        [
            (
                "load_sequences",
                {"source": "gene", "out": f"{r}/g.fasta", "format": "genbank"},
                None,
            ),
            ("translate", {"sequences": f"{r}/g.fasta", "out": f"{r}/p.fasta"}, None),
            ("reverse_complement", {"sequences": f"{r}/g.fasta", "out": f"{r}/rc.fasta"}, None),
            (
                "pairwise_align",
                {"a": f"{r}/g.fasta", "b": f"{r}/rc.fasta", "out": f"{r}/a.txt"},
                None,
            ),
            ("load_sequences", {"source": "family", "out": f"{r}/f.gb", "format": "genbank"}, None),
        ],
    )
    assert load.structured_content["cds"][0]["translation_matches"] is True
    assert load.structured_content["cds"][0]["protein_length"] == 300
    assert prot.structured_content["count"] == 1
    assert "MKT" not in prot.content[0].text  # the protein is in the file, not inline
    assert pair.structured_content["hit"]["identity"] == 100.0
    assert pair.structured_content["hit"]["s_start"] == 1008  # found on the minus strand
    assert rc.structured_content["backend"] == "biopython"
    assert bad.is_error
    assert "genbank" in bad.content[0].text


@pytest.mark.parametrize(
    ("msa", "tree"), [("mafft", "fasttree"), ("clustalo", "biopython"), ("biopython", "fasttree")]
)
def test_alignment_and_tree_backends_report_themselves(msa: str, tree: str, tmp_path: Path) -> None:
    for program in (msa, tree):
        if program != "biopython" and not shutil.which(
            "FastTree" if program == "fasttree" else program
        ):
            pytest.skip(f"{program} is not installed")
    r = tmp_path / "r"
    _, aln, nwk, svg = _calls(
        tmp_path,
        [
            ("load_sequences", {"source": "family", "out": f"{r}/f.fasta"}, None),
            (
                "multiple_alignment",
                {"sequences": f"{r}/f.fasta", "out": f"{r}/f.aln", "backend": msa},
                None,
            ),
            ("build_tree", {"alignment": f"{r}/f.aln", "out": f"{r}/f.nwk", "backend": tree}, None),
            ("render_tree", {"tree": f"{r}/f.nwk", "out": f"{r}/f.svg", "title": "family"}, None),
        ],
    )
    assert aln.structured_content["backend"] == msa
    assert aln.structured_content["sequences"] == 8
    assert nwk.structured_content["backend"] == tree
    assert sorted(nwk.structured_content["leaves"]) == [
        "A1",
        "A2",
        "A3",
        "B1",
        "B2",
        "B3",
        "O1",
        "O2",
    ]
    assert svg.structured_content["leaves"] == 8
    prov = Path(f"{r}/f.nwk.prov.json").read_text()
    assert f'"backend": "{tree}"' in prov


def test_errors_are_tool_results_with_the_reason(tmp_path: Path) -> None:
    r = tmp_path / "r"
    (tmp_path / "junk.txt").write_text("hello\n")
    (tmp_path / "one.fasta").write_text(">a\nACGT\n")
    junk, one, nodb, tree = _calls(
        tmp_path,
        [
            (
                "sequence_stats",
                {"sequences": str(tmp_path / "junk.txt"), "out": f"{r}/s.json"},
                None,
            ),
            (
                "multiple_alignment",
                {"sequences": str(tmp_path / "one.fasta"), "out": f"{r}/a"},
                None,
            ),
            (
                "blast_search",
                {"query": "gene", "database": f"{r}/none", "out": f"{r}/h.json"},
                None,
            ),
            ("build_tree", {"alignment": str(tmp_path / "junk.txt"), "out": f"{r}/t.nwk"}, None),
        ],
    )
    assert junk.is_error
    assert "neither FASTA nor GenBank" in junk.content[0].text
    assert one.is_error
    assert "needs 2 or more" in one.content[0].text
    assert nodb.is_error
    assert "no BLAST database" in nodb.content[0].text
    assert tree.is_error


def test_idempotency_key_in_meta_replays_the_first_result(tmp_path: Path) -> None:
    r = tmp_path / "r"
    first, second, other = _calls(
        tmp_path,
        [
            ("load_sequences", {"source": "gene", "out": f"{r}/a.fasta"}, "step-1"),
            ("load_sequences", {"source": "family", "out": f"{r}/b.fasta"}, "step-1"),
            ("load_sequences", {"source": "family", "out": f"{r}/c.fasta"}, "step-2"),
        ],
    )
    assert second.structured_content == first.structured_content
    assert not (r / "b.fasta").exists()
    assert other.structured_content["count"] == 8


@pytest.mark.skipif(shutil.which("blastn") is None, reason="BLAST+ is not installed")
def test_blast_search_writes_homologues_fetched_from_the_database(tmp_path: Path) -> None:
    r = tmp_path / "r"
    _, _, db, search = _calls(
        tmp_path,
        [
            ("load_sequences", {"source": "gene", "out": f"{r}/g.fasta"}, None),
            ("load_sequences", {"source": "family", "out": f"{r}/f.fasta"}, None),
            ("make_blast_db", {"sequences": f"{r}/f.fasta", "out": f"{r}/db/f"}, None),
            (
                "blast_search",
                {
                    "query": f"{r}/g.fasta",
                    "database": f"{r}/db/f",
                    "out": f"{r}/h.json",
                    "homologues": f"{r}/hom.fasta",
                    "top": 3,
                    "min_identity": 50,
                },
                None,
            ),
        ],
    )
    assert db.structured_content["sequences"] == 8
    assert db.structured_content["backend"] == "blast+"
    ids = [ln.split()[0][1:] for ln in (r / "hom.fasta").read_text().splitlines() if ln[0] == ">"]
    assert ids == ["PSQ0001.1", "B2", "B1", "B3"]
    assert search.structured_content["homologues"]["path"] == str(r / "hom.fasta")


def test_main_rejects_a_malformed_input_argument() -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--input", "nonsense"])
    assert stop.value.code == 2
