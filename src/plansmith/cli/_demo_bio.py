"""``plansmith demo bio``: the full family report, planned and run on the real tools.

The demo writes the problem for the goal "full family report" with the tools
found on this machine, starts the ``plansmith-bio`` server and runs the plan
through the :class:`~plansmith.engine.Engine`. Every action is tier ``read``, so
the default approval policy approves the plan without asking. A live table shows
each step as its events arrive; at the end the demo prints where the report is
and a short summary (GC, ORFs, top hit, tree, which steps overlapped, replans).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table

from plansmith.domains import bio
from plansmith.engine import Engine, RunInputs
from plansmith.errors import ExecutionError, Location
from plansmith.execution import (
    Event,
    PlanReady,
    Replanned,
    RunOutcome,
    StepEvent,
    StepFailed,
    StepSucceeded,
)
from plansmith.model import JSONValue

__all__ = ["run_bio_demo", "DEFAULT_BIO_HOME", "overlapping_steps"]

DEFAULT_BIO_HOME = Path(".plansmith") / "demo-bio"
BLAST_PROGRAMS = ("makeblastdb", "blastn", "blastdbcmd")
_STYLE = {"running": "yellow", "succeeded": "green", "failed": "red", "retrying": "magenta"}


class _StepsView:
    """The steps of the plan in force, each with its state, updated from the events."""

    def __init__(self) -> None:
        self.rows: dict[str, list[str]] = {}
        self.events: list[Event] = []
        self.notes: list[str] = []

    def add_steps(self, bound: dict[str, JSONValue]) -> None:
        steps: Any = bound.get("steps") or []
        for s in steps:
            call = f"{s['action']}({', '.join(s.get('args') or [])})"
            self.rows[s["id"]] = [s["id"], call, s.get("tool", ""), "pending", ""]

    def __call__(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, Replanned):
            self.notes.append(f"replanned after {', '.join(event.failed)} failed")
            for row in self.rows.values():
                row[3] = {"failed": "given up", "pending": "replaced"}.get(row[3], row[3])
        if isinstance(event, PlanReady | Replanned):
            self.add_steps(event.bound)
        if isinstance(event, StepEvent) and event.step in self.rows:
            row = self.rows[event.step]
            state = {"StepStarted": "running", "StepSucceeded": "succeeded"}
            state |= {"StepFailed": "failed", "StepRetrying": "retrying"}
            row[3] = state.get(event.type, row[3])
            if isinstance(event, StepSucceeded | StepFailed):
                row[4] = f"{event.duration_ms:.0f}"

    def table(self) -> Table:
        table = Table(title="full family report: steps")
        for column in ("step", "action", "tool", "state", "ms"):
            table.add_column(column)
        for sid, call, tool, state, ms in self.rows.values():
            style = _STYLE.get(state, "")
            shown = f"[{style}]{state}[/]" if style else state
            table.add_row(escape(sid), escape(call), escape(tool), shown, ms)
        return table


def overlapping_steps(events: list[Event], actions: set[str]) -> list[tuple[str, str]]:
    """Pairs of steps (of ``actions``) whose start-to-end spans overlap in the event order."""
    start: dict[str, int] = {}
    end: dict[str, int] = {}
    name: dict[str, str] = {}
    for e in events:
        data = e.to_dict()
        if data.get("action") in actions and e.type in ("StepStarted", "StepSucceeded"):
            step = str(data["step"])
            name[step] = str(data["action"])
            (start if e.type == "StepStarted" else end)[step] = e.seq
    done = [s for s in start if s in end]
    return [
        (name[a], name[b])
        for i, a in enumerate(done)
        for b in done[i + 1 :]
        if start[a] < end[b] and start[b] < end[a]
    ]


def failing_blast_bin(home: Path) -> Path:
    """A directory of BLAST+ programs that fail when run (put first on the server's PATH)."""
    folder = home / "bin-failing-blast"
    folder.mkdir(parents=True, exist_ok=True)
    for program in BLAST_PROGRAMS:
        path = folder / program
        path.write_text(f"#!/bin/sh\necho '{program}: made to fail by the demo' >&2\nexit 3\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return folder


def prepare(home: Path, *, blast_fails: bool = False) -> RunInputs:
    """Problem (tools detected now) and server config for the full report, under ``home``."""
    inputs = {"gene": bio.DATA_DIR / "query.gb", "family": bio.DATA_DIR / "family.fasta"}
    problem = bio.write_problem(home / "problem.yaml", "full family report", inputs)
    config: Any = bio.server_config(inputs, home)
    if blast_fails:
        path = f"{failing_blast_bin(home)}{os.pathsep}{os.environ.get('PATH', '')}"
        config["mcpServers"]["bio"]["env"]["PATH"] = path
    (home / "servers.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    domain, bindings = bio.DOMAIN_DIR / "domain.yaml", bio.DOMAIN_DIR / "bindings.yaml"
    return RunInputs(domain, problem, home / "servers.json", bindings)


def _outputs_of(outcome: RunOutcome, view: _StepsView, action: str) -> dict[str, Any]:
    for e in view.events:
        data = e.to_dict()
        if e.type == "StepSucceeded" and data.get("action") == action:
            value = outcome.outputs.get(str(data["step"]))
            return value if isinstance(value, dict) else {}
    return {}


def _summary(console: Console, outcome: RunOutcome, view: _StepsView, report: Path) -> None:
    gc = _outputs_of(outcome, view, "gc_content")
    orfs = _outputs_of(outcome, view, "find_orfs")
    hit = _outputs_of(outcome, view, "search_blast") or _outputs_of(
        outcome, view, "search_biopython"
    )
    tree = _outputs_of(outcome, view, "tree_fasttree") or _outputs_of(outcome, view, "tree_nj")
    searches = {"make_blast_db", "search_blast", "search_biopython"}
    pairs = overlapping_steps(view.events, {"gc_content", "find_orfs", *searches})
    nearest = [ln for ln in report.read_text(encoding="utf-8").splitlines() if "Nearest" in ln]
    console.print(f"\n[bold]report:[/bold] {escape(str(report))}")
    console.print(f"  GC content of the gene: {float(gc.get('gc_percent', 0.0)):.2f} %")
    console.print(f"  ORFs of at least 150 nt: {orfs.get('count')}")
    console.print(
        escape(
            f"  top hit: {hit.get('top_subject')} at {hit.get('top_identity')} % identity "
            f"(search backend {hit.get('backend')})"
        )
    )
    console.print(escape(f"  tree ({tree.get('backend')}): {str(tree.get('newick', '')).strip()}"))
    console.print(escape(f"  {nearest[0] if nearest else 'the query is not in the tree'}"))
    console.print(escape(f"  picture: {report.with_suffix('.tree.svg')}"))
    shown = ", ".join(f"{a} ∥ {b}" for a, b in pairs) or "none"
    console.print(f"  overlapped in the run (start/end event order): {escape(shown)}")
    for note in view.notes or ["no step failed; no replan"]:
        console.print(f"  {escape(note)}")


def run_bio_demo(console: Console, out_dir: Path | None, *, blast_fails: bool = False) -> Path:
    """Run the full-report goal end to end; returns the report's path.

    ``out_dir`` is the engine's home (default ``.plansmith/demo-bio``): the run log
    ``runs.db`` and ``runs/RUN_ID/`` with every file the steps wrote. With
    ``blast_fails`` the BLAST+ programs the server finds fail when run, so the run
    replans to the Biopython search.
    """
    home = (out_dir or DEFAULT_BIO_HOME).resolve()
    home.mkdir(parents=True, exist_ok=True)
    inputs = prepare(home, blast_fails=blast_fails)
    tools = ", ".join(sorted(bio.detect_tools())) or "none (Biopython only)"
    console.rule("[bold]plansmith demo bio: full family report")
    console.print(f"programs found on PATH: {tools}")
    view = _StepsView()

    async def go(live: Live) -> RunOutcome:
        def on_event(event: Event) -> None:
            view(event)
            live.update(view.table())

        engine = Engine(home)
        try:
            return await engine.run(inputs, subscribe=on_event)
        finally:
            engine.close()

    with Live(view.table(), console=console, refresh_per_second=8) as live:
        outcome = anyio.run(go, live)
    if outcome.state != "succeeded":
        raise ExecutionError(
            f"run {outcome.run_id} {outcome.state}: {outcome.reason}",
            location=Location(str(home / "runs" / outcome.run_id)),
            hint="see servers.log in the run directory, or `plansmith show` for the events",
        )
    report = Path(str(_outputs_of(outcome, view, "write_report").get("report")))
    _summary(console, outcome, view, report)
    return report
