"""``plansmith serve``: the web plan controller (see docs/web.md)."""

# The web app imports FastAPI and the engine; import them only when serving.

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

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
)
from plansmith.cli._listen import listen, url_of
from plansmith.errors import InputError

if TYPE_CHECKING:
    from plansmith.servers import WarmPools

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
    server_idle: ServerIdleOpt = 300.0,
    research_source: Annotated[
        list[str] | None,
        typer.Option(
            "--research-source",
            help="A folder research questions are answered over (NAME=DIR or DIR; "
            "repeat it); default: Debian's Python docs where installed.",
        ),
    ] = None,
    upload_keep_days: Annotated[
        float,
        typer.Option(
            "--upload-keep-days",
            min=0,
            help="Days an uploaded file is kept after a request last named it (0: always).",
        ),
    ] = 7.0,
) -> None:
    """Serve the web plan controller: see a plan, approve it, watch it run live.
    Listens on 127.0.0.1 unless --host says otherwise (then set --token)."""
    import uvicorn

    from plansmith.web import StoppingServer, WebSettings, create_app

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
        research_sources=tuple(research_source) if research_source else None,
        upload_keep_days=upload_keep_days,
    )
    listening = listen(host, port)
    typer.echo(
        f"plansmith serve: {url_of(listening)} (runs in {home}; Ctrl-C stops)",
        err=True,
    )
    engine = open_engine(home, log=log, executor=executor, scheduler=scheduler, lease_ttl=lease_ttl)
    # the tool servers kept between runs and binding checks (not for dask's workers)
    warm = keep_servers_warm(engine, executor, server_idle)
    web_app = create_app(engine, settings)
    if warm is not None:  # stopped once the app's runs have ended (its lifespan's end)
        web_app.router.lifespan_context = _then_close(web_app.router.lifespan_context, warm)
    # On Ctrl-C the runs are stopped first, which ends their event streams (see
    # StoppingServer); other open connections get 3 s to end.
    config = uvicorn.Config(
        web_app,
        log_level="warning",
        timeout_graceful_shutdown=3,
    )
    StoppingServer(config).run(sockets=[listening])


def _then_close(lifespan: Any, warm: WarmPools) -> Any:
    """``lifespan`` (the app's: at its end it stops the runs and closes the engine), then
    ``warm``'s servers stopped."""

    @asynccontextmanager
    async def then_close(app: Any) -> AsyncIterator[Any]:
        try:
            async with lifespan(app) as state:
                yield state
        finally:
            await warm.aclose()

    return then_close
