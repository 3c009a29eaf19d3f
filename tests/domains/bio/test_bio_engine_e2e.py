"""The full-report goal end to end through the engine: plan, bind, run on the real server
and tools; and a replan when BLAST+ is missing at run time. Skipped while the engine is
not importable."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from bio_independent import best_ungapped_identity, fasta_sequences, gc_percent, genbank_sequence

from plansmith.domains import bio

engine = pytest.importorskip("plansmith.engine")
INPUTS = {"gene": bio.DATA_DIR / "query.gb", "family": bio.DATA_DIR / "family.fasta"}


def _run(
    home: Path, available: tuple[str, ...], server_path: str | None = None
) -> tuple[Any, list[tuple[str, dict[str, Any]]]]:
    problem = bio.write_problem(
        home / "problem.yaml", "full family report", INPUTS, available=available
    )
    config: Any = bio.server_config(INPUTS, home)
    if server_path is not None:
        config["mcpServers"]["bio"]["env"]["PATH"] = server_path
    (home / "servers.json").write_text(json.dumps(config))
    inputs = engine.RunInputs(
        bio.DOMAIN_DIR / "domain.yaml",
        problem,
        home / "servers.json",
        bio.DOMAIN_DIR / "bindings.yaml",
    )
    events: list[tuple[str, dict[str, Any]]] = []

    def record(event: Any) -> None:
        events.append((type(event).__name__, dataclasses.asdict(event)))

    async def go() -> Any:
        runner = engine.Engine(home)
        try:
            return await runner.run(inputs, approve=True, subscribe=record)
        finally:
            runner.close()

    return anyio.run(go), events


def _succeeded(events: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [e["action"] for kind, e in events if kind == "StepSucceeded"]


def test_full_report_runs_end_to_end_with_correct_numbers(tmp_path: Path) -> None:
    tools = ("blastn", "mafft", "fasttree")
    missing = [t for t in tools if t not in bio.detect_tools()]
    if missing:
        pytest.skip(f"not installed: {missing} (Debian: ncbi-blast+ mafft fasttree)")
    outcome, events = _run(tmp_path.resolve(), tools)
    assert outcome.state == "succeeded", outcome.reason
    assert {"search_blast", "align_mafft", "tree_fasttree", "write_report"} <= set(
        _succeeded(events)
    )
    report_step = next(
        e["step"] for k, e in events if k == "StepSucceeded" and e["action"] == "write_report"
    )
    text = Path(outcome.outputs[report_step]["report"]).read_text()
    query = genbank_sequence(bio.DATA_DIR / "query.gb")
    identity, length = best_ungapped_identity(
        query, fasta_sequences(bio.DATA_DIR / "family.fasta")["B2"]
    )
    assert f"| PSQ0001.1 | {len(query)} | {gc_percent(query):.2f} |" in text
    assert f"| 1 | PSQ0001.1 | B2 | {identity:.3f} | {length} |" in text
    assert "Search backend: blast+" in text
    assert "```newick" in text
    assert Path(outcome.outputs[report_step]["picture"]).read_text().startswith("<svg")


def test_blast_missing_at_run_time_replans_to_the_biopython_search(tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    outcome, events = _run(tmp_path.resolve(), ("blastn",), server_path=str(empty))
    assert outcome.state == "succeeded", outcome.reason
    kinds = [k for k, _ in events]
    assert "Replanned" in kinds
    failed = [e["action"] for k, e in events if k == "StepFailed"]
    assert failed[0] == "make_blast_db"
    done = _succeeded(events)
    assert "search_biopython" in done
    assert done.count("gc_content") == 1  # kept from before the replan, not run again
    assert done.count("find_orfs") == 1
    report = next(
        e["step"] for k, e in events if k == "StepSucceeded" and e["action"] == "write_report"
    )
    assert "Search backend: biopython" in Path(outcome.outputs[report]["report"]).read_text()
