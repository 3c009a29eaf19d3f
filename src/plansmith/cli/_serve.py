"""``plansmith serve``: the web plan controller (see docs/web.md)."""

# The web app imports FastAPI and the engine; import them only when serving.

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from plansmith.cli._app import app, guarded
from plansmith.cli._check import HomeOpt
from plansmith.cli._engine_options import ExecutorOpt, LeaseTtlOpt, LogOpt, SchedulerOpt
from plansmith.cli._listen import listen, url_of
from plansmith.errors import InputError

__all__: list[str] = []

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


@app.command("serve")
@guarded
def serve_command(
    *,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port.")] = 8765,
    servers: Annotated[
        Path | None, typer.Option("--servers", "-s", help="Default mcpServers JSON file.")
    ] = None,
    bindings: Annotated[
        Path | None, typer.Option("--bindings", "-b", help="Default bindings YAML file.")
    ] = None,
    domains: Annotated[
        Path | None,
        typer.Option(
            "--domains", help="A folder with a folder per domain (default: the shipped ones)."
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option("--token", envvar="PLANSMITH_TOKEN", help="Require this bearer token."),
    ] = None,
    home: HomeOpt = Path(".plansmith"),
    log: LogOpt = None,
    executor: ExecutorOpt = "local",
    scheduler: SchedulerOpt = None,
    lease_ttl: LeaseTtlOpt = 30.0,
) -> None:
    """Serve the web plan controller: see a plan, approve it, watch it run live.
    Listens on 127.0.0.1 unless --host says otherwise (then set --token)."""
    import uvicorn

    from plansmith.web import WebSettings, create_app
    from plansmith.web._server import StoppingServer

    for name, path in (("--servers", servers), ("--bindings", bindings)):
        if path is not None and not path.is_file():
            raise InputError(f"{name} {path}: no such file", hint="check the path")
    if domains is not None and not domains.is_dir():
        raise InputError(f"--domains {domains}: no such folder", hint="check the path")
    if host not in _LOOPBACK and not token:
        raise InputError(
            f"--host {host} exposes the API beyond this machine without a token",
            hint="add --token (or PLANSMITH_TOKEN), or serve on 127.0.0.1",
        )
    settings = WebSettings(
        home=home,
        domains=domains,
        servers=servers,
        bindings=bindings,
        token=token,
        host=host,
        log=log,
        executor=executor,
        scheduler=scheduler,
        lease_ttl=lease_ttl,
    )
    listening = listen(host, port)
    typer.echo(
        f"plansmith serve: {url_of(listening)} (runs in {home}; Ctrl-C stops)",
        err=True,
    )
    # On Ctrl-C the runs are stopped first, which ends their event streams (see
    # StoppingServer); other open connections get 3 s to end.
    config = uvicorn.Config(
        create_app(settings),
        log_level="warning",
        timeout_graceful_shutdown=3,
    )
    StoppingServer(config).run(sockets=[listening])
