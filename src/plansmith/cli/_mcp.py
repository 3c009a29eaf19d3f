"""``plansmith mcp``: serve plansmith itself as an MCP server (stdio or streamable HTTP)."""

# The MCP SDK costs about 0.6 s of CPU to import: imported only when the command runs.

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from plansmith.cli._app import app, guarded
from plansmith.cli._check import HomeOpt
from plansmith.cli._engine_options import (
    ExecutorOpt,
    LeaseTtlOpt,
    LogOpt,
    SchedulerOpt,
    ServerIdleOpt,
    keep_servers_warm,
    open_engine,
    shares_log,
)
from plansmith.cli._listen import listen, url_of
from plansmith.cli._mcp_hosts import absolute, absolute_source, host_config
from plansmith.errors import InputError, Location

__all__: list[str] = []

_KEYS = {
    "domains",
    "home",
    "max_runs",
    "max_parallel",
    "share_runs",
    "approve_tiers",
    "log",
    "executor",
    "scheduler",
    "lease_ttl",
    "server_idle",  # seconds a tool server no run uses is kept (--server-idle)
    "research_sources",  # folders of documents for the research tools (DIR or NAME=DIR)
    "detach_runs",  # each run started is driven by its own process (--detach-runs)
}


#: the config's counts (each an int of 1 or more) and what they count
_COUNTS = {"max_parallel": "steps in flight", "max_runs": "runs in flight"}


def _line_of(text: str, key: str) -> int | None:
    """The line of ``key``'s value in the config's ``text`` (a mapping: read already)."""
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if key_node.value == key:
                return int(value_node.start_mark.line) + 1
    return None


def _config(path: Path | None) -> dict[str, Any]:
    """The ``--config`` file (YAML or JSON): any of ``_KEYS``; a ``max_parallel`` or
    ``max_runs`` that is not an integer of 1 or more is refused at its line (as
    ``Engine.run`` refuses such a ``max_parallel``)."""
    if path is None:
        return {}
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except (OSError, yaml.YAMLError) as error:
        raise InputError(f"cannot read the config: {error}", location=Location(str(path))) from None
    if data is None:
        return {}
    if not isinstance(data, dict) or not set(data) <= _KEYS:
        extra = sorted(set(data) - _KEYS) if isinstance(data, dict) else []
        raise InputError(
            f"the config must be a mapping of {', '.join(sorted(_KEYS))}"
            + (f"; unknown: {', '.join(map(str, extra))}" if extra else ""),
            location=Location(str(path), 1),
        )
    for key, what in _COUNTS.items():
        value = data.get(key, 8)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(
                f"{key} must be an integer of 1 or more, not {value!r}",
                location=Location(str(path), _line_of(text, key)),
                hint=f"{key} is the number of {what} at most: 1 or more",
            )
    idle = data.get("server_idle", 0)
    if isinstance(idle, bool) or not isinstance(idle, int | float) or idle < 0:
        raise InputError(
            f"server_idle must be a number of seconds, 0 or more, not {idle!r}",
            location=Location(str(path), _line_of(text, "server_idle")),
            hint="server_idle is how long a tool server no run uses is kept",
        )
    return data


def _stdio_args(
    transport: str,
    *,
    home: Path,
    domains: list[Path] | None,
    config: Path | None,
    max_runs: int | None,
    share_runs: bool,
    research_source: list[str] | None,
    detach_runs: bool,
    log: str | None,
    executor: str,
    scheduler: str | None,
    lease_ttl: float,
    server_idle: float,
) -> list[str]:
    """The arguments (from ``mcp`` on) that start this server over stdio with the options
    given: its paths made absolute (a host starts it from a folder of its choosing), the
    home always named, the options left at their defaults left out."""
    if transport != "stdio":
        raise InputError(
            "--print-config writes a host's stdio entry, not one for --transport http",
            hint="drop --transport http; for HTTP, point the host at the URL that "
            "`plansmith mcp --transport http` prints",
        )
    args = ["mcp", "--transport", "stdio", "--home", absolute(home)]
    for folder in domains or ():
        args += ["--domains", absolute(folder)]
    if config is not None:  # its own paths are relative to it: they stay right
        args += ["--config", absolute(config)]
    if max_runs is not None:
        args += ["--max-runs", str(max_runs)]
    if share_runs:
        args.append("--share-runs")
    for spec in research_source or ():
        args += ["--research-source", absolute_source(spec)]
    if detach_runs:
        args.append("--detach-runs")
    if log is not None:  # a SQLite file, or a PostgreSQL URL as it is
        args += ["--log", log if shares_log(log) else absolute(log)]
    if executor != "local":
        args += ["--executor", executor]
    if scheduler is not None:
        args += ["--scheduler", scheduler]
    if lease_ttl != 30.0:
        args += ["--lease-ttl", str(lease_ttl)]
    if server_idle != 300.0:
        args += ["--server-idle", str(server_idle)]
    return args


