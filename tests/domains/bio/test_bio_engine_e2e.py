"""The full-report goal end to end through the engine: plan, bind, run on the real server
and tools. The report's numbers are checked against independent computations; BLAST+
missing at plan time gives the Biopython plan; BLAST+ missing or failing at run time
gives a replan that keeps the finished steps, and the report states it."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from bio_engine_run import failing_blast_dir, outputs_of, run_goal, succeeded_actions
from bio_independent import (
    best_ungapped_identity,
    brute_force_orfs,
    fasta_sequences,
    gc_percent,
    genbank_sequence,
)

from plansmith.domains import bio
from plansmith.execution import (
    Event,
    PlanReady,
    Replanned,
    RunOutcome,
    StepFailed,
    StepSucceeded,
)

ALL = ("blastn", "mafft", "fasttree")
QUERY = genbank_sequence(bio.DATA_DIR / "query.gb")
FAMILY = fasta_sequences(bio.DATA_DIR / "family.fasta")


def _need(*tools: str) -> None:
    missing = [t for t in tools if t not in bio.detect_tools()]
    if missing:
        pytest.skip(f"not installed: {missing} (Debian: ncbi-blast+ mafft fasttree)")


def _section(text: str, title: str) -> str:
    """The body of the ``## title`` section of the Markdown report."""
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_full_report_has_every_section_with_correct_numbers(tmp_path: Path) -> None:
    _need(*ALL)
    outcome, events = run_goal(tmp_path.resolve(), ALL)
    assert outcome.state == "succeeded", outcome.reason
    done = succeeded_actions(events)
    assert {"make_blast_db", "search_blast", "align_mafft", "tree_fasttree"} <= set(done)
    report = outputs_of(outcome, events, "write_report")
    text = Path(report["report"]).read_text()

    gc = _section(text, "Length and GC content")
    assert f"| PSQ0001.1 | {len(QUERY)} | {gc_percent(QUERY):.2f} |" in gc

    orfs = _section(text, "Open reading frames")
    expected = brute_force_orfs(QUERY, 150)
    rows = re.findall(r"\| PSQ0001\.1 \| ([+-]) \| \d \| (\d+) \| (\d+) \| (\d+) \|", orfs)
    found = {(1 if s == "+" else -1, int(a), int(b)) for s, a, b, _ in rows}
    assert found == expected
    assert orfs.count("| PSQ0001.1 |") == len(expected)
    assert all(int(b) - int(a) == int(n) for _, a, b, n in rows)

    hits = _section(text, "Top hits")
    assert "Search backend: blast+" in hits
    ranked = re.findall(r"\| (\d+) \| PSQ0001\.1 \| (\w+) \| ([\d.]+) \| (\d+) \|", hits)
    assert len(ranked) == len(FAMILY)  # every member is a homologue
    identity, length = best_ungapped_identity(QUERY, FAMILY["B2"])
    assert ranked[0] == ("1", "B2", f"{identity:.3f}", str(length))
    order = [best_ungapped_identity(QUERY, FAMILY[s])[0] for _, s, _, _ in ranked]
    assert order[:3] == sorted(order, reverse=True)[:3]  # the B clade first

    assert f"{len(FAMILY) + 1} sequences" in _section(text, "Multiple alignment")
    tree = _section(text, "Tree")
    newick = Path(outputs_of(outcome, events, "tree_fasttree")["tree"]).read_text().strip()
    assert f"```newick\n{newick}\n```" in tree
    assert "Nearest leaf to PSQ0001.1 along the tree: B2." in tree  # B2 by construction
    assert set(re.findall(r"[(,]([A-Z0-9.]+):", newick)) == {"PSQ0001.1", *FAMILY}
    assert Path(report["picture"]).read_text().startswith("<svg")

    assert "no step failed and the plan was not changed" in _section(text, "Run notes")
    provenance = _section(text, "Provenance")
    assert [f"S{i}" for i in range(1, 8)] == re.findall(r"^\| (S\d+) \|", provenance, re.M)
    assert provenance.count(" ✓ |") == 7


