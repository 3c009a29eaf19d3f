"""plansmith-bio as a real process over stdio, driven by the MCP 2.x client.

One server process runs the whole family pipeline (both search paths); the tests
check its answers against independent computations (bio_independent). Other
processes check a PATH without BLAST+ and a restart with the same idempotency key.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from bio_independent import (
    best_ungapped_identity,
    brute_force_orfs,
    fasta_sequences,
    gc_percent,
    genbank_sequence,
)
from mcp import Client, StdioServerParameters

from plansmith.domains.bio import DATA_DIR

KEY = "io.plansmith/idempotency-key"
HAVE_BLAST = all(shutil.which(b) for b in ("blastn", "makeblastdb", "blastdbcmd"))
needs_blast = pytest.mark.skipif(
    not HAVE_BLAST, reason="BLAST+ is not installed (Debian: apt-get install ncbi-blast+)"
)
INPUTS = {"gene": str(DATA_DIR / "query.gb"), "family": str(DATA_DIR / "family.fasta")}


def _server(root: Path, *, path: str | None = None) -> StdioServerParameters:
    env = {
        "PLANSMITH_BIO_RUN_ROOT": str(root),
        "PLANSMITH_BIO_INPUTS": json.dumps(INPUTS),
        "PATH": os.environ.get("PATH", "") if path is None else path,
    }
    return StdioServerParameters(
        command=sys.executable, args=["-m", "plansmith.domains.bio.server"], env=env, cwd=str(root)
    )


Calls = list[tuple[str, dict[str, Any], str | None]]


async def _session(params: StdioServerParameters, calls: Calls) -> list[dict[str, Any]]:
    """Run ``calls`` (tool, arguments, idempotency key) in one session; record each result."""
    out: list[dict[str, Any]] = []
    async with Client(params, read_timeout_seconds=120) as client:
        await client.list_tools()
        for tool, args, key in calls:
            meta: Any = {KEY: key} if key else None
            result = await client.call_tool(tool, args, meta=meta)
            text = "".join(getattr(c, "text", "") for c in result.content)
            out.append({"error": result.is_error, "data": result.structured_content, "text": text})
    return out


def _run(params: StdioServerParameters, calls: Calls) -> list[dict[str, Any]]:
    return anyio.run(_session, params, calls)


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("bio-runs")
    (root / "link.fasta").symlink_to(DATA_DIR / "query.fasta")  # not a named input
    r = root / "run-1"
    calls: Calls = [
        ("load_sequences", {"source": "gene", "out": f"{r}/gene.fasta"}, "k-load-gene"),
        ("load_sequences", {"source": "family", "out": f"{r}/family.fasta"}, None),
        ("sequence_stats", {"sequences": f"{r}/gene.fasta", "out": f"{r}/gene.stats.json"}, None),
        ("find_orfs", {"sequences": f"{r}/gene.fasta", "out": f"{r}/gene.orfs.json"}, None),
        (
            "biopython_search",
            {
                "query": f"{r}/gene.fasta",
                "database": f"{r}/family.fasta",
                "out": f"{r}/bio.hits.json",
                "homologues": f"{r}/homologues.fasta",
            },
            None,
        ),
    ]
    if HAVE_BLAST:
        calls += [
            ("make_blast_db", {"sequences": f"{r}/family.fasta", "out": f"{r}/db/family"}, None),
            (
                "blast_search",
                {"query": f"{r}/gene.fasta", "database": f"{r}/db/family", "out": f"{r}/b.json"},
                None,
            ),
        ]
    calls += [
        (
            "multiple_alignment",
            {"sequences": f"{r}/homologues.fasta", "out": f"{r}/h.aln", "backend": "biopython"},
            None,
        ),
        (
            "build_tree",
            {"alignment": f"{r}/h.aln", "out": f"{r}/h.nwk", "backend": "biopython"},
            None,
        ),
        (
            "write_report",
            {
                "out": f"{r}/report.md",
                "query": f"{r}/gene.fasta",
                "stats": f"{r}/gene.stats.json",
                "orfs": f"{r}/gene.orfs.json",
                "hits": f"{r}/bio.hits.json",
                "alignment": f"{r}/h.aln",
                "tree": f"{r}/h.nwk",
            },
            None,
        ),
        # refused paths
        ("load_sequences", {"source": "/etc/hostname", "out": f"{r}/x.fasta"}, None),
        ("load_sequences", {"source": "gene", "out": f"{r}/../../escape.fasta"}, None),
        ("sequence_stats", {"sequences": str(root / "link.fasta"), "out": f"{r}/l.json"}, None),
        # the same idempotency key again, after the output was removed (see test below)
        ("load_sequences", {"source": "family", "out": f"{r}/gene.fasta"}, "k-load-gene"),
    ]
    results = _run(_server(root), calls[:-1])
    (r / "gene.fasta").unlink()
    results += _run(_server(root), calls[-1:])  # a new process: the key was persisted
    named = [c[0] if c[0] not in {"load_sequences"} else f"load:{c[1]['source']}" for c in calls]
    return {"root": root, "run": r, "results": results, "names": named, "calls": calls}


def _result(pipeline: dict[str, Any], tool: str, n: int = 0) -> dict[str, Any]:
    hits: list[dict[str, Any]] = [
        res
        for name, res in zip(pipeline["names"], pipeline["results"], strict=True)
        if name == tool
    ]
    return hits[n]


def test_gc_content_matches_plain_counting(pipeline: dict[str, Any]) -> None:
    seq = genbank_sequence(DATA_DIR / "query.gb")
    stats = _result(pipeline, "sequence_stats")
    assert not stats["error"]
    assert stats["data"]["records"][0]["length"] == len(seq) == 1008
    assert stats["data"]["gc_percent"] == pytest.approx(gc_percent(seq), abs=1e-4)
    assert stats["data"]["backend"] == "biopython"


def test_orfs_match_a_brute_force_scan(pipeline: dict[str, Any]) -> None:
    seq = genbank_sequence(DATA_DIR / "query.gb")
    result = _result(pipeline, "find_orfs")
    assert not result["error"]
    orfs = json.loads(Path(result["data"]["file"]["path"]).read_text())["orfs"]
    assert {(o["strand"], o["start"], o["end"]) for o in orfs} == brute_force_orfs(seq, 75)
    assert result["data"]["count"] == len(orfs)


def test_biopython_top_hit_matches_the_independent_best_match(pipeline: dict[str, Any]) -> None:
    query = genbank_sequence(DATA_DIR / "query.gb")
    family = fasta_sequences(DATA_DIR / "family.fasta")
    identities = {name: best_ungapped_identity(query, s) for name, s in family.items()}
    best = max(identities, key=lambda n: identities[n])
    result = _result(pipeline, "biopython_search")
    top = result["data"]["top_hit"]
    assert result["data"]["backend"] == "biopython"
    assert top["subject"] == best == "B2"
    assert (top["identity"], top["align_length"]) == identities["B2"]


@needs_blast
def test_blast_top_hit_matches_the_independent_best_match(pipeline: dict[str, Any]) -> None:
    query = genbank_sequence(DATA_DIR / "query.gb")
    family = fasta_sequences(DATA_DIR / "family.fasta")
    result = _result(pipeline, "blast_search")
    assert result["data"]["backend"] == "blast+"
    top = result["data"]["top_hit"]
    assert top["subject"] == "B2"
    assert (top["identity"], top["align_length"]) == best_ungapped_identity(query, family["B2"])
    bio = _result(pipeline, "biopython_search")["data"]["hits"]
    assert [h["subject"] for h in result["data"]["hits"]] == [h["subject"] for h in bio]
    assert [h["identity"] for h in result["data"]["hits"]] == [h["identity"] for h in bio]


def test_results_pass_files_by_reference(pipeline: dict[str, Any]) -> None:
    import hashlib

    family = fasta_sequences(DATA_DIR / "family.fasta")
    search = _result(pipeline, "biopython_search")
    homologues = search["data"]["homologues"]
    data = Path(homologues["path"]).read_bytes()
    assert homologues["sha256"] == "sha256:" + hashlib.sha256(data).hexdigest()
    assert homologues["uri"].startswith("file://")
    assert family["B2"][:200] not in search["text"]  # sequences are not inlined
    assert Path(homologues["path"]).is_relative_to(pipeline["root"])


def test_report_has_every_section_and_the_top_hit(pipeline: dict[str, Any]) -> None:
    result = _result(pipeline, "write_report")
    assert not result["error"], result["text"]
    assert result["data"]["sections"] == ["gc", "orfs", "hits", "alignment", "tree"]
    text = Path(result["data"]["file"]["path"]).read_text()
    assert "| 1 | PSQ0001.1 | B2 | 98.512 |" in text
    assert "Nearest leaf to PSQ0001.1 along the tree: B2." in text
    assert Path(result["data"]["picture"]["path"]).read_text().startswith("<svg")


def test_paths_outside_the_sandbox_are_refused_with_a_reason(pipeline: dict[str, Any]) -> None:
    refusals = [res for res in pipeline["results"] if res["error"]]
    assert len(refusals) == 3
    assert "/etc/hostname" in refusals[0]["text"]
    assert "path refused" in refusals[0]["text"]
    assert "outside the run roots" in refusals[1]["text"]
    assert "resolves to" in refusals[2]["text"]
    assert str(DATA_DIR / "query.fasta") in refusals[2]["text"]
    assert not (pipeline["root"].parent / "escape.fasta").exists()


def test_same_idempotency_key_returns_the_first_result_without_acting(
    pipeline: dict[str, Any],
) -> None:
    first, again = _result(pipeline, "load:gene", 0), _result(pipeline, "load:family", 1)
    assert again["data"] == first["data"]  # the first result: one gene record, its hash
    assert again["data"]["count"] == 1
    assert not (pipeline["run"] / "gene.fasta").exists()  # no second action rewrote it


def test_without_blast_on_path_blast_fails_and_biopython_still_searches(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    r = tmp_path / "run"
    calls: Calls = [
        ("backends", {}, None),
        ("load_sequences", {"source": "family", "out": f"{r}/family.fasta"}, None),
        ("make_blast_db", {"sequences": f"{r}/family.fasta", "out": f"{r}/db/family"}, None),
        (
            "biopython_search",
            {"query": "gene", "database": f"{r}/family.fasta", "out": f"{r}/hits.json"},
            None,
        ),
    ]
    backends, load, blastdb, search = _run(_server(tmp_path, path=str(empty)), calls)
    assert backends["data"]["available"]["blastn"] is None
    assert backends["data"]["available"]["biopython"].startswith("biopython ")
    assert not load["error"]
    assert blastdb["error"]
    assert "makeblastdb is not installed" in blastdb["text"]
    assert search["data"]["top_hit"]["subject"] == "B2"
