"""``plansmith init``: draft a domain, its bindings and a problem from the live tools of a
servers file (docs/own-servers.md); the drafting itself is ``_draft``."""

# The servers layer imports the MCP SDK (about 0.6 s of CPU): imported in the command.

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plansmith.cli._app import app, guarded
from plansmith.cli._check import ServersOpt, run_interruptible
from plansmith.cli._tools import StartTimeoutOpt
from plansmith.errors import InputError, Location, ServerStartError

if TYPE_CHECKING:
    from plansmith.binding import ToolSpec
    from plansmith.servers import ServerSurvey

__all__: list[str] = []

#: the files ``init`` writes in its directory
FILES = ("domain.yaml", "bindings.yaml", "problem.yaml")


@app.command("init")
@guarded
def init_command(
    servers: ServersOpt,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Directory to write the draft to.")
    ],
    tools: Annotated[
        list[str] | None,
        typer.Option(
            "--tools",
            help="Tools to draft actions for, as SERVER.TOOL (or SERVER.* for all of a"
            " server's), comma-separated or repeated (default: every tool of every server).",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Write into DIR even when it is not empty (the three"
            " files are replaced, nothing else is touched).",
        ),
    ] = False,
    start_timeout: StartTimeoutOpt = 30.0,
) -> None:
    """Draft a domain (domain.yaml), its bindings (bindings.yaml) and a problem
    (problem.yaml) from the tools the servers list: one action per tool, its tier from
    the tool's annotations, data-flow facts where an output and an input match by name
    and JSON type. A draft: every line marked "decide:" needs a person; `plansmith check`
    passes on it as written.

    Exit codes: 0 drafted; 2 bad servers file, unknown server or tool, DIR not empty; 5 a
    server did not start (the draft is made from the others, if any listed tools); 130
    interrupted (Ctrl-C)."""
    from plansmith.cli._draft import draft
    from plansmith.servers import load_servers, survey_servers

    _refuse_output(output, force)
    config = load_servers(servers)
    wanted = _parse_tools(tools or [])
    unknown = [s for s in wanted if s not in config.names]
    if unknown:
        raise InputError(
            f"--tools names no server {unknown[0]!r} of {servers}",
            location=Location(argument="--tools"),
            hint=f"the servers are: {', '.join(config.names)}",
        )
    names = list(wanted) or None
    found = run_interruptible(lambda: survey_servers(config, names, start_timeout=start_timeout))
    failed = [s for s in found if s.error is not None]
    for survey in failed:
        assert survey.error is not None
        sys.stderr.write(f"error: {_printed(str(survey.error))}\n")
    chosen = _choose(found, wanted)
    if not chosen:
        raise ServerStartError(
            "no tools to draft from: no server listed its tools",
            hint="see each server's error above; `plansmith tools -s FILE` shows them too",
        )
    made = draft(
        chosen,
        domain=output.resolve().name,
        servers_file=str(servers.resolve()),
        skipped=[s.name for s in failed],
    )
    output.mkdir(parents=True, exist_ok=True)
    for name, text in zip(
        FILES, (made.domain_yaml, made.bindings_yaml, made.problem_yaml), strict=True
    ):
        (output / name).write_text(text, encoding="utf-8")
    servers_used = sorted({server for server, _ in chosen})
    typer.echo(
        f"drafted {len(made.actions)} actions from {len(servers_used)} server(s)"
        f" ({', '.join(servers_used)}), {len(made.links)} data-flow link(s), in {output}"
    )
    typer.echo('decide what the lines marked "decide:" ask, then check it:')
    typer.echo(
        f"  plansmith check {output / 'domain.yaml'} {output / 'problem.yaml'}"
        f" -s {servers} -b {output / 'bindings.yaml'}"
    )
    if failed:
        raise typer.Exit(ServerStartError.exit_code)


def _printed(text: str) -> str:
    from plansmith.cli._printable import printable

    return printable(text, 4000, lines=20)


def _refuse_output(output: Path, force: bool) -> None:
    """An ``output`` that is a file, or a directory with anything in it (without
    ``--force``), is refused before any server starts."""
    where = Location(argument="--output")
    if output.exists() and not output.is_dir():
        raise InputError(
            f"{output} is not a directory", location=where, hint="name a new directory"
        )
    if output.is_dir() and not force and any(output.iterdir()):
        raise InputError(
            f"{output} is not empty",
            location=where,
            hint="name a new or empty directory, or pass --force to replace its "
            + ", ".join(FILES),
        )


def _parse_tools(values: list[str]) -> dict[str, set[str] | None]:
    """``--tools`` as server -> tool names (None: all of the server's), in order."""
    wanted: dict[str, set[str] | None] = {}
    for value in values:
        for item in (v.strip() for v in value.split(",")):
            if not item:
                continue
            server, dot, tool = item.partition(".")
            if not dot or not server or not tool:
                raise InputError(
                    f"--tools: {item!r} is not SERVER.TOOL",
                    location=Location(argument="--tools"),
                    hint="write SERVER.TOOL (files.read_file) or SERVER.* for every tool",
                )
            if tool == "*":
                wanted[server] = None
            elif server not in wanted or wanted[server] is not None:
                tools = wanted.setdefault(server, set())
                assert tools is not None
                tools.add(tool)
    return wanted


def _choose(
    found: tuple[ServerSurvey, ...], wanted: dict[str, set[str] | None]
) -> list[tuple[str, ToolSpec]]:
    """The tools to draft from, in the order the servers list them; a tool named in
    ``--tools`` that its (started) server does not list is an error naming its tools."""
    chosen: list[tuple[str, ToolSpec]] = []
    for survey in found:
        if survey.error is not None:
            continue
        names = wanted.get(survey.name)
        listed = {t.name for t in survey.tools}
        missing = sorted(names - listed) if names else []
        if missing:
            from plansmith.formats.yaml_nodes import did_you_mean

            close = did_you_mean(missing[0], sorted(listed))
            raise InputError(
                f"--tools: server {survey.name!r} has no tool {missing[0]!r}",
                location=Location(argument="--tools"),
                hint=(f"{close}; " if close else "")
                + f"its tools are: {', '.join(t.name for t in survey.tools)}",
            )
        chosen += [(survey.name, t) for t in survey.tools if names is None or t.name in names]
    return chosen
