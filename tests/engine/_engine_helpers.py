"""Files for engine tests: a document domain, problems, servers and bindings in a tmp dir."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from plansmith.engine import RunInputs

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
  summarise_alt:
    parameters: {d: document}
    precondition: [exists(d), not summarised(d)]
    effect: [summarised(d)]
    cost: 5
    tier: read
  index:
    parameters: {d: document}
    precondition: [summarised(d)]
    effect: [indexed(d)]
    tier: write
tasks:
  publish:
    parameters: {d: document}
    methods:
      - name: usual
        subtasks: [summarise(d), index(d)]
      - name: fallback
        subtasks: [summarise_alt(d), index(d)]
"""

BINDINGS = """\
bindings:
  summarise:
    server: counter
    tool: work
    arguments: {name: "${d}"}
    outputs: {done: "$.structured.done"}
    retries: 2
    idempotent: true
  summarise_alt:
    server: counter
    tool: work
    arguments: {name: "alt-${d}"}
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


def htn_problem_text(n: int) -> str:
    docs = [f"d{k}" for k in range(n)]
    objects = ", ".join(f"{d}: document" for d in docs)
    init = ", ".join(f"exists({d})" for d in docs)
    tasks = ", ".join(f"publish({d})" for d in docs)
    return (
        f"problem: h{n}\ndomain: docs\nobjects: {{{objects}}}\ninit: [{init}]\ntasks: [{tasks}]\n"
    )


def write_inputs(
    tmp: Path, n: int = 2, bindings: str = BINDINGS, *, htn: bool = False, **env: str
) -> RunInputs:
    (tmp / "domain.yaml").write_text(DOMAIN)
    (tmp / "problem.yaml").write_text(htn_problem_text(n) if htn else problem_text(n))
    (tmp / "bindings.yaml").write_text(bindings)
    server = {"command": sys.executable, "args": [str(COUNTER)], "env": env}
    (tmp / "servers.json").write_text(json.dumps({"mcpServers": {"counter": server}}, indent=2))
    return RunInputs(
        tmp / "domain.yaml", tmp / "problem.yaml", tmp / "servers.json", tmp / "bindings.yaml"
    )
