"""A domains folder for web tests: a document domain whose steps run on the counter test
MCP server (tests/servers/_servers/counter_server.py), and an app over it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from plansmith.web import WebSettings

COUNTER = Path(__file__).parent.parent / "servers" / "_servers" / "counter_server.py"

DOMAIN = """\
domain: docs
types: {document: object}
predicates:
  exists: [document]
  summarised: [document]
  indexed: [document]
actions:
  summarise:
    parameters: {d: document}
    precondition: [exists(d), not summarised(d)]
    effect: [summarised(d)]
    tier: read
  index:
    parameters: {d: document}
    precondition: [summarised(d)]
    effect: [indexed(d)]
    tier: write
"""

BINDINGS = """\
bindings:
  summarise:
    server: counter
    tool: work
    arguments: {name: "${d}"}
    outputs: {done: "$.structured.done"}
  index:
    server: counter
    tool: echo
    arguments: {x: "${summarise(d).done}"}
    outputs: {value: "$.structured.value"}
"""


def problem_text(n: int) -> str:
    docs = [f"d{k}" for k in range(n)]
    objects = ", ".join(f"{d}: document" for d in docs)
    init = ", ".join(f"exists({d})" for d in docs)
    goal = ", ".join(f"indexed({d})" for d in docs)
    return f"problem: p{n}\ndomain: docs\nobjects: {{{objects}}}\ninit: [{init}]\ngoal: [{goal}]\n"


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
    server = {"command": sys.executable, "args": [str(COUNTER)], "env": env}
    (folder / "servers.json").write_text(json.dumps({"mcpServers": {"counter": server}}))
    return folder.parent


def settings(root: Path, **more: object) -> WebSettings:
    return WebSettings(home=root / "home", domains=write_domains(root), **more)  # type: ignore[arg-type]


SLOW_BINDINGS = """\
bindings:
  summarise:
    server: counter
    tool: sleep
    arguments: {seconds: 60}
    outputs: {}
  index:
    server: counter
    tool: echo
    arguments: {x: "${d}"}
    outputs: {value: "$.structured.value"}
"""


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
        import socket
        import threading

        import uvicorn

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port: int = s.getsockname()[1]
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
