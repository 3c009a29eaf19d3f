"""The uvicorn server of ``plansmith serve``: it stops the app's runs as it begins to
shut down."""

from __future__ import annotations

import socket

import uvicorn
from fastapi import FastAPI

__all__ = ["StoppingServer"]


class StoppingServer(uvicorn.Server):
    """A uvicorn server over ``create_app``'s app that stops its runs first on shutdown.

    uvicorn waits for the open connections (up to ``timeout_graceful_shutdown``) before
    the app's lifespan ends, and a run's event stream stays open until the run finishes.
    So the runs are cancelled as the shutdown begins: each records ``RunCancelled`` and
    ``RunFinished``, their feeds close, and the open streams send them and end at once.
    """

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        assert isinstance(config.app, FastAPI)
        self._app = config.app

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await self._app.state.controller.stop()
        await super().shutdown(sockets)
