"""A small domain with an ask step, bound to the counter test server, for the ask tests
of every face: summarise a document, ask a person whether to publish it as it is or
redact it first (``redact`` is planned only for that answer), then index it.

``tests/conftest.py`` puts this folder on ``sys.path`` (``import _ask_domain``).
"""

from __future__ import annotations

import json
from pathlib import Path

from _shared_servers import servers_json
from plansmith.engine import RunInputs

DOMAIN = """\
domain: review
types: {document: object}
predicates:
  exists: [document]
  summarised: [document]
  reviewed: [document]
  redaction_wanted: [document]
  indexed: [document]
actions:
  summarise:
    parameters: {d: document}
    precondition: [exists(d), not summarised(d)]
    effect: [summarised(d)]
    tier: read
  review:
    kind: ask
    parameters: {d: document}
    question: "Publish {d} as it is, or redact it first?"
    answer: {type: enum, choices: [as_is, redact]%(default)s}
    precondition: [summarised(d), not reviewed(d), not redaction_wanted(d)]
    answers:
      as_is: [reviewed(d)]
      redact: [redaction_wanted(d)]
  redact:
    parameters: {d: document}
    precondition: [redaction_wanted(d)]
    effect: [reviewed(d), not redaction_wanted(d)]
    tier: read
  index:
    parameters: {d: document}
    precondition: [summarised(d), reviewed(d)]
    effect: [indexed(d)]
    tier: read
"""

PROBLEM = """\
problem: review-one
domain: review
objects: {doc1: document}
init: [exists(doc1)]
goal: [indexed(doc1)]
"""

BINDINGS = """\
bindings:
  summarise:
    server: counter
    tool: work
    arguments: {name: "summarise-${d}"}
    outputs: {done: "$.structured.done"}
  review:
    server: plansmith
    tool: ask
    arguments:
      question: >-
        The summary of ${d} is ${summarise(d).done}:
        publish it as it is, or redact it first?
  redact:
    server: counter
    tool: work
    arguments: {name: "redact-${d}"}
    outputs: {done: "$.structured.done"}
  index:
    server: counter
    tool: work
    arguments: {name: "index-${d}-${review(d).answer}"}
    outputs: {done: "$.structured.done"}
"""


def write_ask_inputs(tmp: Path, *, default: str | None = "as_is") -> tuple[RunInputs, Path]:
    """The review domain's files in ``tmp`` (``default``: the answer's declared default,
    None for none), and the file the counter server logs each call of ``work`` in."""
    calls = tmp / "calls.jsonl"
    text = DOMAIN % {"default": f", default: {default}" if default else ""}
    (tmp / "domain.yaml").write_text(text)
    (tmp / "problem.yaml").write_text(PROBLEM)
    (tmp / "bindings.yaml").write_text(BINDINGS)
    (tmp / "servers.json").write_text(servers_json(env={"COUNTER_LOG": str(calls)}, indent=2))
    inputs = RunInputs(
        tmp / "domain.yaml", tmp / "problem.yaml", tmp / "servers.json", tmp / "bindings.yaml"
    )
    return inputs, calls


def work_calls(calls: Path) -> list[str]:
    """The ``name`` of each call of ``work`` the counter server logged, in order."""
    if not calls.exists():
        return []
    lines = calls.read_text().splitlines()
    return [json.loads(line)["args"]["name"] for line in lines if line.strip()]