@app.command("mcp")
@guarded
def mcp_command(
    transport: Annotated[
        str, typer.Option("--transport", help="stdio (for desktop hosts) or http.")
    ] = "stdio",
    host: Annotated[str, typer.Option("--host", help="HTTP: the address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="HTTP: the port.")] = 8765,
    domains: Annotated[
        list[Path] | None,
        typer.Option(
            "--domains",
            help="A folder of domain folders (repeatable); "
            "default: the shipped examples and domains.",
        ),
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="A YAML/JSON config file.")
    ] = None,
    home: HomeOpt = Path(".plansmith"),
    max_runs: Annotated[
        int | None, typer.Option("--max-runs", min=1, help="Runs in flight.")
    ] = None,
    share_runs: Annotated[
        bool,
        typer.Option(
            "--share-runs",
            help="Every client may read and cancel every run (HTTP clients without "
            "a session or token included).",
        ),
    ] = False,
    research_source: Annotated[
        list[str] | None,
        typer.Option(
            "--research-source",
            help="A folder of documents for start_research, DIR or NAME=DIR (repeatable).",
        ),
    ] = None,
    detach_runs: Annotated[
        bool,
        typer.Option(
            "--detach-runs",
            help="Drive each run that starts in its own background process "
            "(`plansmith resume`), so that it outlives this server: for clients that "
            "start a server per call (the MCP Inspector's CLI, per-call sessions).",
        ),
    ] = False,
    log: LogOpt = None,
    executor: ExecutorOpt = "local",
    scheduler: SchedulerOpt = None,
    lease_ttl: LeaseTtlOpt = 30.0,
    server_idle: ServerIdleOpt = 300.0,
    print_config: Annotated[
        str | None,
        typer.Option(
            "--print-config",
            metavar="HOST",
            help="Print the JSON that adds this server, with the options given here, to "
            "HOST's config (claude, vscode or cursor), and exit without serving.",
        ),
    ] = None,
) -> None:
    """Serve plansmith over MCP: list_domains, make_plan (goal, tasks or a request in
    natural language), approve_plan, start_run, get_run_status, get_run_report; with
    --research-source, also start_research, get_research_status, get_research_report."""
    if transport not in ("stdio", "http"):
        raise InputError(f"unknown transport {transport!r}", hint="use --transport stdio or http")
    if print_config is not None:  # what a host needs to start this command: no serving
        args = _stdio_args(
            transport,
            home=home,
            domains=domains,
            config=config,
            max_runs=max_runs,
            share_runs=share_runs,
            research_source=research_source,
            detach_runs=detach_runs,
            log=log,
            executor=executor,
            scheduler=scheduler,
            lease_ttl=lease_ttl,
            server_idle=server_idle,
        )
        typer.echo(json.dumps(host_config(print_config, args), indent=2))
        return
    from plansmith.domains.folders import load_folders, shipped_domain_dirs
    from plansmith.domains.made import shipped_made_domains
    from plansmith.domains.research.desk import (
        ResearchService,
        default_source_specs,
        excludes_for,
        sources_from_specs,
    )
    from plansmith.engine import RunTable
    from plansmith.execution import ApprovalPolicy
    from plansmith.mcp import FaceService, build_face_server, drive_with_cli, serve_face_http

    conf = _config(config)
    base = config.parent if config is not None else Path.cwd()
    dirs = domains or [base / d for d in conf.get("domains", [])] or shipped_domain_dirs()
    tiers = conf.get("approve_tiers")
    policy = ApprovalPolicy.parse(str(tiers)) if tiers else None  # before the log is opened
    log = log or (str(conf["log"]) if conf.get("log") else None)
    executor = str(conf.get("executor", executor)) if executor == "local" else executor
    engine = open_engine(
        base / str(conf["home"]) if conf.get("home") else home,  # --home: to the cwd
        log=log,
        executor=executor,
        scheduler=scheduler or (str(conf["scheduler"]) if conf.get("scheduler") else None),
        lease_ttl=float(conf.get("lease_ttl", lease_ttl)),
    )
    # the tool servers kept between runs and binding checks (not for dask's workers)
    warm = keep_servers_warm(engine, executor, float(conf.get("server_idle", server_idle)))
    table = RunTable(
        engine,
        max_live=max_runs or conf.get("max_runs", 8),  # an int of 1 or more: ``_config``
        max_parallel=conf.get("max_parallel", 8),  # an int of 1 or more: ``_config``
        stop_reason="the MCP server shut down",
    )
    detach = detach_runs or bool(conf.get("detach_runs", False))
    service = FaceService(
        table,
        load_folders(dirs),
        made=None if domains or conf.get("domains") else shipped_made_domains(),
        share_runs=share_runs or bool(conf.get("share_runs", False)),
        policy=policy,
        drive_elsewhere=drive_with_cli(engine.home, log) if detach else None,
    )
    listed = conf.get("research_sources") or []
    if isinstance(listed, dict):  # NAME: DIR
        listed = [f"{name}={folder}" for name, folder in listed.items()]
    specs = research_source or [str(s) for s in listed] or default_source_specs()
    research = None
    if specs:
        sources = sources_from_specs(specs, base=None if research_source else base)
        research = ResearchService(  # its runs in the face's one run table
            engine,
            sources,
            excludes=excludes_for(sources),
            share_runs=service.share_runs,
            table=service.table,
        )

    async def on_exit() -> None:  # the client left or the server stops (the face's runs
        # are cancelled already, and the research servers stopped: the lifespan did it)
        if warm is not None:  # then stop the tool servers the runs kept warm
            await warm.aclose()

    server = build_face_server(
        service,
        research=research,
        on_exit=on_exit,
        background=engine.keep_taking_over if shares_log(log) else None,
    )
    try:
        if transport == "http":
            listening = listen(host, port)
            typer.echo(
                f"plansmith mcp: {url_of(listening, '/mcp')} (streamable HTTP; Ctrl-C stops)",
                err=True,
            )
            serve_face_http(server, listening, host)
        else:
            server.run()
    finally:
        engine.close()
