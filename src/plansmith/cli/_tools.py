"""``plansmith tools``: each server's tools (schemas, annotations, descriptions) and how
each server started (docs/own-servers.md)."""

# The servers layer imports the MCP SDK (about 0.6 s of CPU): imported in the command.

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from plansmith.cli._app import app, guarded
from plansmith.cli._check import ServersOpt, run_interruptible
from plansmith.errors import ServerStartError

if TYPE_CHECKING:
    from rich.console import Console

    from plansmith.binding import ToolSpec
    from plansmith.model import JSONValue
    from plansmith.servers import ServerSurvey

__all__: list[str] = []

#: the annotations of MCP's ``ToolAnnotations`` a table shows, as it names them
_HINTS = (
    ("readOnlyHint", "read-only"),
    ("destructiveHint", "destructive"),
    ("idempotentHint", "idempotent"),
    ("openWorldHint", "open-world"),
)
_DESCRIPTION = 200  # characters of a tool's description a table shows

#: ``--start-timeout`` of the commands that survey servers (``tools``, ``init``)
StartTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--start-timeout", min=0.1, help="Seconds each server has to start and list its tools."
    ),
]


@app.command("tools")
@guarded
def tools_command(
    servers: ServersOpt,
    names: Annotated[
        list[str] | None,
        typer.Argument(metavar="[SERVER]...", help="Servers to list (default: all)."),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="One JSON document on stdout: every server, how it started, and its"
            " tools with their whole schemas and annotations.",
        ),
    ] = False,
    start_timeout: StartTimeoutOpt = 30.0,
) -> None:
    """List each server's tools (input and output schemas, annotations, descriptions) and
    check every server: started, initialised, tool count, time to ready. A server that
    fails is reported with its error; the others are listed all the same.

    Exit codes: 0 every server listed its tools; 2 bad servers file or unknown server; 5 a
    server did not start, did not answer initialize, or lists no tools; 130 interrupted
    (Ctrl-C)."""
    from plansmith.servers import load_servers, survey_servers

    config = load_servers(servers)
    found = run_interruptible(
        lambda: survey_servers(config, names or None, start_timeout=start_timeout)
    )
    if as_json:
        document = {"servers": [_as_json(s) for s in found]}
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    else:
        _print(found)
    failed = [s for s in found if s.error is not None]
    if failed:
        if not as_json:
            for survey in failed:
                assert survey.error is not None
                sys.stderr.write(f"error: {_printed(str(survey.error))}\n")
        raise typer.Exit(ServerStartError.exit_code)


def _printed(text: str) -> str:
    from plansmith.cli._printable import printable

    return printable(text, 4000, lines=20)


def _as_json(survey: ServerSurvey) -> dict[str, JSONValue]:
    error = survey.error
    return {
        "name": survey.name,
        "transport": survey.transport,
        "ok": survey.ok,
        "stage": survey.stage,
        "started": survey.started,
        "initialised": survey.initialised,
        "seconds_to_ready": None if survey.seconds is None else round(survey.seconds, 3),
        "server": dict(survey.info),
        "tool_count": len(survey.tools),
        "tools": [_tool_json(t) for t in survey.tools],
        "error": None
        if error is None
        else {
            "type": type(error).__name__,
            "stage": survey.stage,
            "message": error.message,
            "hint": error.hint,
            "location": None if error.location is None else str(error.location),
        },
    }


def _tool_json(tool: ToolSpec) -> dict[str, JSONValue]:
    return {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "annotations": tool.annotations or {},
        "input_schema": tool.input_schema,
        "output_schema": tool.output_schema,
    }


def _print(found: tuple[ServerSurvey, ...]) -> None:
    from plansmith.cli._live import make_console

    console = make_console()
    for index, survey in enumerate(found):
        if index:
            console.print()
        _print_server(console, survey)


def _print_server(console: Console, survey: ServerSurvey) -> None:
    from rich.markup import escape
    from rich.table import Table

    info = dict(survey.info)
    said = " ".join(v for k, v in info.items() if k in ("name", "version"))
    about = f"{said}, protocol {info['protocol']}" if "protocol" in info else said
    checks = (
        f"started {_mark(survey.started)}  initialised {_mark(survey.initialised)}"
        f"  tools {len(survey.tools)}"
    )
    if survey.seconds is not None:
        checks += f"  ready in {survey.seconds:.2f} s"
    head = f"[bold]{escape(survey.name)}[/bold] ({survey.transport}"
    head += f"; {escape(about)})" if about else ")"
    console.print(f"{head}  {checks}")
    if survey.error is not None:
        console.print(f"  [red]failed at {survey.stage}:[/red] {escape(survey.error.message)}")
        return
    table = Table(show_lines=True)
    for column in ("tool", "annotations", "inputs (* required)", "outputs", "description"):
        table.add_column(column, overflow="fold")
    for tool in survey.tools:
        name = escape(tool.name) + (f"\n[dim]{escape(tool.title)}[/dim]" if tool.title else "")
        table.add_row(
            name,
            _annotations(tool.annotations),
            escape(_properties(tool.input_schema)),
            escape(_properties(tool.output_schema)) if tool.output_schema else "[dim]text[/dim]",
            escape(_printed_description(tool.description)),
        )
    console.print(table)


def _mark(done: bool) -> str:
    return "[green]yes[/green]" if done else "[red]no[/red]"


def _annotations(annotations: dict[str, JSONValue] | None) -> str:
    """The hints a tool gives, as words (``read-only``, ``not destructive``); ``none``."""
    if not annotations:
        return "[dim]none[/dim]"
    words = [
        word if annotations[key] else f"not {word}"
        for key, word in _HINTS
        if isinstance(annotations.get(key), bool)
    ]
    return ", ".join(words) or "[dim]none[/dim]"


def _properties(schema: dict[str, JSONValue] | None) -> str:
    """A schema's properties, one a line: ``name: type`` (``*`` when required)."""
    if not isinstance(schema, dict):
        return ""
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        kind = schema.get("type")
        return str(kind) if isinstance(kind, str) else "(any)"
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    lines = []
    for name, sub in properties.items():
        mark = "*" if name in needed else ""
        lines.append(f"{name}{mark}: {_type_name(sub)}")
    return "\n".join(lines)


def _type_name(schema: JSONValue) -> str:
    """A short name of a property's type: ``string``, ``array of object``, ``a | b``."""
    if not isinstance(schema, dict):
        return "any"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    if kind == "array":
        return f"array of {_type_name(schema.get('items'))}"
    if isinstance(kind, str):
        return kind
    for combinator in ("anyOf", "oneOf"):
        branches = schema.get(combinator)
        if isinstance(branches, list) and branches:
            return " | ".join(_type_name(b) for b in branches)
    if "$ref" in schema:
        return str(schema["$ref"]).rpartition("/")[2]
    return "any"


def _printed_description(text: str) -> str:
    from plansmith.cli._printable import printable

    return printable(" ".join(text.split()), _DESCRIPTION)
