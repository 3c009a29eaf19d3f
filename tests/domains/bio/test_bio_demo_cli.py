"""``plansmith demo bio`` (cli/_demo_bio.py): the full report on the real tools through
the engine, a progress table, the report's path and a summary."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from bio_independent import best_ungapped_identity, fasta_sequences, gc_percent, genbank_sequence
from rich.console import Console

from plansmith.cli._demo_bio import overlapping_steps, run_bio_demo
from plansmith.domains import bio
from plansmith.execution import Event, StepStarted, StepSucceeded

QUERY = genbank_sequence(bio.DATA_DIR / "query.gb")


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=200, color_system=None), out


def test_demo_writes_the_report_and_prints_its_path_and_summary(tmp_path: Path) -> None:
    console, out = _console()
    report = run_bio_demo(console, tmp_path / "home")
    text = out.getvalue()
    assert report.is_file()
    assert report.is_relative_to((tmp_path / "home" / "runs").resolve())
    assert f"report: {report}" in text
    assert f"GC content of the gene: {gc_percent(QUERY):.2f} %" in text
    identity, _ = best_ungapped_identity(
        QUERY, fasta_sequences(bio.DATA_DIR / "family.fasta")["B2"]
    )
    assert f"top hit: B2 at {identity:.3f} % identity" in text
    assert "Nearest leaf to PSQ0001.1 along the tree: B2." in text
    assert "write_report(gene, family, homologues)" in text  # the progress table
    assert "no step failed; no replan" in text
    assert "## Run notes" in report.read_text()


def test_demo_with_failing_blast_replans_and_says_so(tmp_path: Path) -> None:
    if "blastn" not in bio.detect_tools():
        pytest.skip("BLAST+ is not installed (Debian: ncbi-blast+): the plan has no BLAST step")
    console, out = _console()
    report = run_bio_demo(console, tmp_path, blast_fails=True)
    text = out.getvalue()
    assert "replanned after s5 failed" in text
    assert "search backend biopython" in text
    assert "given up" in text
    notes = report.read_text().split("## Run notes")[1]
    assert "make_blast_db(family) failed" in notes
    assert "made to fail by the demo" in notes


def test_overlap_is_read_from_the_order_of_start_and_end_events() -> None:
    def ev(cls: type[StepStarted] | type[StepSucceeded], seq: int, step: str) -> Event:
        return cls(run_id="r", seq=seq, step=step, action=step)

    events: list[Event] = [
        ev(StepStarted, 1, "a"),
        ev(StepStarted, 2, "b"),
        ev(StepSucceeded, 3, "a"),
    ]
    events += [ev(StepStarted, 4, "c"), ev(StepSucceeded, 5, "b"), ev(StepSucceeded, 6, "c")]
    assert overlapping_steps(events, {"a", "b", "c"}) == [("a", "b"), ("b", "c")]
