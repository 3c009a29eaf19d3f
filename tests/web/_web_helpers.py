"""A domains folder for web tests: a document domain whose steps run on the counter test
MCP server (tests/servers/_servers/counter_server.py), and an app over it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from _shared_servers import (
    INDEX_BINDING,
    SUMMARISE_BINDING,
    binding,
    docs_domain,
    free_port,
    problem_text,
    servers_json,
)
from plansmith.web import WebSettings

DOMAIN = docs_domain()

BINDINGS = "bindings:\n" + SUMMARISE_BINDING + INDEX_BINDING


def write_domains(
    root: Path, sizes: tuple[int, ...] = (2, 3), bindings: str = BINDINGS, **env: str
) -> Path:
    """``root/domains/docs`` with problems ``problem-N`` for each size; returns the folder."""
    folder = root / "domains" / "docs"
    folder.mkdir(parents=True)
    (folder / "domain.yaml").write_text(DOMAIN)
    for n in sizes:
        (folder / f"problem-{n}.yaml").write_text(problem_text(n))
    (folder / "bindings.yaml").write_text(bindings)
    (folder / "servers.json").write_text(servers_json(env=env))
    return folder.parent


def asgi_client(app: Any) -> httpx.AsyncClient:
    """A client of ``app`` in this process (ASGI transport, no socket), on a loopback host."""
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=60)


def settings(root: Path, **more: object) -> WebSettings:
    return WebSettings(home=root / "home", domains=write_domains(root), **more)  # type: ignore[arg-type]


def sleepy_bindings(seconds: float) -> str:
    """Bindings whose ``summarise`` sleeps ``seconds`` on the counter server."""
    return f"""\
bindings:
  summarise:
    server: counter
    tool: sleep
    arguments: {{seconds: {seconds}}}
    outputs: {{done: "$.structured.slept"}}
  index:
    server: counter
    tool: echo
    arguments: {{x: "${{summarise(d).done}}"}}
    outputs: {{value: "$.structured.value"}}
"""


def gated_bindings(gate: Path) -> str:
    """Bindings whose ``summarise`` returns only once the file ``gate`` exists."""
    return (
        sleepy_bindings(0)
        .replace("tool: sleep", "tool: wait_for_file")
        .replace("{seconds: 0}", f'{{path: "{gate}"}}')
    )


SLOW_BINDINGS = (
    "bindings:\n"
    + binding("summarise", "sleep", "{seconds: 60}", "{}")
    + binding("index", "echo", '{x: "${d}"}', '{value: "$.structured.value"}')
)


def sse_events(text: str) -> list[dict[str, str]]:
    """The events of an SSE body: one dict of fields (id, event, data) per event."""
    out: list[dict[str, str]] = []
    for block in text.split("\n\n"):
        fields = dict(
            line.split(": ", 1) for line in block.splitlines() if line and not line.startswith(":")
        )
        if "data" in fields:
            out.append(fields)
    return out


class ServerThread:
    """``app`` served by uvicorn on 127.0.0.1 and a free port, in a thread of its own.

    Used as a context manager; ``url`` is the base URL. Leaving it stops the server
    (the app's lifespan cancels its runs and closes the log).
    """

    def __init__(self, app: object) -> None:
        import threading

        import uvicorn

        self.port: int = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")  # type: ignore[arg-type]
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ServerThread:
        import time

        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:  # a condition with a deadline, polled
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the web server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=60)
