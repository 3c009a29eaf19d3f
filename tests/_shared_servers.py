"""What the engine, web and face tests share: the counter test MCP server
(``servers/_servers/counter_server.py``), the pieces of the small ``docs`` domain bound to
it, its problems, and the ``servers.json`` that starts it.

``tests/conftest.py`` puts this folder on ``sys.path``, so every test directory can
``import _shared_servers``.
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

COUNTER = Path(__file__).parent / "servers" / "_servers" / "counter_server.py"

PREDICATES = """\
domain: docs
types: {document: object}
predicates:
  exists: [document]
  summarised: [document]
  indexed: [document]
"""


def action(name: str, precondition: str, effect: str, tier: str, *, cost: int = 0) -> str:
    """One action of the ``docs`` domain over a document ``d``, as a YAML block."""
    return (
        f"  {name}:\n    parameters: {{d: document}}\n"
        f"    precondition: [{precondition}]\n    effect: [{effect}]\n"
        + (f"    cost: {cost}\n" if cost else "")
        + f"    tier: {tier}\n"
    )


SUMMARISE = action("summarise", "exists(d), not summarised(d)", "summarised(d)", "read")
INDEX = action("index", "summarised(d)", "indexed(d)", "write")


def docs_domain(*actions: str, predicates: str = "", rest: str = "") -> str:
    """The ``docs`` domain: more ``predicates`` lines, the ``actions`` (by default
    summarise then index), then ``rest`` (tasks, goals)."""
    body = "".join(actions or (SUMMARISE, INDEX))
    return PREDICATES + predicates + "actions:\n" + body + rest


def binding(name: str, tool: str, arguments: str, outputs: str = "", more: str = "") -> str:
    """One binding of an action to a tool of the counter server, as a YAML block."""
    block = f"  {name}:\n    server: counter\n    tool: {tool}\n    arguments: {arguments}\n"
    return block + (f"    outputs: {outputs}\n" if outputs else "") + more


SUMMARISE_BINDING = binding("summarise", "work", '{name: "${d}"}', '{done: "$.structured.done"}')
INDEX_BINDING = binding(
    "index", "echo", '{x: "${summarise(d).done}"}', '{value: "$.structured.value"}'
)


def _objects_init(n: int) -> tuple[list[str], str, str]:
    docs = [f"d{k}" for k in range(n)]
    objects = ", ".join(f"{d}: document" for d in docs)
    init = ", ".join(f"exists({d})" for d in docs)
    return docs, objects, init


def problem_text(n: int, goal: str | None = None) -> str:
    """Documents ``d0..d{n-1}`` that exist; the goal is ``goal`` or all of them indexed."""
    docs, objects, init = _objects_init(n)
    if goal is None:
        goal = ", ".join(f"indexed({d})" for d in docs)
    return f"problem: p{n}\ndomain: docs\nobjects: {{{objects}}}\ninit: [{init}]\ngoal: [{goal}]\n"


def htn_problem_text(n: int) -> str:
    """Documents ``d0..d{n-1}`` that exist, and the task to publish each."""
    docs, objects, init = _objects_init(n)
    tasks = ", ".join(f"publish({d})" for d in docs)
    return (
        f"problem: h{n}\ndomain: docs\nobjects: {{{objects}}}\ninit: [{init}]\ntasks: [{tasks}]\n"
    )


def servers_json(
    *, url: str | None = None, env: dict[str, str] | None = None, indent: int | None = None
) -> str:
    """A ``servers.json`` with one server, ``counter``: the one at ``url``, or the stdio
    counter server (with ``env`` when given)."""
    server: dict[str, object] = (
        {"url": url} if url else {"command": sys.executable, "args": [str(COUNTER)]}
    )
    if env is not None:
        server["env"] = env
    return json.dumps({"mcpServers": {"counter": server}}, indent=indent)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port