def test_blast_missing_at_plan_time_plans_the_biopython_search(tmp_path: Path) -> None:
    outcome, events = run_goal(tmp_path.resolve(), ())
    assert outcome.state == "succeeded", outcome.reason
    ready = next(e for e in events if isinstance(e, PlanReady))
    steps: list[dict[str, str]] = ready.plan["steps"]  # type: ignore[assignment]
    planned = [s["action"] for s in steps]
    assert "search_biopython" in planned
    assert not {"make_blast_db", "search_blast"} & set(planned)
    assert not any(isinstance(e, Replanned | StepFailed) for e in events)
    hit = outputs_of(outcome, events, "search_biopython")
    assert (hit["top_subject"], hit["backend"]) == ("B2", "biopython")
    text = Path(outputs_of(outcome, events, "write_report")["report"]).read_text()
    assert "Search backend: biopython" in text


def _call(step: dict[str, Any]) -> str:
    return f"{step['action']}({', '.join(step.get('args') or [])})"


def _assert_replanned_to_biopython(
    outcome: RunOutcome, events: list[Event]
) -> tuple[set[str], str]:
    """The run replanned once, after make_blast_db failed, to the Biopython search; the
    steps that succeeded before the replan were kept, not run again, and the report's
    run notes say so. Returns the actions kept and the run notes.

    Which steps those are depends on timing when steps run in parallel: the runner
    starts no new step once one has failed, waits for those in flight, then replans;
    so a step that had not started is in the new plan instead. Both load_sequences
    steps always are kept (one is make_blast_db's input, the other starts with it)."""
    assert outcome.state == "succeeded", outcome.reason
    failed = [e for e in events if isinstance(e, StepFailed)]
    assert [e.action for e in failed] == ["make_blast_db"]
    replans = [e for e in events if isinstance(e, Replanned)]
    assert len(replans) == 1
    assert replans[0].failed == (failed[0].step,)
    before = events.index(replans[0])
    kept = [e for e in events[:before] if isinstance(e, StepSucceeded)]
    assert [e.action for e in kept].count("load_sequences") == 2
    new_steps: list[dict[str, Any]] = replans[0].bound["steps"]  # type: ignore[assignment]
    new_calls = [_call(s) for s in new_steps]
    assert "search_biopython(gene, family, homologues)" in new_calls
    assert not {_call({"action": e.action, "args": e.args}) for e in kept} & set(new_calls)
    done = succeeded_actions(events)
    assert "search_biopython" in done
    assert "search_blast" not in done
    assert done.count("gc_content") == 1
    assert done.count("find_orfs") == 1
    text = Path(outputs_of(outcome, events, "write_report")["report"]).read_text()
    assert "Search backend: biopython" in text
    notes = _section(text, "Run notes")
    assert f"Step {failed[0].step} make_blast_db(family) failed" in notes
    assert f"Replanned (replan 1, {failed[0].step} failed (" in notes
    listed = notes.split("Kept, not run again:")[1].split("New steps")[0]
    for e in kept:
        assert f"{e.step} {_call({'action': e.action, 'args': e.args})}" in listed
    assert "search_biopython(gene, family, homologues)" in notes.split("New steps:")[1]
    return {e.action for e in kept}, notes


@pytest.mark.parametrize("max_parallel", [1, 8])
def test_blast_missing_at_run_time_replans_and_the_report_shows_it(
    tmp_path: Path, max_parallel: int
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    outcome, events = run_goal(
        tmp_path.resolve(), ("blastn",), server_path=str(empty), max_parallel=max_parallel
    )
    kept, notes = _assert_replanned_to_biopython(outcome, events)
    assert "makeblastdb is not installed" in notes
    if max_parallel == 1:  # one at a time, in the plan's order: s3 and s4 come before s5
        assert {"load_sequences", "gc_content", "find_orfs"} <= kept


def test_blast_failing_at_run_time_replans_and_keeps_the_other_tools(tmp_path: Path) -> None:
    _need(*ALL)
    path = f"{failing_blast_dir(tmp_path)}{os.pathsep}{os.environ['PATH']}"
    outcome, events = run_goal(tmp_path.resolve(), ALL, server_path=path)
    _, notes = _assert_replanned_to_biopython(outcome, events)
    assert "makeblastdb exited with status 3" in notes
    assert {"align_mafft", "tree_fasttree"} <= set(succeeded_actions(events))
