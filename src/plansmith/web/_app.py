"""The app factory: ``create_app(engine_or_settings)``; all state hangs off ``app.state``."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import Depends, FastAPI
from fastapi.staticfiles import StaticFiles

from plansmith.engine import Engine
from plansmith.execution import is_postgres_url
from plansmith.web._api import api_router, metrics_router
from plansmith.web._controller import Controller
from plansmith.web._errors import install_error_handlers
from plansmith.web._hosts import LoopbackHostMiddleware
from plansmith.web._metrics import metrics_registry
from plansmith.web._pages import pages_router
from plansmith.web._same_origin import same_origin_only
from plansmith.web._settings import LOOPBACK_HOSTS, WebSettings

__all__ = ["create_app", "STATIC_DIR"]

STATIC_DIR = Path(__file__).parent / "static"


def create_app(
    engine_or_settings: Engine | WebSettings | None = None,
    settings: WebSettings | None = None,
) -> FastAPI:
    """A web app over an engine (or one made from ``settings.home``).

    On a loopback host it answers only to loopback host names (against DNS rebinding;
    any other ``Host`` is refused with the JSON error body, a 400). A state-changing
    request from another site is a 403, one not sent as JSON a 415 (``_same_origin``).
    Stopping the app cancels the runs it drives (they record it) and closes the log.
    """
    if isinstance(engine_or_settings, WebSettings):
        settings, engine = engine_or_settings, None
    else:
        engine = engine_or_settings
    settings = settings or WebSettings(home=engine.home if engine else Path(".plansmith"))
    controller = Controller(settings, engine)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await controller.start()  # the engine's run table, in the app's event loop
        controller.prune_uploads()  # those no request named for upload_keep_days
        # a log shared with other engines: take over their runs whose lease expired
        taking_over = (
            asyncio.create_task(controller.engine.keep_taking_over())
            if settings.log is not None and is_postgres_url(settings.log)
            else None
        )
        yield
        if taking_over is not None:
            taking_over.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await taking_over
        await controller.aclose()

    app = FastAPI(
        title="plansmith",
        summary="See a plan, approve it, and watch it run.",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,  # the Swagger and ReDoc pages load scripts from a CDN
        redoc_url=None,
        dependencies=[Depends(same_origin_only)],  # against CSRF: before every operation
    )
    app.state.controller = controller
    # GET /metrics: a registry of this app's own, read from its run log at each scrape
    app.state.metrics_registry = metrics_registry(lambda: controller.engine.log)
    if settings.host in LOOPBACK_HOSTS:
        app.add_middleware(LoopbackHostMiddleware)  # a foreign Host: a JSON 400
    install_error_handlers(app)
    app.include_router(api_router)
    app.include_router(metrics_router)
    app.include_router(pages_router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app
