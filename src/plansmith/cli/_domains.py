"""``plansmith domains``: the catalog ``plansmith mcp`` and ``plansmith serve`` offer, and
whether each domain runs here (if not, why and what fixes it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from plansmith.cli._app import app, guarded
from plansmith.cli._live import make_console

__all__: list[str] = []


@app.command("domains")
@guarded
def domains_command(
    domains: Annotated[
        list[Path] | None,
        typer.Option(
            "--domains",
            help="A domain folder or a folder of them (repeatable); default: the shipped "
            "catalog (bio, code, lab's pcr, research, notes-to-git).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the domains the faces offer: each one's domain, actions, named goals, servers,
    and whether it runs here. A domain that cannot run says why and what fixes it (a
    missing program, venv, environment variable or file).

    Exit codes: 0 listed (ready or not); 2 bad input (a folder that does not load)."""
    from plansmith.domains.folders import load_folders, shipped_domain_dirs
    from plansmith.domains.made import shipped_made_domains

    folders = list(load_folders(domains or shipped_domain_dirs()).values())
    made = [] if domains else list(shipped_made_domains().values())
    if as_json:
        rows = [
            {
                "name": f.name,
                "domain": f.domain.name,
                "folder": str(f.path),
                "actions": len(f.domain.actions),
                "goals": [g.name for g in f.domain.goals],
                **f.readiness.to_dict(),
            }
            for f in folders
        ]
        rows += [
            {
                "name": m.name,
                "domain": m.maker,
                "kind": "made",
                "description": m.description,
                "scenarios": [p.name for p in m.problems],
                **m.readiness.to_dict(),
            }
            for m in made
        ]
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table("name", "domain", "actions", "goals", "runs here")
    for f in folders:
        r = f.readiness
        status = (
            "[green]ready[/green]"
            if r.ready
            else f"[red]no[/red]: {escape(r.reason)}\n  fix: {escape(r.fix)}"
        )
        status += "".join(f"\n  note: {escape(n)}" for n in r.notes)
        goals = ", ".join(g.name for g in f.domain.goals) or "-"
        table.add_row(f.name, f.domain.name, str(len(f.domain.actions)), goals, status)
    for m in made:
        r = m.readiness
        status = (
            "[green]ready[/green]"
            if r.ready
            else f"[red]no[/red]: {escape(r.reason)}\n  fix: {escape(r.fix)}"
        )
        scenarios = ", ".join(p.name for p in m.problems)
        table.add_row(m.name, f"{m.maker} (made by code)", "-", f"scenarios: {scenarios}", status)
    make_console().print(table)
